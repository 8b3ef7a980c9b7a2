#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The two commands of the README:
#   ./dev.sh demo   install what is missing, build, profile examples/example.c
#   ./dev.sh test   install what is missing, build, run every test (plain,
#                   then under AddressSanitizer+UBSan, then a clang build)
#   ./dev.sh fuzz [SECONDS]
#                   build fuzz/'s libFuzzer targets (clang, ASan+UBSan) and
#                   run each for SECONDS (60); crashes land in fuzz/crashes/;
#                   FUZZ_TARGETS="maps elf" runs only those
set -eu
cd "$(dirname "$0")"

PACKAGES="gcc g++ clang meson ninja-build pkg-config libelf-dev libdw-dev libunwind-dev libcapstone-dev libiberty-dev rustc valgrind python3 libjemalloc2 libtcmalloc-minimal4 chromium nginx-light redis-server redis-tools apache2-utils libcap2-bin libprotobuf-c-dev protobuf-c-compiler zlib1g-dev golang-go jq libclang-rt-dev make libncurses-dev tmux"

install_missing() {
	missing=""
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
			missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "dev.sh: installing$missing"
	if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
}

build() {
	dir=$1; shift
	[ -f "$dir/build.ninja" ] || meson setup "$dir" "$@" >/dev/null
	ninja -C "$dir" >/dev/null
}

case "${1:-}" in
demo)
	install_missing
	build build
	cc -g -O0 -o build/example examples/example.c
	build/heaptrace run --time-unit=B --massif-out-file=build/massif.out.example \
		-- build/example
	ms_print build/massif.out.example
	;;
test)
	install_missing
	passed=0 failed=0 skipped=0
	# One meson test run; its counts are added to the totals.
	run_suite() {
		log=$(mktemp)
		status=0
		"$@" >"$log" 2>&1 || status=$?
		cat "$log"
		ok=$(sed -n 's/^Ok: *\([0-9]*\).*/\1/p' "$log" | tail -1)
		bad=$(sed -n 's/^Fail: *\([0-9]*\).*/\1/p' "$log" | tail -1)
		skip=$(sed -n 's/^Skipped: *\([0-9]*\).*/\1/p' "$log" | tail -1)
		to=$(sed -n 's/^Timeout: *\([0-9]*\).*/\1/p' "$log" | tail -1)
		passed=$((passed + ${ok:-0}))
		failed=$((failed + ${bad:-0} + ${to:-0}))
		skipped=$((skipped + ${skip:-0}))
		[ "$status" -eq 0 ] || [ "${bad:-0}" -gt 0 ] || failed=$((failed + 1))
		rm -f "$log"
	}
	build build
	run_suite meson test -C build --print-errorlogs
	build build-san -Db_sanitize=address,undefined -Db_lundef=false
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		run_suite meson test -C build-san --print-errorlogs
	CC=clang build build-clang
	echo "heaptrace: $passed passed, $failed failed, $skipped skipped"
	[ "$failed" -eq 0 ]
	;;
fuzz)
	install_missing
	seconds=${2:-60}
	targets="${FUZZ_TARGETS:-massif_read sites_read symcache maps elf}"
	[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz \
		-Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false >/dev/null
	ninja -C build-fuzz $(for t in $targets; do echo fuzz/$t; done) >/dev/null
	mkdir -p fuzz/crashes
	crashed=""
	for t in $targets; do
		# New inputs go to the build directory, not the tree: only
		# crashes are kept (fuzz/README in the README's "Fuzzing").
		mkdir -p "build-fuzz/fuzz/found-$t"
		log=build-fuzz/fuzz/$t.log
		status=0
		UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
			"build-fuzz/fuzz/$t" -max_total_time="$seconds" \
			-timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
			-artifact_prefix="fuzz/crashes/$t-" \
			"build-fuzz/fuzz/found-$t" "fuzz/corpus/$t" >"$log" 2>&1 ||
			status=$?
		last=$(grep -E '^#[0-9]+.*cov:' "$log" | tail -1)
		echo "fuzz $t: ${last:-no run} (status $status)"
		[ "$status" -eq 0 ] || { crashed="$crashed $t"; tail -40 "$log"; }
	done
	if [ -n "$crashed" ]; then
		echo "fuzz: crashes in$crashed: fuzz/crashes/ (logs: build-fuzz/fuzz/*.log)"
		exit 1
	fi
	echo "fuzz: no crash in $seconds s per target"
	;;
*)
	echo "usage: ./dev.sh demo|test|fuzz [SECONDS]" >&2
	exit 2
	;;
esac
