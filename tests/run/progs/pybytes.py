# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run/python.sh: 4,000 bytes objects of 1,000 bytes, held together.
# Each is one PyObject_Calloc(1, 1033) (33 bytes of header and a NUL, then
# the bytes), over pymalloc's 512 bytes: PyObject_Calloc calls calloc, and
# the block must be counted once, 4,132,000 bytes in all, not twice. Then
# they are freed (PyObject_Free calls free): none is unknown.
import sys

K = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
held = [bytes(1000) for _ in range(K)]
print(len(held), sum(map(len, held)))
del held
