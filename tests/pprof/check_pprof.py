# SPDX-License-Identifier: GPL-2.0-or-later
# Figures of a pprof file as `go tool pprof -raw` prints them, checked
# against what the test says they must be.
# Usage: check_pprof.py RAW_TEXT [TYPE=VALUE]... [--function NAME]...
#        [--build-id HEX] [--period N] [--types T,T,...]
# TYPE=VALUE: the sum of sample type TYPE over all samples is VALUE.
import sys

def parse(path):
    text = open(path).read().splitlines()
    types, samples, period, functions, mappings = [], [], None, set(), []
    section = None
    for line in text:
        if line.startswith("Period:"):
            period = int(line.split()[1])
        elif line == "Samples:":
            section = "samples"
        elif line == "Locations":
            section = "locations"
        elif line == "Mappings":
            section = "mappings"
        elif section == "samples" and not types:
            types = [t.split("/")[0] for t in line.split()]
        elif section == "samples" and ":" in line:
            values = line.split(":")[0].split()
            samples.append([int(v) for v in values])
        elif section == "locations" and line.strip():
            # "     1: 0x1234 M=1 fn file:line s=0", further lines
            # "             fn file:line s=0" for inlined functions
            words = line.split()
            if words[0].endswith(":"):
                words = words[3:]
            if words:
                functions.add(words[0])
        elif section == "mappings" and line.strip():
            mappings.append(line)
    return types, samples, period, functions, mappings

def main():
    types, samples, period, functions, mappings = parse(sys.argv[1])
    bad = []
    args = sys.argv[2:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--function":
            if args[i + 1] not in functions:
                bad.append("no function %s in %s" % (args[i + 1],
                                                     sorted(functions)))
            i += 2
            continue
        if a == "--build-id":
            if not any(args[i + 1] in m for m in mappings):
                bad.append("no mapping with build ID %s: %s" %
                           (args[i + 1], mappings))
            i += 2
            continue
        if a == "--period":
            if period != int(args[i + 1]):
                bad.append("period %r, want %s" % (period, args[i + 1]))
            i += 2
            continue
        if a == "--types":
            if types != args[i + 1].split(","):
                bad.append("sample types %s, want %s" % (types, args[i + 1]))
            i += 2
            continue
        t, want = a.split("=")
        if t not in types:
            bad.append("no sample type %s in %s" % (t, types))
        else:
            got = sum(s[types.index(t)] for s in samples)
            if got != int(want):
                bad.append("%s sums to %d, want %s" % (t, got, want))
        i += 1
    for b in bad:
        print("FAIL: " + b)
    sys.exit(1 if bad else 0)

main()
