# SPDX-License-Identifier: GPL-2.0-or-later
# The one library of helpers for the test scripts (bash) of every tests/
# directory, which source it after `set -u`:
#     . "$(dirname "$0")/../lib.sh" || exit 99
# Sourcing it only defines functions and sets fails=0, $here (the
# script's own directory, absolute) and $as_nobody; nothing runs. It
# needs nothing outside this tree.
#
# Arguments and verdicts
#  usage TEXT        "usage: TEXT" on stderr, exit 99 (the harness's error)
#  skip TEXT         "SKIP: TEXT", exit 77
#  harness TEXT      "HARNESS ERROR: TEXT", exit 99
#  take_opts WORD... $opts: the WORDs before the first "--"; $taken: how
#                    many to shift (that "--" included)
#  fail TEXT...      "FAIL: TEXT", counted in $fails
#  pass_or_fail [TEXT]  exit 1 if anything failed, else print TEXT, exit 0
# Tools and files
#  have TOOL         whether TOOL is installed (no output)
#  need TOOL...      exit 77 (SKIP) unless every TOOL is installed
#  need_file FILE WHAT  exit 77 (SKIP) unless FILE exists
#  need_exec FILE... exit 99 unless every FILE is an executable
#  find_lib SONAME   the x86-64 library SONAME's path (ldconfig); 1 if none
#  abspath FILE      FILE as an absolute path; a bare name is looked up in
#                    PATH (meson passes paths relative to the build dir)
#  no_aslr           $norandom: the command prefix that turns address-space
#                    randomisation off, empty where setarch cannot
#  show FILE         "--- FILE" and FILE's first 4000 bytes
# Running and waiting
#  scratch [--keep]  $tmp: a new directory, removed at exit (with --keep
#                    and HT_KEEP=DIR: DIR, emptied and kept); at exit every
#                    pid in $pids is SIGKILLed; no core files
#  expect_status STATUS CMD...  CMD exits STATUS; its stdout and stderr
#                    in $tmp/out and $tmp/err
#  one_error STATUS LINE CMD... CMD exits STATUS, says nothing on stdout
#                    and only LINE on stderr (LINE ending in "...": a line
#                    starting with what comes before)
#  wait_for FILE TEXT [SECONDS]  up to SECONDS (10) for TEXT in FILE
#  wait_gone PID SECONDS     up to SECONDS for PID to be gone
#  alive PID                 whether PID still runs
#  describe PID              its state, its threads' states, where it sleeps
#  start_target NAME STREAM TEXT PROG [ARGS...]
#  finish_target NAME [SECONDS]
#                    a program in the background, its stdin a FIFO held
#                    open on fd 9, its stdout, stderr and exit status in
#                    $tmp/NAME.* (see below)
#  peak_bytes FILE FUNCTION  bytes of a profile's peak held in FUNCTION
#  peak_heap FILE    mem_heap_B of a profile's peak snapshot (0: none)
#  sites_v1 FILE     a .sites file as version 1 spells it (each site's
#                    frames under it, every figure written), for awk
# Another user (root's cases; the checkout may be private, mode 700)
#  "${as_nobody[@]}" CMD...  CMD run as user and group 65534 (nobody),
#                    without root's capabilities even for CMD's own exec
#                    (an array, not a function: timeout and the like can
#                    run it)
#  nobody_copy PROG  $copy: a copy of PROG (after scratch) that nobody can
#                    reach and run; returns 1 when nobody cannot

fails=0
here=$(cd "$(dirname "$0")" && pwd) || exit 99
# "${as_nobody[@]}" CMD...: CMD as user and group 65534, no supplementary
# groups. setpriv itself execs with root's capabilities still in effect
# (they go at that exec), so a path nobody cannot reach would still run
# (and a guard probing it would pass); env makes the exec of CMD nobody's
# own, as it is for whatever CMD runs.
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups env --)

# usage TEXT: the script was called wrongly (by meson.build): "usage: TEXT"
# on stderr, exit 99.
usage() {
	echo "usage: $*" >&2
	exit 99
}

# skip TEXT: the case cannot run here: "SKIP: TEXT", exit 77.
skip() {
	echo "SKIP: $*"
	exit 77
}

# harness TEXT: the test itself went wrong, not heaptrace: exit 99.
harness() {
	echo "HARNESS ERROR: $*"
	exit 99
}

# take_opts WORD...: $opts holds the WORDs up to the first "--" (all of
# them if none), $taken how many words that is with the "--", for the
# caller's `shift "$taken"`.
take_opts() {
	opts=()
	taken=0
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		opts+=("$1")
		shift
		taken=$((taken + 1))
	done
	[ $# -eq 0 ] || taken=$((taken + 1))
}

# pass_or_fail [TEXT]: the script's end: exit 1 when $fails is not 0,
# else print TEXT (if given) and exit 0.
pass_or_fail() {
	[ "$fails" -eq 0 ] || exit 1
	[ $# -eq 0 ] || echo "$*"
	exit 0
}

# have TOOL: whether TOOL is installed, silently.
have() {
	command -v "$1" >/dev/null 2>&1
}

# need TOOL...: exit 77 (skip) unless every TOOL is installed.
need() {
	local tool
	for tool in "$@"; do
		have "$tool" || skip "$tool is not installed"
	done
}

# need_file FILE WHAT: exit 77 (skip) unless FILE (a WHAT) exists.
need_file() {
	[ -f "$1" ] || skip "$1 ($2) not found"
}

# ht_prog_case USAGE ARG...: a script's three arguments HEAPTRACE PROG
# CASE as $ht and $prog (absolute, executables) and $case_name; exit 99
# with USAGE when there are not three.
ht_prog_case() {
	local use=$1
	shift
	[ $# -eq 3 ] || usage "$use"
	ht=$(abspath "$1")
	prog=$(abspath "$2")
	case_name=$3
	need_exec "$ht" "$prog"
}

# need_exec FILE...: exit 99 unless every FILE is an executable (the
# harness passed a wrong path).
need_exec() {
	local f
	for f in "$@"; do
		if [ ! -x "$f" ]; then
			echo "$(basename "$0"): $f: not an executable" >&2
			exit 99
		fi
	done
}

# find_lib SONAME: the path of the x86-64 library SONAME as the dynamic
# linker's cache knows it; returns 1 (printing nothing) when there is none.
find_lib() {
	local lib
	lib=$( (ldconfig -p 2>/dev/null || /sbin/ldconfig -p) |
		awk -v so="$1" '$1 == so && /x86-64/ { print $NF; exit }')
	[ -n "$lib" ] && [ -f "$lib" ] && printf '%s\n' "$lib"
}

# abspath FILE: FILE as an absolute path: relative to the current
# directory when it has a slash, else found in PATH (as it is when not).
abspath() {
	case $1 in
	/*) printf '%s\n' "$1" ;;
	*/*) printf '%s\n' "$PWD/$1" ;;
	*) command -v "$1" || printf '%s\n' "$1" ;;
	esac
}

# fail TEXT...: a failure of the case, counted in $fails; the script goes
# on, and exits 1 at its end when $fails is not 0.
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

# no_aslr: $norandom, the words to put before a command so that it runs
# without address-space randomisation (setarch -R), or none where that
# cannot be turned off.
no_aslr() {
	norandom=()
	if setarch -R true 2>/dev/null; then
		norandom=(setarch -R)
	fi
}

# show FILE: FILE's first 4000 bytes, under its name.
show() {
	echo "--- $1"
	head -c 4000 "$1"
	echo
}

# scratch [--keep]: the case's directory $tmp (exit 99 if none can be
# made), and $pids, the processes to SIGKILL at exit (add to it). With
# --keep and HT_KEEP=DIR set, $tmp is DIR, emptied first and kept at exit
# (to look at the files of one case). No core files (ulimit -c 0).
scratch() {
	pids=()
	_scratch_keep=
	if [ "${1-}" = --keep ] && [ -n "${HT_KEEP-}" ]; then
		_scratch_keep=1
		tmp=$HT_KEEP
		rm -rf "$tmp" && mkdir -p "$tmp" || exit 99
	else
		tmp=$(mktemp -d) || exit 99
	fi
	trap _scratch_cleanup EXIT
	ulimit -c 0
}

# nobody_copy PROG: $copy, a copy of PROG in $tmp/nobody (mode 755, $tmp
# made traversable), for cases that run PROG as nobody: the build itself
# may lie in a directory only its owner can enter (mktemp -d, /root).
# Returns 1 when nobody still cannot run it (a TMPDIR out of its reach).
nobody_copy() {
	local dir=$tmp/nobody
	copy=$dir/$(basename "$1")
	if [ ! -d "$dir" ]; then
		chmod a+x "$tmp" && mkdir -m 755 "$dir" || exit 99
	fi
	cp "$1" "$copy" && chmod 755 "$copy" || exit 99
	"${as_nobody[@]}" test -x "$copy"
}

_scratch_cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null; done
	[ -n "$_scratch_keep" ] || rm -rf "$tmp"
}

# expect_status STATUS CMD...: run CMD (after scratch), its stdout and
# stderr in $tmp/out and $tmp/err; a failure (and status 1) unless it
# exits STATUS.
expect_status() {
	local want=$1 got
	shift
	"$@" >"$tmp/out" 2>"$tmp/err"
	got=$?
	[ "$got" -eq "$want" ] && return 0
	fail "$*: exit $got, want $want ($(head -c 300 "$tmp/err"))"
	return 1
}

# one_error STATUS LINE CMD...: CMD exits STATUS, writes nothing on stdout
# and exactly one line on stderr: LINE, or, when LINE ends with "...", a
# line that starts with the rest of LINE. Failures (and status 1)
# otherwise.
one_error() {
	local want_line=$2 got before=$fails
	expect_status "$1" "${@:3}"
	[ -s "$tmp/out" ] && fail "${*:3}: wrote to stdout"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] ||
		fail "${*:3}: stderr is not one line: $(cat "$tmp/err")"
	got=$(cat "$tmp/err")
	case $want_line in
	*...) [ "${got#"${want_line%...}"}" != "$got" ] ;;
	*) [ "$got" = "$want_line" ] ;;
	esac || fail "${*:3}: stderr '$got', want '$want_line'"
	[ "$fails" -eq "$before" ]
}

# wait_for FILE TEXT [SECONDS]: up to SECONDS (10) for TEXT (a grep
# pattern) to appear in FILE; returns 1 if it did not.
wait_for() {
	for _ in $(seq $((${3:-10} * 10))); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# wait_gone PID SECONDS: up to SECONDS for PID to be gone (no process
# left to signal); returns 1 if it is still there.
wait_gone() {
	for _ in $(seq $(($2 * 10))); do
		kill -0 "$1" 2>/dev/null || return 0
		sleep 0.1
	done
	! kill -0 "$1" 2>/dev/null
}

# alive PID: whether PID still runs (a zombie does not); prints "stopped"
# when it is stopped.
alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	case ${stat%% *} in
	Z | X) return 1 ;;
	T) echo stopped ;;
	esac
	return 0
}

# describe PID: its state, its threads' states, where it sleeps ("gone"
# when it is).
describe() {
	local stat t threads=''
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo "gone"; return; }
	stat=${stat##*) }
	for t in /proc/"$1"/task/*/stat; do
		t=$(cat "$t" 2>/dev/null) || continue
		t=${t##*) }
		threads+=${t%% *}
	done
	echo "state ${stat%% *}, threads $threads, in $(cat "/proc/$1/wchan" 2>/dev/null)"
}

# start_target NAME STREAM TEXT PROG [ARGS...]: run PROG ARGS in the
# background (after scratch), its stdin the FIFO $tmp/NAME.in, held open
# for writing on fd 9 (what is written there reaches it; end of file once
# fd 9 is closed), its stdout and stderr in $tmp/NAME.out and .err, its
# exit status (128+N: signal N) written to $tmp/NAME.status when it ends.
# Returns once TEXT appeared in $tmp/NAME.STREAM (STREAM: out or err),
# with the program's pid in $target and in $pids; exit 99 if it did not
# within 10 s. One target at a time (fd 9).
start_target() {
	local name=$1 stream=$2 text=$3
	shift 3
	mkfifo "$tmp/$name.in" || exit 99
	(
		"$@" <"$tmp/$name.in" >"$tmp/$name.out" 2>"$tmp/$name.err" &
		echo $! >"$tmp/$name.pid"
		wait $!
		echo $? >"$tmp/$name.status"
	) &
	exec 9>"$tmp/$name.in"
	if ! wait_for "$tmp/$name.$stream" "$text" ||
		! wait_for "$tmp/$name.pid" .; then
		echo "$name: the program did not start (no '$text' on std$stream within 10 s): $(head -c 500 "$tmp/$name.err")"
		exit 99
	fi
	target=$(cat "$tmp/$name.pid")
	pids+=("$target")
}

# finish_target NAME [SECONDS]: close fd 9 (end of file on the target's
# stdin) and wait up to SECONDS (10) for it to end; its exit status in
# $status. A target still there then is a failure (a stall, with its
# state), SIGKILLed, with $status empty and 1 returned.
finish_target() {
	local name=$1 secs=${2:-10} pid p kept=()
	pid=$(cat "$tmp/$name.pid")
	exec 9>&-
	status=
	for _ in $(seq $((secs * 10))); do
		[ -s "$tmp/$name.status" ] && break
		sleep 0.1
	done
	if [ ! -s "$tmp/$name.status" ]; then
		fail "$name: stall: the program did not end within $secs s of its end of file ($(describe "$pid")); SIGKILLed"
		kill -9 "$pid" 2>/dev/null
		return 1
	fi
	status=$(cat "$tmp/$name.status")
	# reaped: its pid is no longer one to kill at exit
	for p in ${pids[@]+"${pids[@]}"}; do
		[ "$p" = "$pid" ] || kept+=("$p")
	done
	pids=(${kept[@]+"${kept[@]}"})
}

# peak_bytes FILE FUNCTION: bytes of the peak snapshot's top-level
# entries (direct callers of the allocator) in FUNCTION, 0 when there are
# none; "no-peak" when the profile has no peak snapshot (or several).
peak_bytes() {
	python3 - "$1" "$2" <<'EOF'
import re, sys
path, fn = sys.argv[1], sys.argv[2]
text = open(path, errors="replace").read()
peak = [s for s in text.split("snapshot=")[1:] if "heap_tree=peak" in s]
if len(peak) != 1:
    print("no-peak")
    sys.exit(0)
total = 0
for line in peak[0].splitlines():
    m = re.match(r" n\d+: (\d+) 0x[0-9A-Fa-f]+: (\S+) ", line)
    if m and m.group(2) == fn:
        total += int(m.group(1))
print(total)
EOF
}

# peak_heap FILE: mem_heap_B of the peak snapshot of FILE, 0 when it has
# none.
peak_heap() {
	python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
for s in text.split("snapshot=")[1:]:
    if "heap_tree=peak" in s:
        print(re.search(r"mem_heap_B=(\d+)", s).group(1))
        break
else:
    print(0)
EOF
}

# sites_v1 FILE: the .sites file FILE on stdout as version 1 spells it
# (docs/sites-format.md): each site's frame: lines, innermost first, under
# its site: line, every figure written, 0 included; a version-1 file as
# it is. Made here rather than by heaptrace's reader so that the tests
# that read its lines check the writer on their own.
sites_v1() {
	awk '
	NR == 1 && $0 != "heaptrace-sites: 2" { v1 = 1 }
	v1 { print; next }
	NR == 1 { print "heaptrace-sites: 1"; next }
	/^frame: / {
		id = $2
		text = "frame: " substr($0, length("frame: " id " ") + 1)
		if (id in lines) # an inlined function: the same address
			text = lines[id] "\n" text
		lines[id] = text
		next
	}
	/^stack: / {
		id = $2
		caller = $3
		for (i = 4; i <= NF; i++) {
			up[id] = caller
			frame[id] = $i
			caller = id++
		}
		next
	}
	/^site: / {
		delete v
		for (i = 3; i <= NF; i++) {
			eq = index($i, "=")
			v[substr($i, 1, eq - 1)] = substr($i, eq + 1)
		}
		out = "site: " $2
		n = split("calls allocated peak peak_blocks leaked leaked_blocks temporary", k, " ")
		for (i = 1; i <= n; i++)
			out = out " " k[i] "=" (k[i] in v ? v[k[i]] : 0)
		n = split("definite indirect possible reachable", k, " ")
		for (i = 1; i <= n; i++)
			if (k[i] in v)
				out = out " " k[i] "=" v[k[i]]
		print out
		for (s = v["stack"]; s; s = up[s])
			print lines[frame[s]]
		next
	}
	{ print }' "$1"
}
