#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The program's own part of a --pages-as-heap=yes profile (pages_move.sh).

  pages_trim.py IN OUT SRC FN
  pages_trim.py --series IN SRC FN

Start-up differs between Massif and heaptrace (tests/run/README.md,
"pages-as-heap"), the program's own page calls do not. Keeps the
snapshots from the first whose tree has a frame in function FN (the
program's first page call), shifts their times and heaps so that the
first is at (0, 0), and reduces each tree (--detailed-freq=1
--threshold=0) to the bytes held by each function of the program's
source file SRC (`main` and `map_pages` left out: they hold everything),
as flat entries. OUT is a massif.out for massif-compare;
--series prints "time heap kind" lines instead. Exit 2 when FN is in no
snapshot."""
import re
import sys


def snapshots(path, src):
    hdr, snaps, cur = [], [], None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"snapshot=(\d+)", line)
            if m:
                cur = {"fns": {}}
                snaps.append(cur)
                continue
            if cur is None:
                if not line.startswith("#"):
                    hdr.append(line)
                continue
            m = re.match(r"(time|mem_heap_B|mem_heap_extra_B|mem_stacks_B|"
                         r"heap_tree)=(.*)", line)
            if m:
                cur[m.group(1)] = m.group(2)
                continue
            m = re.match(r" *n\d+: (\d+) 0x[0-9A-Fa-f]+: (\w+) \((.*):\d+\)$",
                         line)
            if m and m.group(3) == src and \
               m.group(2) not in ("main", "map_pages"):
                fn = m.group(2)
                cur["fns"][fn] = cur["fns"].get(fn, 0) + int(m.group(1))
    return hdr, snaps


def main(argv):
    series = argv[1] == "--series"
    if series:
        path, src, fn = argv[2], argv[3], argv[4]
    else:
        path, out, src, fn = argv[1], argv[2], argv[3], argv[4]
    hdr, snaps = snapshots(path, src)
    first = next((i for i, s in enumerate(snaps) if fn in s["fns"]), None)
    if first is None:
        print("%s: no snapshot holds %s" % (path, fn))
        return 2
    kept = snaps[first:]
    t0, h0 = int(kept[0]["time"]), int(kept[0]["mem_heap_B"])
    lines = [l for l in hdr if not l.startswith("desc:")]
    for i, s in enumerate(kept):
        t = int(s["time"]) - t0
        h = int(s["mem_heap_B"]) - h0
        if series:
            print(t, h, s.get("heap_tree"))
            continue
        lines += ["#-----------", "snapshot=%d" % i, "#-----------",
                  "time=%d" % t, "mem_heap_B=%d" % h,
                  "mem_heap_extra_B=%s" % s.get("mem_heap_extra_B", "0"),
                  "mem_stacks_B=%s" % s.get("mem_stacks_B", "0"),
                  "heap_tree=%s" % s.get("heap_tree")]
        if s.get("heap_tree") in ("detailed", "peak"):
            fns = sorted(s["fns"].items())
            lines.append("n%d: %d (the program's functions)" %
                         (len(fns), sum(b for _, b in fns)))
            lines += [" n0: %d 0x0: %s" % (b, f) for f, b in fns]
    if not series:
        with open(out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
