#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Python frames (docs/python.md "Python frames"): progs/pyframes.py's
# functions (nested calls, a class method, a generator, a lambda, a
# thread's function) each allocate one block of a size their own; run
# with PYTHONMALLOC=malloc under the backend given, the peak's entry of
# each block must hold the function's frame as "module.function
# (file:LINE)", LINE the one its "# at NAME" comment is on, with exactly
# the block's bytes (N + 33: bytes(N)'s header and NUL); the frames of
# its callers (middle's and <module>'s for leaf) below it with their
# lines (native frames between them before 3.11), the outermost frame a
# native one, and no _PyEval_EvalFrameDefault on the way. One case per
# interpreter:
#
#  debian    /usr/bin/python3.11 (Debian's, stripped; skip when absent)
#  3.8 ... 3.13  pyenv's version of that minor (skip when absent)
#  attach    progs/pyservice.py (Debian's python3.11, else python3)
#            attached once it runs, asked to allocate in serve(), then
#            detached: serve's block, 1,500,033 bytes, under its frame at
#            its line, <module>'s below; the service goes on after the
#            detach (allocates again, exits 0 with its own output)
#  off       --python-frames=no, then --massif-compat=yes: no Python
#            frame at all, where a default run has them (Debian's
#            python3.11, else python3)
#  V-pymalloc  V (not off) run without PYTHONMALLOC=malloc: pymalloc's
#            own entries probed (pyenv: PyObject_Malloc), the blocks and
#            frames the same (bytes(N) of a MiB is pymalloc's call into
#            malloc, inside the probed entry)
#
# usage: python_frames.sh HEAPTRACE BACKEND CASE
# Exit 0 pass, 1 fail, 77 skip, 99 usage.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "python_frames.sh HEAPTRACE BACKEND CASE"
heaptrace=$(abspath "$1") backend=$2 case=$3
pymalloc=malloc
case $case in
*-pymalloc) case=${case%-pymalloc} pymalloc= ;;
esac
script="$here/progs/pyframes.py"
need python3
scratch --keep

# The interpreter of CASE into $py, or skip.
pick_python() {
	local root=${PYENV_ROOT:-${HOME:-/root}/.pyenv} v
	case $case in
	debian|off|attach)
		py=/usr/bin/python3.11
		[ "$case" != debian ] && [ ! -x "$py" ] && py=$(command -v python3)
		;;
	3.*)
		py=
		for v in "$root"/versions/"$case".*/bin/python3; do
			[ -x "$v" ] && py=$v
		done
		;;
	*) usage "python_frames.sh: unknown case $case" ;;
	esac
	[ -n "$py" ] && [ -x "$py" ] || skip "no Python $case here"
}

# profile OPT...: run the script under heaptrace into $tmp/massif.out,
# then its print into $tmp/print.
profile() {
	rm -f "$tmp/massif.out"
	PYTHONMALLOC=$pymalloc "$heaptrace" run --backend="$backend" \
		--massif-out-file="$tmp/massif.out" "$@" -- "$py" "$script" \
		>"$tmp/out" 2>"$tmp/err"
	local st=$?
	if [ "$st" -ne 0 ] || [ "$(cat "$tmp/out")" != 5 ]; then
		fail "heaptrace run $*: exit $st, output '$(cat "$tmp/out")'"
		show "$tmp/err"
		return 1
	fi
	"$heaptrace" print "$tmp/massif.out" >"$tmp/print" 2>"$tmp/print.err" ||
		fail "heaptrace print failed: $(head -c 300 "$tmp/print.err")"
}

# check_frames MINOR: massif.out's peak entries, against the "# at NAME" lines,
# for a target of Python 3.MINOR (qualified names from 3.11).
check_frames() {
	python3 - "$tmp/massif.out" "$script" "$1" <<'PY' || fail "Python frames (above)"
import re, sys
text = open(sys.argv[1], errors="replace").read()
path, minor = sys.argv[2], int(sys.argv[3])
src = open(path).read().splitlines()
at = {m.group(1): i + 1 for i, l in enumerate(src)
      for m in [re.search(r"# at (\w+)$", l)] if m}

# The peak snapshot's tree in massif.out: (depth, bytes, label) per entry.
tree, inside = [], False
for l in text.splitlines():
    if l == "heap_tree=peak":
        inside = True
        continue
    m = re.match(r"^( *)n\d+: (\d+) (?:0x[0-9A-Fa-f]+: )?(.*)$", l)
    if inside and m:
        tree.append((len(m.group(1)), int(m.group(2)), m.group(3)))
    elif inside and tree:
        break
if not tree:
    print("no peak tree in the print output")
    sys.exit(1)

def label(fn, name):
    return "pyframes.%s (%s:%d)" % (fn, path, at[name])

def python_frame(x):
    return re.search(r"\.py:\d+\)$|\(<string>:\d+\)$", x) is not None

def chain(i):
    """Entry I's ancestors (the allocator's side), itself, then its
    callers: each the descendant holding all of its bytes."""
    up, k = [], i
    for j in range(i - 1, -1, -1):
        if tree[j][0] < tree[k][0]:
            up.insert(0, tree[j][2])
            k = j
    down, k = [], i
    for j in range(i + 1, len(tree)):
        if tree[j][0] <= tree[i][0]:
            break
        if tree[j][0] == tree[k][0] + 1 and tree[j][1] == tree[i][1]:
            down.append(tree[j][2])
            k = j
    return up, down

bad = 0
def want(fn, name, size, callers=()):
    global bad
    lab = label(fn, name)
    hits = [i for i, e in enumerate(tree) if e[2] == lab]
    if not hits:
        print("FAIL: no entry %r; Python frames of the script seen: %s" %
              (lab, sorted({e[2] for e in tree if "pyframes." in e[2]})))
        bad += 1
        return
    exact = [i for i in hits if tree[i][1] == size]
    if not exact:
        print("FAIL: %s holds %s bytes, want %d" %
              (lab, [tree[i][1] for i in hits], size))
        bad += 1
        return
    up, down = chain(exact[0])
    if any("_PyEval_EvalFrameDefault" in x for x in up + down):
        print("FAIL: %s: an evaluation frame left: %s" % (fn, up + down))
        bad += 1
    # Before 3.11 each Python call is a C call of its own: native frames
    # (function_code_fastcall...) come between the Python ones.
    pydown = [x for x in down if python_frame(x)]
    for k, (cf, cn) in enumerate(callers):
        if pydown[k:k + 1] != [label(cf, cn)]:
            print("FAIL: %s's caller %d: %s, want %s" %
                  (fn, k + 1, pydown[k:k + 1], label(cf, cn)))
            bad += 1
            return
    if not down or python_frame(down[-1]):
        print("FAIL: %s: no native frame below the Python ones: %s" %
              (fn, down))
        bad += 1

want("leaf", "leaf", 1000033, [("middle", "middle"), ("<module>", "module")])
want("Holder.method" if minor >= 11 else "method", "method", 1100033)
want("gen", "gen", 1200033)
want("<lambda>", "lambda", 1300033)
want("in_thread", "thread", 1400033)
sys.exit(1 if bad else 0)
PY
}

# no_frames WHAT: no Python frame in the print output.
no_frames() {
	if grep -qE '0xFFF5|: pyframes\.' "$tmp/print"; then
		fail "$1: Python frames: $(grep -m3 -E '0xFFF5|: pyframes\.' "$tmp/print")"
	fi
}

# check_attach: attach to progs/pyservice.py, one allocation, detach.
check_attach() {
	local svc="$here/progs/pyservice.py" h line
	line() { grep -n "# at $1\$" "$svc" | cut -d: -f1; }
	start_target svc out ready env PYTHONMALLOC=malloc "$py" "$svc"
	"$heaptrace" attach -v --backend="$backend" \
		--massif-out-file="$tmp/massif.out" "$target" 2>"$tmp/c.err" &
	h=$!
	pids+=("$h")
	wait_for "$tmp/c.err" "attached, " 30 ||
		fail "no attach: $(head -c 500 "$tmp/c.err")"
	echo alloc >&9
	wait_for "$tmp/svc.out" done 30 || fail "the service did not allocate"
	kill -INT "$h"
	wait "$h" || fail "heaptrace attach: exit $?: $(tail -c 500 "$tmp/c.err")"
	echo alloc >&9
	wait_for "$tmp/svc.out" "done" 10
	finish_target svc || return
	[ "$status" = 0 ] || fail "the service exited $status after the detach"
	[ "$(tr '\n' ' ' <"$tmp/svc.out")" = "ready done done bye " ] ||
		fail "the service's output: $(cat "$tmp/svc.out")"
	grep -qE "^ *n[0-9]+: 1500033 0x[0-9A-F]+: pyservice\.serve \($svc:$(line serve)\)\$" \
		"$tmp/massif.out" ||
		fail "no 1500033 B under pyservice.serve ($svc:$(line serve)): $(grep -m3 'pyservice\.' "$tmp/massif.out")"
	grep -qE "^ *n[0-9]+: 1500033 0x[0-9A-F]+: pyservice\.<module> \($svc:$(line loop)\)\$" \
		"$tmp/massif.out" ||
		fail "serve's caller is not <module> at $svc:$(line loop)"
}

fails=0
pick_python
minor=$("$py" -c 'import sys; print(sys.version_info[1])') ||
	harness "$py does not run"
if [ "$case" = attach ]; then
	check_attach
elif [ "$case" = off ]; then
	# By default the same run has them: the checks below can fail.
	profile && ! grep -q ': pyframes\.' "$tmp/print" &&
		fail "a default run shows no Python frame"
	profile --python-frames=no && no_frames "--python-frames=no"
	profile --massif-compat=yes && no_frames "--massif-compat=yes"
else
	profile && check_frames "$minor"
fi
pass_or_fail
