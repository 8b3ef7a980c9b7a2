#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Records the extra-bytes goldens from real Massif: for each cases/NAME.ops,
# runs tests/extra/replay.c under Valgrind with the options of NAME.opts and
# writes NAME.exp: per operation, mem_heap_B and mem_heap_extra_B of the
# normal snapshot it caused, and the address the call returned. Peak
# snapshots (taken before frees) are left out; with --max-snapshots=1000
# and fewer than 450 operations nothing is culled. Needs valgrind 3.19.
# Usage: regen.sh [NAME...]
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

valgrind --version | grep -qx 'valgrind-3.19.0' ||
	{ echo "regen.sh: needs valgrind 3.19.0" >&2; exit 1; }
cc -std=c11 -D_GNU_SOURCE -O0 -g -Wall -Wextra -Werror -o "$tmp/replay" "$here/replay.c"

if [ $# -eq 0 ]; then
	set -- $(cd "$here/cases" && ls *.ops | sed 's/\.ops$//')
fi
for name; do
	opts=$(grep -v '^#' "$here/cases/$name.opts" || true)
	cp "$here/cases/$name.ops" "$tmp/$name.ops"
	cmd="valgrind --tool=massif --time-unit=B --detailed-freq=1000000"
	cmd="$cmd --max-snapshots=1000${opts:+ $opts}"
	cmd="$cmd --massif-out-file=massif.out ./replay $name.ops"
	(cd "$tmp" && $cmd >addrs 2>log) ||
		{ cat "$tmp/log" >&2; exit 1; }
	n_ops=$(grep -cv '^\(#\|$\)' "$tmp/$name.ops")
	awk '/^mem_heap_B=/ { h = substr($0, 12) }
	     /^mem_heap_extra_B=/ { e = substr($0, 18) }
	     /^heap_tree=empty/ { print h, e }' "$tmp/massif.out" >"$tmp/normal"
	[ "$(head -n 1 "$tmp/normal")" = "0 0" ] ||
		{ echo "$name: no start-up snapshot" >&2; exit 1; }
	[ "$(wc -l <"$tmp/normal")" -gt "$n_ops" ] ||
		{ echo "$name: fewer snapshots than operations" >&2; exit 1; }
	[ "$(wc -l <"$tmp/addrs")" -eq "$n_ops" ] ||
		{ echo "$name: replay printed no address per operation" >&2; exit 1; }
	{
		echo "# from real Massif: $cmd"
		echo "# $(valgrind --version), $(uname -m); recorded by regen.sh"
		echo "# per operation: mem_heap_B mem_heap_extra_B returned-address"
		sed -n "2,$((n_ops + 1))p" "$tmp/normal" | paste -d ' ' - "$tmp/addrs"
	} >"$here/cases/$name.exp"
	echo "$name: $n_ops operations"
done
