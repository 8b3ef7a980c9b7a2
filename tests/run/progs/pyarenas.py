# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run/python_arena.sh: the list, [str(i)*3 for i in
# range(100000)], 5.6 MB of objects from pymalloc's arenas (8 of 1 MiB on
# Debian's python3.11), then what pymalloc says of its arenas
# (sys._debugmallocstats, read back from its stderr): "arenas TOTAL
# HIGHWATER", the arenas mapped since the start and the most live at
# once. With "wait": "ready", then the list made once a line is read on
# stdin, "built", then "done" after another line.
import os
import re
import sys
import tempfile


def arenas():
    """pymalloc's arenas: mapped since the start, most live at once."""
    with tempfile.TemporaryFile() as f:
        sys.stderr.flush()
        saved = os.dup(2)
        os.dup2(f.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        f.seek(0)
        text = f.read().decode()
    total = re.search(r"# arenas allocated total\s*=\s*(\d+)", text)
    high = re.search(r"# arenas highwater mark\s*=\s*(\d+)", text)
    return int(total.group(1)), int(high.group(1))


wait = len(sys.argv) > 1 and sys.argv[1] == "wait"
if wait:
    print("ready", flush=True)
    sys.stdin.readline()
before = arenas()[0]
x = [str(i) * 3 for i in range(100000)]
total, high = arenas()
print("built", len(x), flush=True)
print("arenas", total, high, total - before, flush=True)
if wait:
    sys.stdin.readline()
    print("done", flush=True)
