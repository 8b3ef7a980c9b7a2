#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The figures of the allocation sites named by function in one profile:
from its .sites file (docs/sites-format.md) each site's calls, allocated
and peak bytes, peak blocks and temporary blocks, and from the Massif file the bytes of the peak snapshot's
top-level tree entries (direct callers of the allocator) in that function.
Used by tests/run/accuracy.sh and bench/accuracy.sh.

usage: site_figures.py PROFILE FUNCTION...
prints one line per FUNCTION,
    FUNCTION calls=N allocated=N peak=N peak_blocks=N temporary=N tree=N sites=K
(figures summed over the K sites with a frame of FUNCTION; K = 0: all 0),
then `heap=N` (the .sites peak line's heap) and `sampling: TEXT` (the
.sites sampling line's rest, `none` without one). Exit 1 with one line on
stderr when a file is missing or has no peak."""
import re
import sys


def read_sites(path):
    """The header lines by key, and [(fields, frame functions)] per site
    (version 2's numbered frames and stacks expanded into each site)."""
    header, sites = {}, []
    names, stacks = {}, {}  # frame number: functions; stack: (caller, frame)
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            numbered = header.get("heaptrace-sites") == "2"
            if line.startswith("site: "):
                fields = dict(w.split("=", 1) for w in line.split()[2:] if "=" in w)
                functions = set()
                stack = int(fields.get("stack", 0))
                while stack:
                    stack, frame = stacks[stack]
                    functions |= names[frame]
                sites.append((fields, functions))
            elif line.startswith("frame: ") and numbered:
                words = line.split(" ", 3)
                names.setdefault(words[1], set()).add(words[3].split("\t", 1)[0])
            elif line.startswith("stack: "):
                words = line.split()[1:]
                stack, caller = int(words[0]), int(words[1])
                for frame in words[2:]:
                    stacks[stack] = (caller, frame)
                    caller, stack = stack, stack + 1
            elif line.startswith("frame: ") and sites:
                name = line.split(" ", 2)[2].split("\t", 1)[0]
                sites[-1][1].add(name)
            elif ": " in line and not sites:
                key, rest = line.split(": ", 1)
                header[key] = rest
    return header, sites


def peak_tree(path):
    """{function: bytes} of the peak snapshot's top-level tree entries."""
    text = open(path, errors="replace").read()
    peak = [s for s in text.split("snapshot=")[1:] if "heap_tree=peak" in s]
    if len(peak) != 1:
        return None
    tree = {}
    for line in peak[0].splitlines():
        m = re.match(r" n\d+: (\d+) 0x[0-9A-Fa-f]+: (\S+) ", line)
        if m:
            tree[m.group(2)] = tree.get(m.group(2), 0) + int(m.group(1))
    return tree


def main(argv):
    if len(argv) < 3:
        print("usage: site_figures.py PROFILE FUNCTION...", file=sys.stderr)
        return 2
    profile, functions = argv[1], argv[2:]
    try:
        header, sites = read_sites(profile + ".sites")
        tree = peak_tree(profile)
    except OSError as e:
        print("site_figures.py: %s" % e, file=sys.stderr)
        return 1
    if tree is None or "peak" not in header:
        print("site_figures.py: %s: no single peak snapshot" % profile, file=sys.stderr)
        return 1
    for fn in functions:
        mine = [fields for fields, frames in sites if fn in frames]
        keys = ("calls", "allocated", "peak", "peak_blocks", "temporary")
        sums = {k: sum(int(s.get(k, 0)) for s in mine) for k in keys}
        print("%s %s tree=%d sites=%d" % (
            fn, " ".join("%s=%d" % (k, sums[k]) for k in keys),
            tree.get(fn, 0), len(mine)))
    heap = re.search(r"\bheap=(\d+)", header["peak"])
    print("heap=%s" % (heap.group(1) if heap else "?"))
    print("sampling: %s" % header.get("sampling", "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
