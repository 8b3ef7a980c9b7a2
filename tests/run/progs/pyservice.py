# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run/python_frames.sh's attach case: a service that says "ready",
# then for each "alloc" line on stdin keeps one bytes(1500000) (a block of
# 1,500,033 bytes) made in serve() and says "done"; "bye" at end of file.
import sys

keep = []


def serve():
    return bytes(1500000)  # at serve


print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "alloc":
        keep.append(serve())  # at loop
        print("done", flush=True)
print("bye", flush=True)
