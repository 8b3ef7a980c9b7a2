#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A set-user-ID or file-capability program under heaptrace
# (tracer/privileges.c). PRIVS (progs/privs.c) prints its effective IDs
# and capabilities; copies of it, with heaptrace's own binary, go to a
# directory user 65534 (nobody) can reach: "suid" (root's, mode 4755),
# "caps" (cap_net_raw+ep, when setcap is installed), "self" (nobody's,
# mode 4755). Run as nobody, heaptrace lacks CAP_SYS_PTRACE, and the
# kernel runs suid and caps without their privileges:
#  - `heaptrace run` of suid, of caps: exit 0, the output that of the
#    plain copy run by nobody without heaptrace, and exactly one line on
#    stderr saying it runs without its privileges;
#  - of self (set-user-ID to the caller: nothing lost): no such line;
#  - --trace-children=yes of sh running suid then caps: one line for each
#    followed exec, and both outputs as above.
# As root (CAP_SYS_PTRACE), suid and caps keep their privileges: their
# output is that of running them natively, and there is no such line.
# Needs root (to make the copies) and setpriv; skipped (77) otherwise, or
# when the directory is on a nosuid mount, or nobody cannot run heaptrace
# from it. Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: privileges.sh HEAPTRACE PRIVS
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "privileges.sh HEAPTRACE PRIVS"
ht=$(abspath "$1") prog=$(abspath "$2")
need_exec "$ht" "$prog"
[ "$(id -u)" = 0 ] || skip "not root: cannot make a set-user-ID copy"
need setpriv python3
scratch
chmod 755 "$tmp"

cp "$ht" "$tmp/heaptrace" && cp "$prog" "$tmp/plain" &&
	cp "$prog" "$tmp/suid" && cp "$prog" "$tmp/self" || exit 99
chmod 755 "$tmp/heaptrace" "$tmp/plain"
chown 0:0 "$tmp/suid" && chmod 4755 "$tmp/suid" &&
	chown 65534 "$tmp/self" && chmod 4755 "$tmp/self" || exit 99
privileged=(suid)
if have setcap; then
	cp "$prog" "$tmp/caps" && chmod 755 "$tmp/caps" &&
		setcap cap_net_raw+ep "$tmp/caps" || exit 99
	privileged+=(caps)
else
	echo "no setcap (libcap2-bin): file capabilities are not checked"
fi
python3 -c 'import os, sys
sys.exit(1 if os.statvfs(sys.argv[1]).f_flag & os.ST_NOSUID else 0)' "$tmp" ||
	skip "$tmp is on a nosuid mount"
"${as_nobody[@]}" "$tmp/heaptrace" --version >/dev/null 2>&1 ||
	skip "user 65534 cannot run heaptrace from $tmp"

unprivileged=$("${as_nobody[@]}" "$tmp/plain") || exit 99
for p in "${privileged[@]}"; do
	[ "$("${as_nobody[@]}" "$tmp/$p")" != "$unprivileged" ] ||
		harness "$p run by nobody natively has no more than the plain copy"
done

# privilege_lines FILE: how many lines of FILE say a program runs without
# its privileges.
privilege_lines() {
	grep -c "runs without its privileges" "$1"
}

# traced WHO NAME ARGS...: `heaptrace run ARGS` as WHO (nobody or root);
# stdout in $tmp/NAME.out, stderr in $tmp/NAME.err; fails unless it
# exits 0.
traced() {
	local who=$1 name=$2
	shift 2
	local cmd=("$tmp/heaptrace" run --massif-out-file=/dev/null "$@")
	[ "$who" = nobody ] && cmd=("${as_nobody[@]}" "${cmd[@]}")
	"${cmd[@]}" >"$tmp/$name.out" 2>"$tmp/$name.err"
	local st=$?
	[ $st = 0 ] || fail "$name: exit $st: $(cat "$tmp/$name.err")"
}

for p in "${privileged[@]}"; do
	traced nobody "$p" -- "$tmp/$p"
	[ "$(cat "$tmp/$p.out")" = "$unprivileged" ] ||
		fail "$p as nobody printed '$(cat "$tmp/$p.out")', '$unprivileged' expected"
	[ "$(privilege_lines "$tmp/$p.err")" = 1 ] ||
		fail "$p as nobody: not exactly one line about its privileges: $(cat "$tmp/$p.err")"
done

traced nobody self -- "$tmp/self"
[ "$(cat "$tmp/self.out")" = "$("${as_nobody[@]}" "$tmp/self")" ] ||
	fail "self as nobody printed '$(cat "$tmp/self.out")'"
[ "$(privilege_lines "$tmp/self.err")" = 0 ] ||
	fail "self (set-user-ID to its caller): a line about privileges: $(cat "$tmp/self.err")"

script=
for p in "${privileged[@]}"; do
	script+="$tmp/$p; "
done
traced nobody execs --trace-children=yes -- /bin/sh -c "$script"
expected=$(for p in "${privileged[@]}"; do echo "$unprivileged"; done)
[ "$(cat "$tmp/execs.out")" = "$expected" ] ||
	fail "sh running ${privileged[*]} as nobody printed '$(cat "$tmp/execs.out")'"
[ "$(privilege_lines "$tmp/execs.err")" = "${#privileged[@]}" ] ||
	fail "sh running ${privileged[*]} as nobody: not one line per exec: $(cat "$tmp/execs.err")"

for p in "${privileged[@]}"; do
	traced root "root-$p" -- "$tmp/$p"
	[ "$(cat "$tmp/root-$p.out")" = "$("$tmp/$p")" ] ||
		fail "$p as root printed '$(cat "$tmp/root-$p.out")', '$("$tmp/$p")' expected"
	[ "$(privilege_lines "$tmp/root-$p.err")" = 0 ] ||
		fail "$p as root: a line about privileges: $(cat "$tmp/root-$p.err")"
done
pass_or_fail "PASS: privileges"
