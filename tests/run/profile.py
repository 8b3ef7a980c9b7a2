#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Small queries on massif.out files for compare.sh and behaviour.sh.

  profile.py list DIR              the massif.* files of DIR, one a line,
                                   ordered by the pid that ends their name
                                   (the order the processes were created;
                                   pids that wrapped around pid_max sort
                                   after the others)
  profile.py field FILE KEY        value of header line KEY (desc, cmd,
                                   time_unit)
  profile.py check FILE EXPECT...  checks the file against each EXPECT:
      snapshots>=N                 at least N snapshots
      max-heap=N                   largest mem_heap_B of all snapshots is N
      max-extra=N                  largest mem_heap_extra_B is N
      max-depth=N                  deepest tree line is N levels below the
                                   root (inline chains count as levels)
      has-heap=N                   some snapshot has mem_heap_B=N
      peak                         there is exactly one heap_tree=peak
      no-peak                      there is no heap_tree=peak
    prints one line per failed check and exits 1 if any failed, 0 if all
    passed, 2 if the file cannot be read or is not a massif.out file.
"""
import os
import re
import sys


def parse(path):
    hdr, snaps = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"(desc|cmd|time_unit): ?(.*)", line)
            if m and not snaps:
                hdr[m.group(1)] = m.group(2)
                continue
            m = re.match(r"snapshot=(\d+)$", line)
            if m:
                snaps.append({"depth": 0})
                continue
            if not snaps or line.startswith("#"):
                continue
            m = re.match(r"(time|mem_heap_B|mem_heap_extra_B|mem_stacks_B|heap_tree)=(.*)", line)
            if m:
                snaps[-1][m.group(1)] = m.group(2)
                continue
            m = re.match(r"( *)n\d+: \d+ ", line)
            if m:
                snaps[-1]["depth"] = max(snaps[-1]["depth"], len(m.group(1)))
    if "cmd" not in hdr or "time_unit" not in hdr:
        raise ValueError("%s: not a massif.out file (no cmd: or time_unit: line)" % path)
    return hdr, snaps


def pid_of(name):
    m = re.search(r"(\d+)$", name)
    return int(m.group(1)) if m else -1


def pid_max():
    try:
        with open("/proc/sys/kernel/pid_max") as f:
            return int(f.read())
    except (OSError, ValueError):
        return 4194304


def cmd_list(d):
    # (each profile's per-site statistics, PROFILE.sites, are no profile)
    names = [n for n in os.listdir(d)
             if n.startswith("massif.") and not n.endswith(".sites")]
    names.sort(key=lambda n: (pid_of(n), n))
    # The pids of one run lie close together on the circle 0..pid_max; the
    # run starts after the largest gap between consecutive pids.
    pids = [pid_of(n) for n in names]
    if len(pids) > 1:
        gaps = [(pids[i] - pids[i - 1]) % pid_max() for i in range(len(pids))]
        start = max(range(len(pids)), key=lambda i: gaps[i])
        names = names[start:] + names[:start]
    for n in names:
        print(os.path.join(d, n))
    return 0


def cmd_field(path, key):
    try:
        hdr, _ = parse(path)
    except (OSError, ValueError) as e:
        print(e, file=sys.stderr)
        return 2
    print(hdr.get(key, ""))
    return 0


def cmd_check(path, expects):
    try:
        _, snaps = parse(path)
    except (OSError, ValueError) as e:
        print(e)
        return 2
    heaps = [int(s.get("mem_heap_B", "0")) for s in snaps]
    extras = [int(s.get("mem_heap_extra_B", "0")) for s in snaps]
    peaks = sum(1 for s in snaps if s.get("heap_tree") == "peak")
    bad = []
    for e in expects:
        key, _, val = e.partition("=")
        if key == "snapshots>":
            if len(snaps) < int(val):
                bad.append("%d snapshots, want at least %s" % (len(snaps), val))
        elif key == "max-heap":
            got = max(heaps, default=0)
            if got != int(val):
                bad.append("largest mem_heap_B is %d, want %s" % (got, val))
        elif key == "max-extra":
            got = max(extras, default=0)
            if got != int(val):
                bad.append("largest mem_heap_extra_B is %d, want %s" % (got, val))
        elif key == "max-depth":
            got = max((s["depth"] for s in snaps), default=0)
            if got != int(val):
                bad.append("deepest tree line at level %d, want %s" % (got, val))
        elif key == "has-heap":
            if int(val) not in heaps:
                bad.append("no snapshot with mem_heap_B=%s (have %s)" %
                           (val, " ".join(str(h) for h in heaps)))
        elif key == "peak":
            if peaks != 1:
                bad.append("%d peak snapshots, want 1" % peaks)
        elif key == "no-peak":
            if peaks != 0:
                bad.append("%d peak snapshots, want none" % peaks)
        else:
            print("profile.py: unknown check '%s'" % e, file=sys.stderr)
            return 2
    for b in bad:
        print("%s: %s" % (path, b))
    return 1 if bad else 0


def main(argv):
    if len(argv) >= 2 and argv[0] == "list":
        return cmd_list(argv[1])
    if len(argv) == 3 and argv[0] == "field":
        return cmd_field(argv[1], argv[2])
    if len(argv) >= 2 and argv[0] == "check":
        return cmd_check(argv[1], argv[2:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
