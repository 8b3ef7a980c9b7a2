#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
# Check an event file's stacks against the program's code: in every
# allocation's stack, each frame of the executable must be a call site, the
# first one must call the event's allocation function, and each further one
# must call the function holding the frame inside it. This catches a stack
# written from the wrong line of the source. Frames outside the executable
# (libc, ld.so; pc >= 0x4000000) end the check of a stack.
#
# usage: check-stacks.py EVENTS-FILE PROGRAM      (run by regen-golden.sh)
# Exit 0 when every stack checks, 1 otherwise.
import os
import re
import subprocess
import sys

LOAD_BASE = 0x108000    # Valgrind's load address of a PIE executable
LIBS_START = 0x4000000  # ld.so and everything after it

CALLEE = {'malloc': 'malloc', 'calloc': 'calloc', 'realloc': 'realloc',
          'memalign': 'memalign', 'posix_memalign': 'posix_memalign',
          'aligned_alloc': 'aligned_alloc', 'valloc': 'valloc',
          'new': 'operator new', 'new[]': 'operator new[]'}
N_NUMBERS = {'malloc': 2, 'calloc': 3, 'realloc': 3, 'memalign': 3,
             'posix_memalign': 3, 'aligned_alloc': 3, 'valloc': 2,
             'new': 2, 'new[]': 2, 'free': 1, 'delete': 1, 'delete[]': 1}


def disassemble(prog):
    """Call sites (return address - 1 -> callee) and sorted function starts."""
    text = subprocess.run(['objdump', '-d', '-C', '--no-show-raw-insn', prog],
                          capture_output=True, text=True, check=True).stdout
    calls, funcs, callee = {}, [], None
    for line in text.split('\n'):
        m = re.match(r'^([0-9a-f]+) <(.*)>:$', line)
        if m:
            funcs.append((int(m.group(1), 16), m.group(2)))
            callee = None
            continue
        m = re.match(r'^\s*([0-9a-f]+):\t(.*)$', line)
        if not m:
            continue
        if callee:
            calls[int(m.group(1), 16) - 1] = callee
        m2 = re.search(r'\bcall\s+[0-9a-f]+ <(.*)>', m.group(2))
        callee = m2.group(1) if m2 else ('?' if 'call' in m.group(2) else None)
    funcs.sort()
    return calls, funcs


def function_at(funcs, off):
    name = None
    for start, fn in funcs:
        if start <= off:
            name = fn
    return name


def read_lines(path, out):
    """(file, line number, words) of every statement, includes expanded."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            words = []
            for w in line.split():
                if w.startswith('#'):
                    break
                words.append(w)
            if not words or words[0] == 'sym':
                continue
            if words[0] == 'include':
                read_lines(os.path.join(os.path.dirname(path), words[1]), out)
                continue
            out.append((path, n, words))


class Checker:
    def __init__(self, events, prog):
        self.calls, self.funcs = disassemble(prog)
        self.stmts = []
        read_lines(events, self.stmts)
        self.stacks, self.env = {}, {}
        self.problems, self.checked = set(), 0

    def value(self, text):
        # The event files' numbers: C-like expressions of loop variables.
        return int(eval(text, {'__builtins__': {}}, dict(self.env)))

    def stack(self, items):
        pcs = []
        for it in items:
            pcs += self.stacks[it[1:]] if it.startswith('@') else [self.value(it)]
        return pcs

    def check(self, where, word, pcs):
        self.checked += 1
        for k in range(1, len(pcs)):
            if pcs[k] >= LIBS_START:
                break
            callee = self.calls.get(pcs[k] - LOAD_BASE)
            want = CALLEE[word] if k == 1 else \
                function_at(self.funcs, pcs[k - 1] - LOAD_BASE)
            if callee is None:
                self.problems.add('%s: frame %d, 0x%X, is no call site'
                                  % (where, k, pcs[k]))
            elif callee.replace('@plt', '') != want and \
                    not callee.startswith(want + '('):
                self.problems.add('%s: frame %d, 0x%X, calls %s, not %s'
                                  % (where, k, pcs[k], callee, want))

    def block_end(self, i):
        depth = 0
        for j in range(i + 1, len(self.stmts)):
            kw = self.stmts[j][2][0]
            if kw == 'repeat':
                depth += 1
            elif kw == 'end':
                if not depth:
                    return j
                depth -= 1
        raise SystemExit('%s:%d: repeat without end' % self.stmts[i][:2])

    def run(self, lo, hi):
        i = lo
        while i < hi:
            path, n, w = self.stmts[i]
            if w[0] == 'repeat':
                end = self.block_end(i)
                for v in range(self.value(w[1])):
                    self.env[w[2]] = v
                    self.run(i + 1, end)
                del self.env[w[2]]
                i = end
            elif w[0] == 'stack':
                self.stacks[w[1]] = self.stack(w[2:])
            elif w[0] in CALLEE:
                self.check('%s:%d' % (path, n), w[0],
                           self.stack(w[1 + N_NUMBERS[w[0]]:]))
            i += 1


def main():
    if len(sys.argv) != 3:
        sys.exit('usage: check-stacks.py EVENTS-FILE PROGRAM')
    c = Checker(sys.argv[1], sys.argv[2])
    c.run(0, len(c.stmts))
    for p in sorted(c.problems):
        print('check-stacks: ' + p, file=sys.stderr)
    return 1 if c.problems else 0


if __name__ == '__main__':
    sys.exit(main())
