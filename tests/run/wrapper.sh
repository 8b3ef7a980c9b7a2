#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Exec wrappers (--follow-exec, tracer/loop.c "Exec wrappers"): a process
# whose heap stayed below 1 MiB when it execs is a wrapper (a shell shim,
# pyenv's), and by default heaptrace profiles the program it becomes, in
# the same process (same pid, same file), and drops the wrapper's profile.
#
# usage: wrapper.sh HEAPTRACE WRAPPED WRAPEXEC CASE
#   WRAPPED   progs/wrapped.c: peak heap exactly 5,000,000 B, all freed:
#             with --time-unit=B the last snapshot's time is twice the
#             peak's heap plus extra bytes when nothing else is counted
#   WRAPEXEC  progs/wrapexec.c: wrapexec N PROG ARGS: N bytes, then exec
# CASE:
#   shim             sh shim execs WRAPPED: one profile, WRAPPED's exactly,
#                    named after the shim's pid; no hint
#   chain            sh shim execs `env bash shim2`, which execs WRAPPED
#   helpers          chain's shims, the bash one running basename (a
#                    helper that execs) before it execs WRAPPED, as pyenv's: WRAPPED's profile,
#                    the summary alone (its helper is plumbing: named with
#                    -v only)
#   children-yes     shim with --trace-children=yes: the same one profile
#   c-wrapper        WRAPEXEC 1000 WRAPPED (a C wrapper): WRAPPED's profile
#   not-wrapper      WRAPEXEC 3000000 WRAPPED: no wrapper (3 MB): with
#                    --trace-children=no, WRAPEXEC's profile and a hint
#                    naming WRAPPED and --trace-children=yes; by default
#                    (--follow-exec=work) and with --trace-children=yes,
#                    WRAPPED's profile
#   follow-exec-no   shim with --follow-exec=no: the shell's profile (as
#                    before), a hint naming WRAPPED
#   compat           --massif-compat=yes: Massif's rule (the shell's
#                    profile, as before), one line whose hint names env;
#                    --follow-exec=wrappers given: followed
#   fork-exec        sh -c "WRAPPED; echo done", run directly: the child
#                    the shell forks execs WRAPPED while small: followed;
#                    two profiles, the shell's and WRAPPED's exactly
#   fork-exec-shim   the same sh -c behind a shim: the child is forked by
#                    a program a wrapper exec'd in the target's process (a
#                    shim's helper): not profiled, its exec not followed
#                    by default (nor with --trace-children=no): one
#                    profile, and a hint naming WRAPPED; with yes, two
#   ptrace           chain and fork-exec with --backend=ptrace
#   snapshot         a snapshot taken on demand before the exec: no
#                    wrapper (with --trace-children=no: the shell's
#                    profile, and the hint)
#   quiet            -q: no hint line
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
profile_py="$here/profile.py"

[ $# -eq 4 ] || usage "wrapper.sh HEAPTRACE WRAPPED WRAPEXEC CASE"
heaptrace=$(abspath "$1")
wrapped=$(abspath "$2")
wrapexec=$(abspath "$3")
case_=$4
need python3
scratch --keep

# The shims: sh, writing its pid; bash reached through env, as pyenv's.
cat >"$tmp/shim.sh" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/shim.pid"
exec "\$@"
EOF
cat >"$tmp/shim1.sh" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/shim.pid"
exec /usr/bin/env bash "$tmp/shim2.sh" "\$@"
EOF
printf '#!/usr/bin/env bash\nx=$(printf %%s "$*")\nexec "$@"\n' \
	>"$tmp/shim2.sh"
cat >"$tmp/shim3.sh" <<EOF
#!/bin/sh
echo \$\$ >"$tmp/shim.pid"
exec /usr/bin/env bash "$tmp/shim4.sh" "\$@"
EOF
printf '#!/usr/bin/env bash\nx=$(basename "$0")\nexec "$@"\n' \
	>"$tmp/shim4.sh"
chmod +x "$tmp/shim.sh" "$tmp/shim1.sh" "$tmp/shim2.sh" "$tmp/shim3.sh" \
	"$tmp/shim4.sh"

n=0
# ht NAME [OPTIONS...] -- PROG [ARGS...]: heaptrace run into $tmp/NAME/,
# with --time-unit=B; stdout, stderr and status in $tmp/NAME.{out,err,st}.
ht() {
	local name=$1
	shift
	rm -rf "${tmp:?}/$name" "$tmp/shim.pid"
	mkdir -p "$tmp/$name"
	timeout -k 5 60 "$heaptrace" run --time-unit=B \
		--massif-out-file="$tmp/$name/massif.out.%p" "$@" \
		>"$tmp/$name.out" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.st"
	[ "$(cat "$tmp/$name.st")" = 0 ] ||
		{ fail "$name: heaptrace exited $(cat "$tmp/$name.st")"; show "$tmp/$name.err"; }
}

# files NAME COUNT: NAME wrote COUNT profiles; prints them.
files() {
	local got
	got=$(find "$tmp/$1" -name 'massif.out.*' ! -name '*.sites' | wc -l)
	[ "$got" -eq "$2" ] || { fail "$1: $got profiles, not $2"; ls "$tmp/$1"; }
}

# last_time FILE: the time of the profile's last snapshot.
last_time() {
	grep '^time=' "$1" | tail -n 1 | cut -d= -f2
}

# is_wrapped FILE [ARGS]: FILE is WRAPPED's profile and nothing else's.
is_wrapped() {
	local f=$1
	[ -f "$f" ] || { fail "no profile $f"; return; }
	grep -qx "cmd: $wrapped" "$f" || fail "$f: $(grep '^cmd:' "$f"), not WRAPPED's"
	python3 "$profile_py" check "$f" max-heap=5000000 || fail "$f: peak"
	# every byte counted (extra ones too) is WRAPPED's: twice its peak
	local peak
	peak=$(awk -F= '/^mem_heap_B=5000000$/ { h = 1; next }
		h && /^mem_heap_extra_B=/ { print 2 * (5000000 + $2); exit }' "$f")
	[ -n "$peak" ] && [ "$(last_time "$f")" = "$peak" ] ||
		fail "$f: $(last_time "$f") B allocated and freed, not ${peak:-?} (the wrapper's counted?)"
}

# is_shell FILE: FILE is the profile of a process that did not become
# WRAPPED: no 5 MB, not its cmd: line.
is_shell() {
	local f=$1
	[ -f "$f" ] || { fail "no profile $f"; return; }
	grep -qx "cmd: $wrapped" "$f" && fail "$f: WRAPPED's profile"
	grep -q '^mem_heap_B=5000000$' "$f" && fail "$f: holds WRAPPED's peak"
}

# hints NAME COUNT [PATTERN...]: NAME's stderr has COUNT lines, each
# PATTERN (grep -E) matched by one of them.
hints() {
	local name=$1 count=$2 p got
	shift 2
	got=$(grep -c . "$tmp/$name.err")
	[ "$got" -eq "$count" ] || { fail "$name: $got lines on stderr, not $count"; show "$tmp/$name.err"; }
	for p in "$@"; do
		grep -Eq -- "$p" "$tmp/$name.err" || { fail "$name: no line matching '$p'"; show "$tmp/$name.err"; }
	done
}

# The summary line and notes: -q keeps stderr to the hints under test.
case $case_ in
shim)
	ht shim -q -- "$tmp/shim.sh" "$wrapped"
	files shim 1
	is_wrapped "$tmp/shim/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	ht shim-v -- "$tmp/shim.sh" "$wrapped"
	grep -q "exec'd" "$tmp/shim-v.err" && fail "shim: a hint: $(cat "$tmp/shim-v.err")"
	grep -q "massif.out.$(cat "$tmp/shim.pid")" "$tmp/shim-v.err" ||
		fail "shim: the summary line names no massif.out.$(cat "$tmp/shim.pid")"
	;;
chain)
	ht chain -q -- "$tmp/shim1.sh" "$wrapped"
	files chain 1
	is_wrapped "$tmp/chain/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	;;
helpers)
	ht helpers -- "$tmp/shim3.sh" "$wrapped"
	files helpers 1
	is_wrapped "$tmp/helpers/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	hints helpers 1 "^heaptrace: peak .*massif.out.$(cat "$tmp/shim.pid")"
	grep -q "not profiled" "$tmp/helpers.err" &&
		fail "helpers: plumbing named: $(cat "$tmp/helpers.err")"
	ht helpers-v -v -- "$tmp/shim3.sh" "$wrapped"
	grep -q "a wrapper's helper exec'd basename: not profiled" \
		"$tmp/helpers-v.err" || { fail "helpers: -v names no basename"; show "$tmp/helpers-v.err"; }
	;;
children-yes)
	ht yes -q --trace-children=yes -- "$tmp/shim1.sh" "$wrapped"
	files yes 1
	is_wrapped "$tmp/yes/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	;;
c-wrapper)
	ht cw -q -- "$wrapexec" 1000 "$wrapped"
	files cw 1
	is_wrapped "$(find "$tmp/cw" -name 'massif.out.*' ! -name '*.sites')"
	;;
not-wrapper)
	ht nw --trace-children=no -- "$wrapexec" 3000000 "$wrapped"
	files nw 1
	f=$(find "$tmp/nw" -name 'massif.out.*' ! -name '*.sites')
	is_shell "$f"
	grep -qx "cmd: $wrapexec 3000000 $wrapped" "$f" || fail "not-wrapper: $(grep '^cmd:' "$f")"
	python3 "$profile_py" check "$f" max-heap=3000000 || fail "not-wrapper: peak"
	grep -q "; run_wrapped not profiled: --trace-children=yes$" \
		"$tmp/nw.err" || { fail "not-wrapper: no hint"; show "$tmp/nw.err"; }
	grep -q -- "--follow-exec" "$tmp/nw.err" && fail "not-wrapper: --follow-exec named"
	# The default follows it (--follow-exec=work).
	ht nwd -q -- "$wrapexec" 3000000 "$wrapped"
	files nwd 1
	is_wrapped "$(find "$tmp/nwd" -name 'massif.out.*' ! -name '*.sites')"
	# Today's --trace-children=yes: the exec'd program replaces it.
	ht nwy -q --trace-children=yes -- "$wrapexec" 3000000 "$wrapped"
	files nwy 1
	is_wrapped "$(find "$tmp/nwy" -name 'massif.out.*' ! -name '*.sites')"
	;;
follow-exec-no)
	ht no --follow-exec=no -- "$tmp/shim.sh" "$wrapped"
	files no 1
	is_shell "$tmp/no/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	grep -q "; run_wrapped not profiled: --trace-children=yes$" \
		"$tmp/no.err" || { fail "follow-exec-no: no hint"; show "$tmp/no.err"; }
	;;
compat)
	ht compat -q --massif-compat=yes -- "$tmp/shim.sh" "$wrapped"
	hints compat 0
	ht compat --massif-compat=yes -- "$tmp/shim1.sh" "$wrapped"
	files compat 1
	is_shell "$tmp/compat/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	# one line: the summary, the hint (the first exec not followed) at
	# its end
	hints compat 1 "^heaptrace: (peak|largest) .*; env not profiled: --trace-children=yes$"
	ht compat-w -q --massif-compat=yes --follow-exec=wrappers -- \
		"$tmp/shim1.sh" "$wrapped"
	files compat-w 1
	is_wrapped "$tmp/compat-w/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	hints compat-w 0
	;;
fork-exec)
	ht fe -q -- /bin/sh -c '"$0"; echo done' "$wrapped"
	[ "$(cat "$tmp/fe.out")" = done ] || fail "fork-exec: stdout '$(cat "$tmp/fe.out")'"
	files fe 2
	hints fe 0
	for f in "$tmp"/fe/massif.out.*; do
		case $f in *.sites) continue ;; esac
		if grep -qx "cmd: $wrapped" "$f"; then
			is_wrapped "$f"
		else
			is_shell "$f"
		fi
	done
	[ "$(grep -lx "cmd: $wrapped" --exclude='*.sites' "$tmp"/fe/massif.out.* | wc -l)" = 1 ] ||
		fail "fork-exec: no profile of WRAPPED"
	;;
fork-exec-shim)
	ht fs -q --trace-children=no -- "$tmp/shim.sh" /bin/sh -c '"$0"; echo done' "$wrapped"
	[ "$(cat "$tmp/fs.out")" = done ] || fail "fork-exec-shim: stdout '$(cat "$tmp/fs.out")'"
	files fs 1
	is_shell "$tmp/fs/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	ht fs-v --trace-children=no -- "$tmp/shim.sh" /bin/sh -c '"$0"; echo done' "$wrapped"
	hints fs-v 1 "^heaptrace: (peak|largest) .*; run_wrapped not profiled: --trace-children=yes$"
	# the default: a shim's helpers' execs are not followed either
	ht fsd -- "$tmp/shim.sh" /bin/sh -c '"$0"; echo done' "$wrapped"
	files fsd 1
	hints fsd 1 "^heaptrace: (peak|largest) .*; run_wrapped not profiled: --trace-children=yes$"
	ht fsy -q --trace-children=yes -- "$tmp/shim.sh" /bin/sh -c '"$0"; echo done' "$wrapped"
	files fsy 2
	is_wrapped "$(grep -lx "cmd: $wrapped" --exclude='*.sites' "$tmp"/fsy/massif.out.* | head -n 1)"
	;;
ptrace)
	# the chain and a forked child's exec with the ptrace backend
	ht pc -q --backend=ptrace -- "$tmp/shim1.sh" "$wrapped"
	files pc 1
	is_wrapped "$tmp/pc/massif.out.$(cat "$tmp/shim.pid" 2>/dev/null)"
	ht pf -q --backend=ptrace -- /bin/sh -c '"$0"; echo done' "$wrapped"
	files pf 2
	is_wrapped "$(grep -lx "cmd: $wrapped" --exclude='*.sites' "$tmp"/pf/massif.out.* | head -n 1)"
	;;
snapshot)
	# A snapshot taken before the exec: its profile was wanted, no
	# wrapper: as with --follow-exec=no, the shell's profile and a hint.
	mkfifo "$tmp/go"
	printf '#!/bin/sh\necho $$ >"%s"\nread x <"%s"\nexec "$@"\n' \
		"$tmp/shim.pid" "$tmp/go" >"$tmp/wait.sh"
	chmod +x "$tmp/wait.sh"
	rm -f "$tmp/shim.pid"
	mkdir -p "$tmp/snap"
	"$heaptrace" run --time-unit=B --trace-children=no \
		--massif-out-file="$tmp/snap/massif.out.%p" -- \
		"$tmp/wait.sh" "$wrapped" >"$tmp/snap.out" 2>"$tmp/snap.err" &
	ht_pid=$!
	pids+=("$ht_pid")
	for _ in $(seq 100); do [ -s "$tmp/shim.pid" ] && break; sleep 0.1; done
	pid=$(cat "$tmp/shim.pid" 2>/dev/null)
	"$heaptrace" snapshot "$pid" >"$tmp/snapcmd.out" 2>&1 ||
		{ fail "snapshot: heaptrace snapshot failed"; show "$tmp/snapcmd.out"; }
	echo go >"$tmp/go"
	wait "$ht_pid" || fail "snapshot: heaptrace exited $?"
	[ -f "$tmp/snap/massif.out.$pid.snapshot-1" ] || fail "snapshot: no snapshot file"
	is_shell "$tmp/snap/massif.out.$pid"
	grep -q "; run_wrapped not profiled: --trace-children=yes$" "$tmp/snap.err" ||
		{ fail "snapshot: no hint"; show "$tmp/snap.err"; }
	;;
quiet)
	ht q -q -- "$wrapexec" 3000000 "$wrapped"
	hints q 0
	ht q2 -q -- "$tmp/shim.sh" /bin/sh -c '"$0"; echo done' "$wrapped"
	hints q2 0
	;;
*)
	echo "wrapper.sh: unknown case '$case_'" >&2
	exit 99
	;;
esac
pass_or_fail "PASS: $case_"
