#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# End-to-end checks of the heaptrace binary's command line: exit statuses,
# exactly one "heaptrace: " line on stderr for each mistake, --help listing
# every option, --version.
# Usage: cli.sh HEAPTRACE VERSION
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "cli.sh HEAPTRACE VERSION"
ht=$1
version=$2
scratch

# expect_error STATUS MESSAGE ARGS...: heaptrace ARGS exits STATUS, prints
# nothing on stdout and exactly "heaptrace: MESSAGE" on stderr.
expect_error() {
	one_error "$1" "heaptrace: $2" "$ht" "${@:3}"
}

expect_error 2 "unknown option '--foo' (see heaptrace --help)" \
	run --foo /bin/true
expect_error 2 "unknown option '--foo=1' (see heaptrace --help)" \
	attach --foo=1 1
expect_error 2 "--depth: must be an integer from 1 to 200, not '500'" \
	run --depth=500 /bin/true
expect_error 2 "--heap: must be 'yes' or 'no', not 'true'" \
	run --heap=true /bin/true
expect_error 2 "--time-unit: must be 'i', 'ms' or 'B', not 'b'" \
	run --time-unit=b /bin/true
expect_error 2 "--alignment: must be a power of two from 16 to 4096, not '48'" \
	run --alignment=48 /bin/true
expect_error 2 "run: missing the program to run (heaptrace run [options] [--] PROG [ARGS...])" \
	run
expect_error 2 "run: missing the program to run (heaptrace run [options] [--] PROG [ARGS...])" \
	run -q --
expect_error 2 "attach: PID must be a positive decimal integer, not 'abc'" \
	attach abc
expect_error 2 "attach: PID must be a positive decimal integer, not '0'" \
	attach 0
expect_error 2 "attach: missing the PID to attach to (heaptrace attach [options] PID)" \
	attach
expect_error 2 "missing command: run or attach (see heaptrace --help)"
expect_error 2 "unknown command 'bogus' (see heaptrace --help)" bogus

# --help, -h and help: the usage on stdout, nothing on stderr, status 0.
for h in --help -h help; do
	"$ht" $h >"$tmp/help" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] || fail "heaptrace $h: exit $status"
	[ -s "$tmp/err" ] && fail "heaptrace $h: wrote to stderr"
done
for opt in --heap= --heap-admin= --stacks= --pages-as-heap= --depth= \
	--alloc-fn= --ignore-fn= --threshold= --peak-inaccuracy= \
	--time-unit= --detailed-freq= --max-snapshots= --massif-out-file= \
	--alignment= --show-below-main= --trace-children= --massif-compat= \
	-q -v --quiet --verbose; do
	grep -q -e "$opt" "$tmp/help" || fail "--help does not list $opt"
done
grep -q 'heaptrace run' "$tmp/help" || fail "--help does not show run"
grep -q 'heaptrace attach' "$tmp/help" || fail "--help does not show attach"

# Each command's own help: its usage on stdout, status 0.
for cmd in print report diff snapshot; do
	"$ht" $cmd --help >"$tmp/help" 2>"$tmp/err"
	status=$?
	[ "$status" -eq 0 ] || fail "heaptrace $cmd --help: exit $status"
	grep -q "heaptrace $cmd" "$tmp/help" ||
		fail "heaptrace $cmd --help: no usage line"
	[ -s "$tmp/err" ] && fail "heaptrace $cmd --help: wrote to stderr"
done

got=$("$ht" --version 2>"$tmp/err")
status=$?
[ "$status" -eq 0 ] || fail "heaptrace --version: exit $status"
[ "$got" = "heaptrace $version" ] ||
	fail "heaptrace --version: '$got', want 'heaptrace $version'"
[ -s "$tmp/err" ] && fail "heaptrace --version: wrote to stderr"

# A full stdout is an error, not a silent truncation.
if [ -w /dev/full ]; then
	"$ht" --help >/dev/full 2>"$tmp/err"
	status=$?
	[ "$status" -eq 1 ] || fail "heaptrace --help >/dev/full: exit $status"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] ||
		fail "heaptrace --help >/dev/full: stderr: $(cat "$tmp/err")"
fi

pass_or_fail
