# SPDX-License-Identifier: GPL-2.0-or-later
# bench/programs.sh's python program (and bench/python_frames.sh's json
# case): JSON dumps and loads of 100k records. Run as python3 -c "$(cat
# this)", so that what is timed is the interpreter's work, not a file's.
import json
n = 100000
d = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", str(i % 97)], "v": i * 0.5}
     for i in range(n)]
s = json.dumps(d)
e = json.loads(s)
assert e == d
print(len(s))
