#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# One backend case: run PROG under heaptrace with --backend=inline (stacks
# walked inside the target from the rules heaptrace publishes, or copied
# for it to unwind) and with --backend=ptrace (every call stopped and
# unwound at the stop), with the same options, then require
#  - the program's stdout, stderr and exit status to be the same in both;
#  - as many profiles from each, paired in pid order;
#  - each pair to be the same for massif-compare and, unless --tolerance,
#    identical line for line once code addresses are masked (both runs
#    without address-space randomisation where setarch can turn it off, so
#    that ties order alike);
#  - with --walked PCT, at least PCT percent of the inline run's stacks to
#    have been walked in the target rather than copied (--stats=yes).
# Without a --time-unit option, --time-unit=B is added.
# Exit 0 pass, 1 fail, 77 skip (a tool is missing), 99 harness error.
#
# usage: backends.sh [FLAGS] -- [OPTIONS...] -- PROG [ARGS...]
# FLAGS:
#   --heaptrace PATH    the heaptrace binary (required)
#   --compare PATH      massif-compare (required; skip if it does not exist)
#   --tolerance PCT     compare totals within PCT percent (threaded programs)
#   --stdin FILE        stdin of both runs [/dev/null]
#   --walked PCT        the share of stacks walked in the target, at least
#   --skip REASON       skip the case
# Set HT_KEEP=DIR to keep the runs' files in DIR.
set -u

. "$(dirname "$0")/../lib.sh" || exit 99
profile="$here/profile.py"

heaptrace= compare= tolerance= stdin=/dev/null walked=
while [ $# -gt 0 ]; do
	case $1 in
	--heaptrace) heaptrace=$2; shift 2 ;;
	--compare) compare=$2; shift 2 ;;
	--tolerance) tolerance=$2; shift 2 ;;
	--stdin) stdin=$2; shift 2 ;;
	--walked) walked=$2; shift 2 ;;
	--skip) skip "$2" ;;
	--) shift; break ;;
	*) echo "backends.sh: unknown flag '$1'" >&2; exit 99 ;;
	esac
done
take_opts "$@"
shift "$taken"
if [ $# -lt 1 ] || [ -z "$heaptrace" ] || [ -z "$compare" ]; then
	usage "backends.sh --heaptrace PATH --compare PATH [FLAGS] -- [OPTS...] -- PROG [ARGS...]"
fi
prog=$1
shift
args=("$@")

heaptrace=$(abspath "$heaptrace")
prog=$(abspath "$prog")
compare=$(abspath "$compare")
stdin=$(abspath "$stdin")

need python3 timeout
need_file "$compare" massif-compare
if [ ! -x "$prog" ]; then
	skip "$prog is not installed"
fi

case " ${opts[*]-} " in
*" --time-unit="*) ;;
*) opts=(--time-unit=B ${opts[@]+"${opts[@]}"}) ;;
esac

no_aslr

scratch --keep

declare -A st
for b in inline ptrace; do
	mkdir "$tmp/$b" || exit 99
	(cd "$tmp/$b" &&
		exec ${norandom[@]+"${norandom[@]}"} timeout -k 5 100 \
			"$heaptrace" run -q --stats=yes --backend="$b" \
			"${opts[@]}" --massif-out-file=massif.%p -- \
			"$prog" ${args[@]+"${args[@]}"}) \
		<"$stdin" >"$tmp/$b.out" 2>"$tmp/$b.all.err"
	st[$b]=$?
	# heaptrace's own lines apart from the program's.
	grep '^heaptrace: stats: ' "$tmp/$b.all.err" >"$tmp/$b.stats"
	grep -v '^heaptrace: stats: ' "$tmp/$b.all.err" >"$tmp/$b.err"
done

echo "command: $prog ${args[*]-}"
echo "options: ${opts[*]}"
echo "status: inline ${st[inline]}, ptrace ${st[ptrace]}"
[ ${#norandom[@]} -gt 0 ] || echo "(address-space randomisation left on)"

[ "${st[inline]}" -eq "${st[ptrace]}" ] ||
	fail "exit status: inline ${st[inline]}, ptrace ${st[ptrace]}"
for s in out err; do
	if ! cmp -s "$tmp/inline.$s" "$tmp/ptrace.$s"; then
		show "$tmp/ptrace.$s"
		show "$tmp/inline.$s"
		fail "the program's std$s differs between the backends"
	fi
done

mapfile -t pfiles < <(python3 "$profile" list "$tmp/ptrace")
mapfile -t ifiles < <(python3 "$profile" list "$tmp/inline")
[ "${#pfiles[@]}" -gt 0 ] || fail "no profile from the ptrace backend"
[ "${#ifiles[@]}" -eq "${#pfiles[@]}" ] ||
	fail "inline wrote ${#ifiles[@]} profiles, ptrace ${#pfiles[@]}"
cmpflags=()
[ -n "$tolerance" ] && cmpflags+=(--tolerance "$tolerance")
mask() {
	sed 's/0x[0-9A-Fa-f]*:/ADDR:/' "$1"
}
for i in "${!pfiles[@]}"; do
	p=${pfiles[$i]}
	g=${ifiles[$i]-}
	[ -n "$g" ] || break
	echo "pair $((i + 1)): $p $g"
	if ! python3 "$compare" "$p" "$g" ${cmpflags[@]+"${cmpflags[@]}"}; then
		fail "massif-compare: profile $((i + 1)) differs"
	elif [ -z "$tolerance" ] && ! cmp -s <(mask "$p") <(mask "$g"); then
		diff <(mask "$p") <(mask "$g") | head -n 20
		fail "profile $((i + 1)) is not the same file"
	fi
done

# "N stacks walked in the target, M copied", summed over the processes.
read -r nwalked ncopied < <(sed -n 's/.* \([0-9]*\) stacks walked in the target, \([0-9]*\) copied.*/\1 \2/p' \
	"$tmp/inline.stats" | awk '{ w += $1; c += $2 } END { print w + 0, c + 0 }')
echo "inline: $nwalked stacks walked in the target, $ncopied copied"
if [ -n "$walked" ] &&
	[ $((nwalked * 100)) -lt $(((nwalked + ncopied) * walked)) ]; then
	fail "fewer than $walked% of the stacks walked in the target"
fi

if [ "$fails" -ne 0 ]; then
	echo "--- heaptrace's stats (inline):"
	cat "$tmp/inline.stats"
	echo "$fails failure(s)"
	exit 1
fi
pass_or_fail PASS
