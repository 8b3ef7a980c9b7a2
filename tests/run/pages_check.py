#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks a --pages-as-heap=yes profile of progs/pages.c (pages.sh).

  pages_check.py FILE FN=LAST/MAX...

For each function FN, the bytes its tree entries hold in the last
snapshot must be LAST and the most they held in any snapshot MAX (every
snapshot must be detailed: --detailed-freq=1). FN=0/0 means FN never
appears. Prints one line per failed check; exit 0 all passed, 1 some
failed, 2 the file cannot be read."""
import re
import sys


def per_function(path):
    """One dict per snapshot: function name -> bytes of its entries."""
    snaps = []
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("snapshot="):
                snaps.append({})
                continue
            m = re.match(r" *n\d+: (\d+) 0x[0-9A-Fa-f]+: (\S+)", line)
            if m and snaps:
                fn = m.group(2)
                snaps[-1][fn] = snaps[-1].get(fn, 0) + int(m.group(1))
    return snaps


def main(argv):
    try:
        snaps = per_function(argv[1])
    except OSError as e:
        print(e)
        return 2
    if not snaps:
        print("%s: no snapshots" % argv[1])
        return 2
    bad = 0
    for want in argv[2:]:
        fn, vals = want.split("=")
        last, most = (int(v) for v in vals.split("/"))
        got_last = snaps[-1].get(fn, 0)
        got_max = max(s.get(fn, 0) for s in snaps)
        if (got_last, got_max) != (last, most):
            print("%s: %s holds %d B at the end, at most %d B; expected "
                  "%d B, %d B" % (argv[1], fn, got_last, got_max, last, most))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
