#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/tools/file-graph catches what it must: a made-up tree of small C
# files, compiled into a build directory with its compile_commands.json,
# with a circle (snapshot/a.c <-> snapshot/b.c), an upward call between
# directories (symbols/s.c -> cli/c.c), a call from tracer/proc up into
# tracer/inline, and a call between siblings (tracer/probes -> tracer/pages);
# then the same tree with every one of them removed passes.
# Usage: can_fail.sh FILE_GRAPH
set -u
. "$(dirname "$0")/../lib.sh" || exit 99
[ $# -eq 1 ] || usage "can_fail.sh FILE_GRAPH"
graph=$(abspath "$1")
need cc nm
scratch

# write_tree BAD: the sources; with BAD=1 the four faults are in them.
write_tree() {
	rm -rf "$tmp/src"
	mkdir -p "$tmp/src/build" "$tmp/src/snapshot" "$tmp/src/symbols" \
		"$tmp/src/cli" "$tmp/src/tracer/proc" "$tmp/src/tracer/inline" \
		"$tmp/src/tracer/probes" "$tmp/src/tracer/pages"
	local bad=$1
	echo 'void b(void); void a(void) { b(); }' >"$tmp/src/snapshot/a.c"
	if [ "$bad" = 1 ]; then
		echo 'void a(void); void b(void) { a(); }' >"$tmp/src/snapshot/b.c"
		echo 'void c(void); void s(void) { c(); }' >"$tmp/src/symbols/s.c"
		echo 'void i(void); void p(void) { i(); }' >"$tmp/src/tracer/proc/p.c"
		echo 'void g(void); void r(void) { g(); }' >"$tmp/src/tracer/probes/r.c"
	else
		echo 'void b(void) { }' >"$tmp/src/snapshot/b.c"
		echo 'void s(void) { }' >"$tmp/src/symbols/s.c"
		echo 'void p(void) { }' >"$tmp/src/tracer/proc/p.c"
		echo 'void i(void); void r(void) { i(); }' >"$tmp/src/tracer/probes/r.c"
	fi
	echo 'void s(void); void c(void) { s(); }' >"$tmp/src/cli/c.c"
	echo 'void p(void); void i(void) { p(); }' >"$tmp/src/tracer/inline/i.c"
	echo 'void i(void); void g(void) { i(); }' >"$tmp/src/tracer/pages/g.c"
	local f sep="" json="["
	for f in snapshot/a.c snapshot/b.c symbols/s.c cli/c.c tracer/proc/p.c \
		 tracer/inline/i.c tracer/probes/r.c tracer/pages/g.c; do
		local o="${f//\//_}.o"
		cc -c -o "$tmp/src/build/$o" "$tmp/src/$f" ||
			harness "cannot compile $f"
		json+="$sep{\"directory\": \"$tmp/src/build\", \"file\": \"../$f\", \"output\": \"$o\"}"
		sep=", "
	done
	echo "$json]" >"$tmp/src/build/compile_commands.json"
}

write_tree 1
expect_status 1 "$graph" "$tmp/src/build"
for want in "circle among: snapshot/a.c snapshot/b.c" \
	    "upward call: symbols/s.c -> cli/c.c (c)" \
	    "upward or sideways call: tracer/proc/p.c -> tracer/inline/i.c (i)" \
	    "upward or sideways call: tracer/probes/r.c -> tracer/pages/g.c (g)"; do
	grep -qxF "$want" "$tmp/out" || fail "not reported: $want"
done

write_tree 0
expect_status 0 "$graph" "$tmp/src/build"
grep -q "no circle" "$tmp/out" || fail "the clean tree: $(cat "$tmp/out")"

pass_or_fail "file-graph reports all four faults, and passes the clean tree"
