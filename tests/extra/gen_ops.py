#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Writes the .ops workloads (format in ops.h) and their .opts files for the
# extra-bytes goldens. Deterministic: fixed seeds. The goldens themselves
# (.exp) come only from real Massif, through regen.sh.
import os
import random
import sys

OUT = os.path.dirname(os.path.abspath(__file__)) + "/cases"
MIB = 1 << 20


class Workload:
    def __init__(self):
        self.lines = []
        self.live = []  # slots holding a block
        self.next_slot = 0
        self.spare = []

    def slot(self):
        if self.spare:
            return self.spare.pop()
        self.next_slot += 1
        assert self.next_slot < 4096
        return self.next_slot - 1

    def alloc(self, line_fmt, *args):
        s = self.slot()
        self.lines.append(line_fmt.format(s, *args))
        self.live.append(s)
        return s

    def malloc(self, n):
        return self.alloc("m {} {}", n)

    def calloc(self, k, n):
        return self.alloc("c {} {} {}", k, n)

    def memalign(self, kind, a, n):
        if kind == "v":
            return self.alloc("v {} {}", n)
        return self.alloc(kind + " {} {} {}", a, n)

    def realloc(self, s, n):
        self.lines.append("r {} {}".format(s, n))
        if n == 0:
            self.live.remove(s)
            self.spare.append(s)

    def realloc_null(self, n):
        return self.alloc("r {} {}", n)

    def free(self, s):
        self.lines.append("f {}".format(s))
        self.live.remove(s)
        self.spare.append(s)

    def write(self, name, comment, opts):
        assert len(self.lines) <= 450, name  # stay below 1000 snapshots
        with open(os.path.join(OUT, name + ".ops"), "w") as f:
            f.write("# " + comment + "\n")
            f.write("# written by gen_ops.py; replayed under Massif by regen.sh\n")
            f.write("\n".join(self.lines) + "\n")
        with open(os.path.join(OUT, name + ".opts"), "w") as f:
            f.write("# golden from real Valgrind 3.19 Massif, see regen.sh\n")
            f.write(opts + "\n")


def rand_size(r, huge, medium=False):
    x = r.random()
    if medium:
        return r.randint(1000, 700000) if x > huge else r.randint(4 * MIB, 9 * MIB)
    if x < huge:
        return r.randint(4 * MIB - 64, 12 * MIB)
    if x < 0.50:
        return r.randint(0, 128)
    if x < 0.80:
        return r.randint(129, 4096)
    if x < 0.95:
        return r.randint(4097, 70000)
    return r.randint(70001, 600000)


ALIGNS = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]
ODD_ALIGNS = [24, 48, 100, 3000]  # memalign rounds these up


def random_case(name, seed, opts="", n=420, huge=0.04, medium=False,
                free_rate=0.38):
    r = random.Random(seed)
    w = Workload()

    def rand_size(r, huge):
        return globals()["rand_size"](r, huge, medium)

    while len(w.lines) < n:
        x = r.random()
        if w.live and x < free_rate:
            w.free(r.choice(w.live))
        elif w.live and x < free_rate + 0.14:
            s = r.choice(w.live)
            y = r.random()
            if y < 0.03:
                w.realloc(s, 0)
            elif y < 0.35:
                w.realloc(s, r.randint(0, 40))
            else:
                w.realloc(s, rand_size(r, huge))
        elif x < 0.54:
            w.realloc_null(rand_size(r, huge))
        elif x < 0.66:
            kind = r.choice("aapAv")
            if kind == "a" and r.random() < 0.2:
                a = r.choice(ODD_ALIGNS)
            else:
                a = r.choice(ALIGNS if kind == "a" else ALIGNS[1:])
            n_ = rand_size(r, huge)
            if kind == "A":
                n_ = (n_ + a - 1) // a * a  # C11 wants a multiple
            w.memalign(kind, a, n_)
        elif x < 0.70:
            w.calloc(r.randint(1, 20), r.randint(0, 300))
        else:
            w.malloc(rand_size(r, huge))
    w.write(name, "random workload, seed %d" % seed, opts)


def slop_case():
    w = Workload()
    for n in (1000, 2000):
        w.malloc(n)
    w.calloc(10, 30)
    for n in (12, 1, 0):
        w.malloc(n)
    # Unsplit reuse: the 32-byte hole is 16 bytes too big to split.
    p = w.malloc(32)
    w.malloc(8)
    w.free(p)
    w.malloc(16)
    # realloc: in place (shrink), within the slop, moving.
    s = w.malloc(100)
    w.realloc(s, 90)
    w.realloc(s, 110)
    w.realloc(s, 112)
    w.realloc(s, 113)
    w.realloc(s, 5000)
    w.realloc(s, 10)
    w.realloc(s, 0)
    w.realloc_null(77)
    h = w.malloc(1 << 30)
    w.free(h)
    w.malloc(1 << 30)
    w.write("slop", "the doc's slop table, unsplit reuse, realloc, huge", "")


def observed_case(name, prefix):
    w = Workload()
    if prefix:
        w.malloc(prefix)
    w.memalign("a", 64, 100)
    w.memalign("a", 4096, 10)
    w.memalign("p", 256, 300)
    w.memalign("A", 32, 64)
    w.memalign("v", 4096, 5)
    w.write(name, "the doc's aligned observations, in its order, after "
            "malloc(%d)" % prefix, "")


def probe_case():
    # 120 free blocks in list 96 (payload 10256) kept apart by live
    # separators; a request for list 96 that none of them can hold makes
    # the walk give up on its 100th probe and advance the head by one.
    w = Workload()
    w.malloc(64)
    holes = []
    for i in range(120):
        holes.append(w.malloc(10256))
        w.malloc(16)
    for h in holes:
        w.free(h)
    for i in range(5):
        w.malloc(12000)
    for i in range(20):
        w.malloc(10250)
    w.write("probe", "the 100-probe rule of a long free list", "")


def space_case():
    # Superblocks past the massif image at 0x58000000, holes reused.
    w = Workload()
    big = [w.malloc(40 * MIB) for _ in range(36)]
    w.malloc(100)
    for i in (3, 4, 20, 33):
        w.free(big[i])
    w.malloc(70 * MIB)
    w.memalign("a", 65536, 100)
    w.malloc(30 * MIB)
    w.malloc(20 * MIB)
    w.memalign("a", 1 << 20, 5000)
    for s in list(w.live):
        if s not in big:
            w.free(s)
    w.malloc(60 * MIB)
    w.write("space", "superblock placement around the massif image", "")


def bigalign_case(seed):
    r = random.Random(seed)
    w = Workload()
    while len(w.lines) < 300:
        x = r.random()
        if w.live and x < 0.35:
            w.free(r.choice(w.live))
        elif x < 0.65:
            a = r.choice([8192, 16384, 65536, 1 << 18, 1 << 20, 16 << 20])
            w.memalign("a", a, rand_size(r, 0.05))
        else:
            w.malloc(rand_size(r, 0.05))
    w.write("bigalign", "alignments above a page, seed %d" % seed, "")


def main():
    os.makedirs(OUT, exist_ok=True)
    slop_case()
    observed_case("observed", 0)
    # One 128-byte block first puts the arena where the doc's numbers
    # (slop 60, 486, 228, 16, 571) were seen.
    observed_case("observed-doc", 113)
    probe_case()
    space_case()
    bigalign_case(7)
    for i in range(1, 9):
        random_case("rand%d" % i, 1000 + i, huge=0.02 + 0.01 * (i % 4))
    for a in (32, 64, 256, 4096):
        random_case("rand-a%d" % a, 2000 + a, "--alignment=%d" % a)
    random_case("rand-admin16", 3016, "--heap-admin=16")
    random_case("rand-admin0", 3000, "--heap-admin=0")
    random_case("rand-small", 4000, n=440, huge=0.0)
    # Several superblocks at once: free lists mixing them, deferred release.
    random_case("rand-medium", 5000, n=440, huge=0.03, medium=True)
    random_case("rand-medium-a64", 5064, "--alignment=64", n=440, huge=0.03,
                medium=True)
    # Mostly frees and reallocs once warmed up: long free lists.
    random_case("rand-churn", 6000, n=440, huge=0.01, free_rate=0.45)
    return 0


if __name__ == "__main__":
    sys.exit(main())
