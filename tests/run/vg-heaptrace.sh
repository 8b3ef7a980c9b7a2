#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A stand-in for heaptrace made of real Massif, to check the harness:
#   vg-heaptrace.sh run [OPTIONS] [--] PROG [ARGS...]
# runs valgrind --tool=massif with the same Massif options, dropping the
# heaptrace-only ones (-q, --quiet, --massif-compat=..., --backend=...). Valgrind's own
# messages go to /dev/null. $HT_SHIM_EXTRA (one option), if set, is put
# first, to make the stand-in differ from Massif on purpose.
set -u
if [ "${1-}" != run ]; then
	echo "vg-heaptrace.sh: only 'run' is supported" >&2
	exit 2
fi
shift
opts=()
[ -n "${HT_SHIM_EXTRA-}" ] && opts+=("$HT_SHIM_EXTRA")
while [ $# -gt 0 ]; do
	case $1 in
	-q | --quiet | --massif-compat=* | --backend=*) shift ;;
	--) shift; break ;;
	-*) opts+=("$1"); shift ;;
	*) break ;;
	esac
done
exec valgrind -q --tool=massif --log-file=/dev/null ${opts[@]+"${opts[@]}"} "$@"
