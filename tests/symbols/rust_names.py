#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Rust function names in heaptrace's profile against real Massif's.

Usage: rust_names.py HEAPTRACE PROGRAM.rs

Builds PROGRAM.rs twice with rustc (optimised, with debug info): with
rustc's default mangling (legacy for the program's own symbols) and with
v0; profiles each with valgrind --tool=massif and with heaptrace
--massif-compat=yes, both with --time-unit=B; and checks the function
names of the two profiles' trees:
  - no heaptrace label is still mangled ($LT$, ::h<hash>, _R..., _ZN...);
  - every Massif label that is a Rust symbol-table name (a path from the
    program's crate, std, core, alloc or hashbrown) is in heaptrace's
    profile, and every such heaptrace label is in Massif's.
Inlined frames (DWARF names, short) are not compared here.
Exit 77 (skip) without rustc or valgrind."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

LABEL = re.compile(r"\s*n\d+: \d+ 0x[0-9A-Fa-f]+: (.*?)( \((in )?[^()]*\))?$")
SYMTAB_NAME = re.compile(r"^<?(rustnames|std|core|alloc|hashbrown)::")
MANGLED = re.compile(r"\$LT\$|\$GT\$|\$u[0-9a-f]{2}\$|::h[0-9a-f]{16}\b"
                     r"|\b_R[0-9A-Za-z_]{4,}|\b_ZN[0-9]")


def names(path):
    """The function names of every tree line of a massif.out."""
    out = set()
    with open(path, errors="replace") as f:
        for line in f:
            m = LABEL.match(line.rstrip("\n"))
            if m:
                out.add(m.group(1))
    return out


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    heaptrace, source = os.path.abspath(sys.argv[1]), sys.argv[2]
    for tool in ("rustc", "valgrind"):
        if not shutil.which(tool):
            print(f"SKIP: {tool} is not installed")
            return SKIP
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for scheme, flags in (("default", []),
                              ("v0", ["-C", "symbol-mangling-version=v0"])):
            prog = os.path.join(tmp, "rustnames-" + scheme)
            build = subprocess.run(["rustc", "-C", "opt-level=2", "-g",
                                    "-o", prog, source] + flags,
                                   capture_output=True, text=True)
            if build.returncode != 0:
                print(f"SKIP: rustc cannot build {source} ({scheme}):")
                print(build.stderr[-2000:])
                return SKIP
            vg, ht = prog + ".massif", prog + ".heaptrace"
            subprocess.run(["valgrind", "--tool=massif", "--time-unit=B",
                            "--massif-out-file=" + vg, prog],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=True)
            subprocess.run([heaptrace, "run", "-q", "--massif-compat=yes",
                            "--time-unit=B", "--massif-out-file=" + ht,
                            "--", prog],
                           stdout=subprocess.DEVNULL, check=True)
            want, got = names(vg), names(ht)
            want_sym = {n for n in want if SYMTAB_NAME.match(n)}
            got_sym = {n for n in got if SYMTAB_NAME.match(n)}
            bad = sorted(n for n in got if MANGLED.search(n))
            for n in bad:
                print(f"FAIL ({scheme}): still mangled: {n}")
            for n in sorted(want_sym - got):
                print(f"FAIL ({scheme}): Massif's {n!r} is missing")
            for n in sorted(got_sym - want):
                print(f"FAIL ({scheme}): heaptrace's {n!r} is not Massif's")
            failures += len(bad) + len(want_sym - got) + len(got_sym - want)
            print(f"{scheme}: {len(want_sym)} Rust symbol names in Massif's "
                  f"trees, {len(want_sym & got)} in heaptrace's; "
                  f"{len(bad)} mangled")
            if not want_sym:
                print(f"FAIL ({scheme}): no Rust names in Massif's profile")
                failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
