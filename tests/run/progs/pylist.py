# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run/python.sh: a list of 100,000 short strings, each a 56-byte
# object from pymalloc (49 bytes of header, 7 characters and a NUL): 5.6 MB
# in objects of up to 512 bytes, which malloc never sees, plus the list's
# 800 kB array (a PyMem_Realloc of more than 512 bytes: malloc inside).
# An argument sets another number of strings.
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 100000
data = ["s%06d" % i for i in range(n)]
print(len(data), sys.getallocatedblocks() > n)
