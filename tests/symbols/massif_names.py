#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""How Massif prints symbol names: the oracle test_demangle.c's tables came
from. Not run by the test suite (it needs gcc and valgrind).

Usage: massif_names.py NAMES [HEAPTRACE]

NAMES holds one symbol name a line (nm's output of a Rust program, say).
Builds a C program with one function per name, the function given that
name as its symbol (an asm label) and allocating from it, runs it under
valgrind --tool=massif, and prints "NAME<TAB>LABEL" for every name: the
function name Massif printed for it. With HEAPTRACE, runs
`HEAPTRACE run --massif-compat=yes` on the same program too and prints
instead the names whose labels differ, then a count, exiting 1 if any do.
Names that are C++'s operator new or delete are Valgrind's allocation
functions: leave them out."""
import os
import re
import subprocess
import sys
import tempfile


def labels(profile, n):
    """Massif label of function I (source line 3*I+OFFSET) for each I."""
    out = {}
    pat = re.compile(r"\s*n\d+: \d+ 0x[0-9A-Fa-f]+: (.*) \(names\.c:(\d+)\)$")
    with open(profile, errors="replace") as f:
        for line in f:
            m = pat.match(line.rstrip("\n"))
            if m:
                i = (int(m.group(2)) - (n + 4)) // 3
                out[i] = m.group(1)
    return out


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    with open(sys.argv[1]) as f:
        names = list(dict.fromkeys(l.strip() for l in f if l.strip()))
    with tempfile.TemporaryDirectory() as tmp:
        src, prog = os.path.join(tmp, "names.c"), os.path.join(tmp, "names")
        with open(src, "w") as c:
            c.write("#include <stdlib.h>\nvoid *keep[%d];\n" % len(names))
            for i, s in enumerate(names):
                c.write('void f%d(void) __asm__("%s");\n' % (i, s))
            # Function I's malloc is on line 3*I + len(names) + 4.
            for i in range(len(names)):
                c.write("__attribute__((noinline, used)) void f%d(void) {\n"
                        "  keep[%d] = malloc(%d);\n}\n" % (i, i, 16 + i % 64))
            c.write("int main(void) {\n")
            c.write("".join("  f%d();\n" % i for i in range(len(names))))
            # A free after the peak: Massif's peak snapshot holds them all.
            c.write("  free(malloc(5000000));\n  return 0;\n}\n")
        subprocess.run(["gcc", "-O0", "-g", "-o", prog, src], check=True)
        vg = os.path.join(tmp, "massif.out")
        subprocess.run(["valgrind", "--tool=massif", "--threshold=0.0",
                        "--massif-out-file=" + vg, prog], check=True,
                       stderr=subprocess.DEVNULL)
        want = labels(vg, len(names))
        if len(sys.argv) == 2:
            for i, s in enumerate(names):
                print("%s\t%s" % (s, want.get(i, "")))
            return 0
        ht = os.path.join(tmp, "heaptrace.out")
        subprocess.run([sys.argv[2], "run", "-q", "--massif-compat=yes",
                        "--threshold=0.0", "--massif-out-file=" + ht, prog],
                       check=True)
        got = labels(ht, len(names))
        bad = [i for i in range(len(names)) if want.get(i) != got.get(i)]
        for i in bad:
            print("%s\n  Massif    %s\n  heaptrace %s"
                  % (names[i], want.get(i), got.get(i)))
        print("%d names, %d labelled alike" % (len(names),
                                                len(names) - len(bad)))
        return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
