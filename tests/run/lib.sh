# SPDX-License-Identifier: GPL-2.0-or-later
# Helpers shared by the test scripts of tests/run (bash), which source it
# after `set -u`:
#     . "$(dirname "$0")/lib.sh" || exit 99
# Sourcing it only defines functions and sets fails=0; nothing runs.
#
#  need TOOL...      exit 77 (SKIP) unless every TOOL is installed
#  abspath FILE      FILE as an absolute path; a bare name is looked up in
#                    PATH (meson passes paths relative to the build dir)
#  fail TEXT...      "FAIL: TEXT", counted in $fails
#  show FILE         "--- FILE" and FILE's first 4000 bytes
#  scratch [--keep]  $tmp: a new directory, removed at exit (with --keep
#                    and HT_KEEP=DIR: DIR, emptied and kept); at exit every
#                    pid in $pids is SIGKILLed; no core files
#  wait_for FILE TEXT        up to 10 s for TEXT to appear in FILE
#  alive PID                 whether PID still runs
#  describe PID              its state, its threads' states, where it sleeps
#  start_target NAME STREAM TEXT PROG [ARGS...]
#  finish_target NAME [SECONDS]
#                    a program in the background, its stdin a FIFO held
#                    open on fd 9, its stdout, stderr and exit status in
#                    $tmp/NAME.* (see below)
#  peak_bytes FILE FUNCTION  bytes of a profile's peak held in FUNCTION

fails=0

# need TOOL...: exit 77 (skip) unless every TOOL is installed.
need() {
	local tool
	for tool in "$@"; do
		if ! command -v "$tool" >/dev/null 2>&1; then
			echo "SKIP: $tool is not installed"
			exit 77
		fi
	done
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

_scratch_cleanup() {
	local p
	for p in ${pids[@]+"${pids[@]}"}; do kill -9 "$p" 2>/dev/null; done
	[ -n "$_scratch_keep" ] || rm -rf "$tmp"
}

# wait_for FILE TEXT: up to 10 s for TEXT (a grep pattern) to appear in
# FILE; returns 1 if it did not.
wait_for() {
	for _ in $(seq 100); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
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
