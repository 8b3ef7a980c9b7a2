#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The two versions of the .sites format (docs/sites-format.md): what
# report, diff and pprof make of a profile must not depend on which one
# its .sites file is in, and version 2 must stay small.
# Usage: formats.sh CASE HEAPTRACE SRCDIR; exit 0 pass, 1 fail, 77 skip.
#   fixture  data/c.massif with its .sites file as heaptrace wrote it
#            before version 2 (version 1), then as version 2 writes it:
#            report (text, JSON, HTML, pprof) and diff byte for byte alike;
#            the old file's sites and figures as tests/run/progs/sites.c
#            works them out
#   python   heaptrace run of Debian's python3 (/usr/bin/python3: another
#            one may have debug files that make version 1 files of 100 MB
#            and this case slow) JSON-dumping 20,000 dicts:
#            the .sites file at most 10 times the Massif file's size
#            (--time-unit=B, for a Massif file of the same size every
#            run; version 1: 11 times), and the same file in version
#            1 (tests/lib.sh's sites_v1) reported alike
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 3 ] || usage "formats.sh CASE HEAPTRACE SRCDIR"
case_name=$1 ht=$(abspath "$2") src=$(abspath "$3")
scratch

# views DIR: report's text, JSON, HTML and pprof, and diff against
# itself, of DIR/p.massif, into DIR/*.out (run from DIR, so that the
# paths they print are the same; the files dated alike, since pprof's
# time is the profile's).
views() {
	(
		cd "$1" || exit 99
		touch -d 2026-01-01T00:00:00Z p.massif p.massif.sites || exit 99
		"$ht" report p.massif >text.out 2>&1 || echo "status $?" >>text.out
		"$ht" report --format=json p.massif >json.out 2>&1 ||
			echo "status $?" >>json.out
		"$ht" report --format=html -o html.out p.massif 2>err.out ||
			echo "html status $?" >>err.out
		"$ht" report --format=pprof -o pprof.out p.massif 2>>err.out ||
			echo "pprof status $?" >>err.out
		"$ht" diff p.massif p.massif >diff.out 2>&1 ||
			echo "status $?" >>diff.out
	)
}

# same_views A B: every view of A's profile is B's, byte for byte.
same_views() {
	local v
	for v in text json html pprof diff err; do
		cmp -s "$1/$v.out" "$2/$v.out" ||
			fail "$v differs between $1 and $2: $(diff "$1/$v.out" "$2/$v.out" | head -5)"
	done
	[ ! -s "$1/err.out" ] || fail "errors: $(cat "$1/err.out")"
}

case $case_name in
fixture)
	mkdir "$tmp/v1" "$tmp/v2" || exit 99
	cp "$src/data/c.massif" "$tmp/v1/p.massif" &&
		cp "$src/data/c.massif.sites" "$tmp/v1/p.massif.sites" &&
		cp "$src/data/c.massif" "$tmp/v2/p.massif" &&
		cp "$src/data/c.massif.sites-v2" "$tmp/v2/p.massif.sites" ||
		exit 99
	[ "$(head -1 "$tmp/v1/p.massif.sites")" = "heaptrace-sites: 1" ] &&
		[ "$(head -1 "$tmp/v2/p.massif.sites")" = "heaptrace-sites: 2" ] ||
		harness "data/c.massif's .sites files are not versions 1 and 2"
	views "$tmp/v1"
	views "$tmp/v2"
	same_views "$tmp/v1" "$tmp/v2"
	# the old file read: progs/sites.c's four sites (tests/run/sites.sh)
	for want in \
		"100000 bytes peak memory consumed over 100 calls from f (sites.c:43)" \
		"300 bytes leaked in 3 blocks over 10 calls (definite 100, indirect 0, possible 0, reachable 200) from g (sites.c:38)" \
		"50 temporary allocations of 50 allocations in total (100.00%) from h (sites.c:48)" \
		"4096 bytes leaked in 1 blocks over 2 calls (definite 0, indirect 0, possible 0, reachable 4096) from k (sites.c:28)"; do
		grep -qxF "$want" "$tmp/v1/text.out" ||
			fail "version 1: no line '$want'"
	done
	# and diff across versions: the same sites, nothing changed
	(cd "$tmp" && "$ht" diff v1/p.massif v2/p.massif >cross.out 2>&1) ||
		fail "diff v1 v2: status $?: $(cat "$tmp/cross.out")"
	grep -q '^no site changed' "$tmp/cross.out" ||
		fail "diff v1 v2: $(cat "$tmp/cross.out")"
	;;
python)
	need_file /usr/bin/python3 "Debian's python3"
	mkdir "$tmp/v2" "$tmp/v1" || exit 99
	cat >"$tmp/dicts.py" <<'PY' || exit 99
import json
data = [{"id": i, "name": "item%d" % i, "value": i * 1.5, "tags": ["a", "b"]}
        for i in range(20000)]
print(len(json.dumps(data)))
PY
	(cd "$tmp/v2" && timeout 120 "$ht" run -q --time-unit=B \
		--massif-out-file=p.massif \
		/usr/bin/python3 "$tmp/dicts.py" >run.out 2>run.err)
	status=$?
	[ "$status" = 0 ] || { fail "run: status $status"; show "$tmp/v2/run.err"; }
	[ -s "$tmp/v2/p.massif" ] && [ -s "$tmp/v2/p.massif.sites" ] ||
		{ fail "no profile and .sites file"; pass_or_fail; }
	massif=$(stat -c %s "$tmp/v2/p.massif")
	sites=$(stat -c %s "$tmp/v2/p.massif.sites")
	echo "massif.out $massif bytes, .sites $sites bytes"
	[ "$sites" -le $((10 * massif)) ] ||
		fail ".sites $sites bytes, more than 10 times the Massif file's $massif"
	cp "$tmp/v2/p.massif" "$tmp/v1/" || exit 99
	sites_v1 "$tmp/v2/p.massif.sites" >"$tmp/v1/p.massif.sites" || exit 99
	echo "the same in version 1: $(stat -c %s "$tmp/v1/p.massif.sites") bytes"
	views "$tmp/v1"
	views "$tmp/v2"
	same_views "$tmp/v1" "$tmp/v2"
	grep -q '^MOST CALLS TO ALLOCATION FUNCTIONS' "$tmp/v2/text.out" ||
		fail "report: $(head -5 "$tmp/v2/text.out")"
	;;
*)
	usage "formats.sh fixture|python HEAPTRACE SRCDIR"
	;;
esac
pass_or_fail
