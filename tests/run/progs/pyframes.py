# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run/python_frames.sh: functions of every kind, each allocating one
# bytes object of a size its own (bytes(N): one block of N + 33 bytes,
# the object's header and its NUL), all kept to the end. Each "# at NAME"
# marks the line the test expects NAME's frame at.
import threading

keep = []


def leaf():
    return bytes(1000000)  # at leaf


def middle():
    return leaf()  # at middle


class Holder:
    def method(self):
        return bytes(1100000)  # at method


def gen():
    yield bytes(1200000)  # at gen


lam = lambda: bytes(1300000)  # at lambda


def in_thread():
    keep.append(bytes(1400000))  # at thread


keep.append(middle())  # at module
keep.append(Holder().method())
keep.append(next(gen()))
keep.append(lam())
t = threading.Thread(target=in_thread)
t.start()
t.join()
# heaptrace names a Python frame from its code object when it reads the
# record (inline backend), which on a busy machine can come after this
# program's exit has freed its functions (docs/python.md, "Python frames
# on the default (inline) backend"). Loading a library makes the tracer
# read every record made before it (it answers ld.so's change in ring
# order, the program waiting) while the functions still live.
import _lsprof  # noqa: E402,F401
print(len(keep))
