#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes massif.out files that stress an ms_print reimplementation:
   gen_massif.py DIR [COUNT [SEED]]
Huge and zero numbers, every time unit, many snapshots, deep and wide
trees with '%' and '#' in labels, peaks or none, snapshot numbers that
are not indexes, times that go back, comments and blank lines. The same
SEED gives the same files."""
import random
import sys

ROOT = "(heap allocation functions) malloc/new/new[], --alloc-fns, etc."
PAGES = "(page allocation syscalls) mmap/mremap/brk, --alloc-fns, etc."
LABELS = [
    "0x{a:X}: main (t.c:{l})",
    "0x{a:X}: f{l} (in /usr/lib/libx.so)",
    "0x{a:X}: ??? (in /lib/x86_64-linux-gnu/libc.so.6)",
    "0x{a:X}: operator new(unsigned long) (vg_replace_malloc.c:{l})",
    "0x{a:X}: g<100%s> (a%d.cc:{l})",
    "0x{a:X}: h#tag (c.c:{l})",
    "in {l} places, all below massif's threshold (1.00%)",
    "in 1 place, below massif's threshold (0.50%)",
]


def pick_big(r, scale):
    kind = r.random()
    if kind < 0.1:
        return 0
    if kind < 0.2:
        return r.randrange(1, 1000)
    return r.randrange(0, scale + 1)


def tree(r, total, depth, out, indent, budget):
    """Children of a node of TOTAL bytes; lines appended to OUT."""
    if depth == 0 or budget[0] <= 0:
        return 0
    n = r.choice([0, 0, 1, 1, 2, 3, 5, 40])
    n = min(n, budget[0])
    budget[0] -= n
    left = total
    kids = []
    for i in range(n):
        b = r.randrange(0, left + 1) if i + 1 < n else left
        if r.random() < 0.3:
            b = min(b, r.randrange(0, max(1, total // 50) + 1))
        left -= b
        kids.append(b)
    kids.sort(reverse=True)
    for b in kids:
        sub = []
        c = tree(r, b, depth - 1, sub, indent + 1, budget)
        label = r.choice(LABELS).format(a=r.randrange(0x400000, 1 << 40),
                                        l=r.randrange(1, 999))
        out.append("%sn%d: %d %s" % (" " * indent, c, b, label))
        out.extend(sub)
    return n


def one_file(r, idx):
    unit = r.choice(["i", "ms", "B"])
    scale = r.choice([10, 1000, 5000, 10 ** 6, 10 ** 9, 10 ** 12, 1 << 40,
                      1 << 60, (1 << 62) - 1])
    tscale = r.choice([0, 1, 999, 1000, 3599999, 3600000, 10 ** 7,
                       10 ** 10, 1 << 50, 1 << 63])
    nsnap = r.choice([1, 2, 3, 5, 10, 50, 100, 200, 1000])
    lines = []
    if r.random() < 0.1:
        lines.append("desc: --a=1")
        lines.append("desc: --b=2")
    else:
        lines.append("desc: " + r.choice(["(none)", "--time-unit=B",
                                          "--depth=5 --threshold=0.5"]))
    lines.append("cmd: " + r.choice(["./prog", "./prog a b", "/bin/x #1",
                                     "  ./spaced  args"]))
    lines.append("time_unit: " + unit)
    times = sorted(pick_big(r, tscale) for _ in range(nsnap))
    if r.random() < 0.05 and nsnap > 2:
        times[1], times[-2] = times[-2], times[1]   # going back
    if r.random() < 0.1:
        times[-1] = times[-2] if nsnap > 1 else times[-1]
    peak = r.randrange(nsnap) if r.random() < 0.7 else -1
    offset = 1 if r.random() < 0.05 else 0
    for i in range(nsnap):
        heap = pick_big(r, scale)
        extra = pick_big(r, scale // 8)
        stacks = pick_big(r, scale // 8) if r.random() < 0.3 else 0
        if r.random() < 0.05:
            heap = extra = stacks = 0
        kind = "peak" if i == peak else (
            "detailed" if r.random() < 0.3 else "empty")
        lines += ["#-----------", "snapshot=%d" % (i + offset),
                  "#-----------", "time=%d" % times[i],
                  "mem_heap_B=%d" % heap, "mem_heap_extra_B=%d" % extra,
                  "mem_stacks_B=%d" % stacks, "heap_tree=" + kind]
        if r.random() < 0.05:
            lines.append("")
        if kind != "empty":
            sub = []
            c = tree(r, heap, r.choice([1, 2, 4, 8, 30]), sub, 1,
                     [r.choice([3, 20, 200])])
            lines.append("n%d: %d %s" % (c, heap,
                                         r.choice([ROOT, ROOT, PAGES])))
            lines += sub
    return "\n".join(lines) + "\n"


def main():
    out = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    r = random.Random(seed)
    for i in range(count):
        with open("%s/gen%03d.out" % (out, i), "w") as f:
            f.write(one_file(r, i))


main()
