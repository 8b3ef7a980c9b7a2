#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Writes a large heaptrace profile for the HTML report's tests:
   gen_large.py PROFILE [SNAPSHOTS [SITES [SEED]]]
PROFILE (a massif.out file: SNAPSHOTS snapshots, every fifth detailed with
a tree of a few hundred entries over 80 functions, one peak) and
PROFILE.sites (SITES sites of 3 to 10 frames, a leak_check line). The
same SEED gives the same files."""
import random
import sys

ROOT = "(heap allocation functions) malloc/new/new[], --alloc-fns, etc."


def tree_lines(r, total, depth, indent, out, funcs):
    """The children of a node of TOTAL bytes, as Massif writes them."""
    if depth == 0 or total == 0:
        return
    n = r.choice([1, 2, 3, 4, 6]) if depth > 1 else r.choice([0, 1, 2])
    shares = sorted((r.random() for _ in range(n)), reverse=True)
    whole = sum(shares) or 1
    left = total
    for k, s in enumerate(shares):
        b = left if k == n - 1 else int(total * s / whole)
        left -= b
        f = r.choice(funcs)
        kids = []
        tree_lines(r, b, depth - 1, indent + " ", kids, funcs)
        count = sum(1 for line in kids if line.startswith(indent + " n"))
        out.append("%sn%d: %d 0x%X: %s (src/%s.c:%d)" % (
            indent, count, b, 0x400000 + r.randrange(1 << 20), f, f,
            r.randrange(1, 900)))
        out.extend(kids)


def massif(path, r, n_snaps, funcs):
    lines = ["desc: --time-unit=B", "cmd: ./big --work", "time_unit: B"]
    peak_at = n_snaps * 2 // 3
    t = 0
    peak_heap = 0
    for i in range(n_snaps):
        t += r.randrange(1000, 200000)
        heap = int(50e6 * (1 - abs(i - peak_at) / n_snaps)) + r.randrange(1 << 20)
        if i == peak_at:
            heap = 60 * 1000 * 1000
            peak_heap = heap
        lines += ["#-----------", "snapshot=%d" % i, "#-----------",
                  "time=%d" % t, "mem_heap_B=%d" % heap,
                  "mem_heap_extra_B=%d" % (heap // 50),
                  "mem_stacks_B=0"]
        if i == peak_at or i % 5 == 0:
            lines.append("heap_tree=" + ("peak" if i == peak_at else "detailed"))
            kids = []
            tree_lines(r, heap, 5, " ", kids, funcs)
            top = sum(1 for line in kids if line.startswith(" n"))
            lines.append("n%d: %d %s" % (top, heap, ROOT))
            lines += kids
        else:
            lines.append("heap_tree=empty")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return peak_at, t, peak_heap


def sites(path, r, n_sites, funcs, peak):
    out = ["heaptrace-sites: 1", "pid: 4242", "cmd: ./big --work",
           "time_unit: B",
           "peak: snapshot=%d time=%d heap=%d" % peak]
    body = []
    tot = [0] * 5
    for i in range(1, n_sites + 1):
        calls = r.randrange(1, 100000)
        alloc = calls * r.randrange(8, 4096)
        peak_b = r.choice([0, 0, r.randrange(1 << 22)])
        leaked = r.choice([0, 0, 0, r.randrange(1 << 16)])
        temp = r.randrange(calls)
        tot = [a + b for a, b in zip(tot, [calls, alloc, temp, leaked, leaked // 64])]
        body.append("site: %d calls=%d allocated=%d peak=%d leaked=%d "
                    "leaked_blocks=%d temporary=%d definite=%d indirect=0 "
                    "possible=0 reachable=0" % (i, calls, alloc, peak_b,
                                                leaked, leaked // 64, temp,
                                                leaked))
        body.append("frame: 0x48407B4 malloc\t(in /usr/lib/libc.so.6)")
        for _ in range(r.randrange(2, 9)):
            f = r.choice(funcs)
            body.append("frame: 0x%X %s\tsrc/%s.c:%d" % (
                0x400000 + r.randrange(1 << 20), f, f, r.randrange(1, 900)))
        body.append("frame: 0x401000 main\tsrc/main.c:12")
    out.append("totals: sites=%d calls=%d allocated=%d temporary=%d "
               "leaked=%d leaked_blocks=%d" % (n_sites, tot[0], tot[1],
                                               tot[2], tot[3], tot[4]))
    out.append("leak_check: full definite=%d/%d indirect=0/0 possible=0/0 "
               "reachable=0/0" % (tot[3], tot[4]))
    with open(path, "w") as f:
        f.write("\n".join(out + body) + "\n")


def main():
    path = sys.argv[1]
    n_snaps = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    n_sites = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    r = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    funcs = ["fn_%02d_%s" % (k, w) for k, w in
             enumerate(["parse", "alloc", "grow", "load", "cache", "index",
                        "decode", "copy"] * 10)]
    peak = massif(path, r, n_snaps, funcs)
    sites(path + ".sites", r, n_sites, funcs, peak)


main()
