#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# pymalloc's arenas counted as blocks where pymalloc is inlined into its
# callers (Debian's /usr/bin/python3.11; docs/python.md, "Arenas
# counted"). progs/pyarenas.py builds the issue's list (5.6 MB of small
# objects, 1.6 MB of malloc's without the arenas) and prints what pymalloc
# says of its arenas: mapped since the start, most live at once. One case
# per run:
#
#  run       heaptrace run --time-unit=B: the peak useful heap is at least
#            4 MB; the blocks of 1 MiB whose allocation function is the
#            arena frame (a synthetic frame, 0xFFF5...) are exactly the
#            arenas pymalloc mapped, and as many are live at the peak as
#            pymalloc's high-water mark (strace's count of 1 MiB mmaps
#            too, where strace is installed); the note is said once,
#            even with a python running another under
#            --trace-children=yes; the program's output is its own.
#  ptrace    the same under --backend=ptrace.
#  sampled   the same under --sampling-interval=64K (arenas are recorded
#            whole, never sampled).
#  attach    the program waits, heaptrace attaches, the list is built,
#            heaptrace detaches (SIGINT), the program ends normally with
#            its whole output; the profile's peak is at least 4 MB and
#            holds the arenas mapped while attached, 1 MiB each.
#  off       --python-alloc=no and --massif-compat=yes leave Python's
#            allocator alone: no arena block, a peak under 4 MB, no note.
#  shim      pyenv's shim python3 (a build whose PyObject_Malloc is
#            probed): its peak is at least 4 MB and its arenas are not
#            probed (they would count its objects twice).
#
# usage: python_arena.sh HEAPTRACE CASE
# Exit 0 pass, 1 fail, 77 skip (no inlined-pymalloc python3.11, no pyenv
# shim), 99 usage.
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "python_arena.sh HEAPTRACE CASE"
heaptrace=$(abspath "$1") case=$2
prog="$here/progs/pyarenas.py"
py=/usr/bin/python3.11
need python3
scratch --keep
note="inlines pymalloc: its arenas are counted as blocks"
mib=1048576

# A python3.11 that inlines pymalloc (heaptrace -v says so), else skip.
need_inlined() {
	need_file "$py" "Debian's python3.11"
	"$heaptrace" run -v --massif-out-file=/dev/null -- "$py" -c pass \
		</dev/null 2>&1 >/dev/null | grep -q "inlines pymalloc into its callers" ||
		skip "$py does not inline pymalloc"
}

# arena_sites FILE.sites: "CALLS PEAK_BLOCKS BAD" over the sites whose
# allocation function (frame 0) is synthetic and that allocated 1 MiB
# blocks: their calls and blocks live at the peak; BAD: sites named
# "pymalloc arena" with a block of another size.
arena_sites() {
	sites_v1 "$1" | python3 -c '
import re, sys
calls = blocks = bad = 0
site = None
for line in sys.stdin:
    if line.startswith("site: "):
        site = dict(re.findall(r"(\w+)=(\d+)", line))
        first = True
        continue
    if site is None or not line.startswith("frame: ") or not first:
        continue
    first = False
    addr, name = line.split()[1], line.split("\t")[0].split(" ", 2)[2]
    n, total = int(site.get("calls", 0)), int(site.get("allocated", 0))
    if not addr.upper().startswith("0XFFF5"):
        continue
    if n and total == n * '"$mib"':
        calls += n
        blocks += int(site.get("peak_blocks", 0))
    elif name == "pymalloc arena":
        bad += 1
print(calls, blocks, bad)
'
}

# run NAME OPTIONS...: heaptrace run --time-unit=B OPTIONS -- $py
# pyarenas.py, into $tmp/NAME.{out,stdout,err}; a failure unless both
# exit 0.
run() {
	local name=$1
	shift
	"$heaptrace" run --time-unit=B "$@" --massif-out-file="$tmp/$name.out" \
		-- "$py" "$prog" </dev/null >"$tmp/$name.stdout" 2>"$tmp/$name.err"
	local st=$?
	[ "$st" -eq 0 ] || { show "$tmp/$name.err"; fail "$name: heaptrace exited $st"; }
}

# check_counted NAME: the profile of a run from the start counts each of
# pymalloc's arenas as a block of 1 MiB, those live at the peak as many as
# pymalloc's high-water mark; the peak is at least 4 MB; one note.
check_counted() {
	local name=$1 heap calls blocks bad _w total high
	heap=$(peak_heap "$tmp/$name.out")
	read -r calls blocks bad < <(arena_sites "$tmp/$name.out.sites")
	read -r _w total high _ < <(grep '^arenas ' "$tmp/$name.stdout")
	echo "$name: peak $heap B; arena blocks $calls, $blocks live at the peak; pymalloc: $total arenas, high-water $high"
	grep -q '^built 100000$' "$tmp/$name.stdout" ||
		fail "$name: the program's output is not its own: $(cat "$tmp/$name.stdout")"
	[ "$heap" -ge 4000000 ] || fail "$name: peak $heap B < 4 MB"
	[ "$calls" = "$total" ] ||
		fail "$name: $calls arena blocks of 1 MiB, pymalloc mapped $total"
	[ "$blocks" = "$high" ] ||
		fail "$name: $blocks arena blocks live at the peak, pymalloc's high-water mark is $high"
	[ "$bad" = 0 ] || fail "$name: $bad arena sites with blocks not of 1 MiB"
	[ "$(grep -c "$note" "$tmp/$name.err")" = 1 ] ||
		fail "$name: the note is not said once: $(cat "$tmp/$name.err")"
	if have strace; then
		local n
		strace -f -qq -e trace=mmap -o "$tmp/$name.strace" "$py" "$prog" \
			</dev/null >/dev/null 2>&1
		n=$(grep -c "mmap(NULL, $mib," "$tmp/$name.strace")
		echo "$name: strace: $n mmaps of 1 MiB"
		[ "$n" = "$total" ] || fail "$name: strace saw $n arenas, pymalloc says $total"
	fi
}

case $case in
run)
	need_inlined
	run run
	check_counted run
	# a python running python: the note once all the same
	"$heaptrace" run --trace-children=yes --time-unit=B \
		--massif-out-file="$tmp/kids.%p" -- "$py" -c \
		"import subprocess; subprocess.run(['$py', '-c', 'x=[str(i)*3 for i in range(100000)]'])" \
		</dev/null >"$tmp/kids.stdout" 2>"$tmp/kids.err" ||
		fail "children: heaptrace exited $?"
	[ "$(grep -c "$note" "$tmp/kids.err")" = 1 ] ||
		fail "children: the note is not said once: $(cat "$tmp/kids.err")"
	;;
ptrace)
	need_inlined
	run ptrace --backend=ptrace
	check_counted ptrace
	;;
sampled)
	need_inlined
	run sampled --sampling-interval=65536
	check_counted sampled
	;;
attach)
	need_inlined
	start_target attachee out ready "$py" "$prog" wait
	: >"$tmp/ht.err"
	"$heaptrace" attach -v --time-unit=B --massif-out-file="$tmp/attach.out" \
		"$target" 2>>"$tmp/ht.err" &
	h=$!
	wait_for "$tmp/ht.err" "attached, " || fail "heaptrace did not attach"
	echo go >&9
	wait_for "$tmp/attachee.out" "arenas " 30 || fail "the target did not build its list"
	kill -INT $h
	wait $h || fail "heaptrace exited $?"
	echo end >&9
	finish_target attachee
	[ "$status" = 0 ] || fail "the target exited with $status: $(cat "$tmp/attachee.err")"
	[ "$(sed 's/ .*//' "$tmp/attachee.out" | tr '\n' ' ')" = "ready built arenas done " ] ||
		fail "the target's output is not its own: $(cat "$tmp/attachee.out")"
	[ -s "$tmp/attachee.err" ] && fail "the target wrote on stderr: $(cat "$tmp/attachee.err")"
	heap=$(peak_heap "$tmp/attach.out")
	read -r calls blocks bad < <(arena_sites "$tmp/attach.out.sites")
	read -r _w _t _h made < <(grep '^arenas ' "$tmp/attachee.out")
	echo "attach: peak $heap B; arena blocks $calls, $blocks live at the peak; pymalloc mapped $made while attached"
	[ "$heap" -ge 4000000 ] || fail "attach: peak $heap B < 4 MB"
	[ "$calls" = "$made" ] && [ "$blocks" = "$made" ] ||
		fail "attach: $calls arena blocks ($blocks at the peak), pymalloc mapped $made"
	[ "$bad" = 0 ] || fail "attach: $bad arena sites with blocks not of 1 MiB"
	;;
off)
	need_inlined
	for opt in --python-alloc=no --massif-compat=yes; do
		name=off${opt%%=*}
		run "$name" "$opt"
		heap=$(peak_heap "$tmp/$name.out")
		read -r calls blocks bad < <(arena_sites "$tmp/$name.out.sites")
		echo "$opt: peak $heap B, arena blocks $calls"
		[ "$heap" -lt 4000000 ] || fail "$opt: peak $heap B, not under 4 MB"
		[ "$calls" = 0 ] || fail "$opt: $calls arena blocks"
		grep -q "$note" "$tmp/$name.err" && fail "$opt: the note is said"
	done
	;;
shim)
	shim=${PYENV_ROOT:-${HOME:-/root}/.pyenv}/shims/python3
	[ -x "$shim" ] || skip "no pyenv shim python3"
	PYENV_VERSION=${PYENV_VERSION:-} "$heaptrace" run -v --time-unit=B \
		--massif-out-file="$tmp/shim.out" -- "$shim" -c \
		'x=[str(i)*3 for i in range(100000)]' \
		</dev/null >"$tmp/shim.stdout" 2>"$tmp/shim.err" ||
		fail "shim: heaptrace exited $?"
	heap=$(peak_heap "$tmp/shim.out")
	echo "shim: peak $heap B"
	grep -q ": PyObject_Malloc from " "$tmp/shim.err" ||
		skip "the shim's python3 is not one whose PyObject_Malloc heaptrace probes"
	[ "$heap" -ge 4000000 ] || fail "shim: peak $heap B < 4 MB"
	grep -q "pymalloc's arenas from" "$tmp/shim.err" &&
		fail "shim: its arenas are probed as well as PyObject_Malloc: counted twice"
	read -r calls _ _ < <(arena_sites "$tmp/shim.out.sites")
	[ "$calls" = 0 ] || fail "shim: $calls arena blocks"
	;;
*)
	echo "python_arena.sh: unknown case $case" >&2
	exit 99
	;;
esac
pass_or_fail PASS
