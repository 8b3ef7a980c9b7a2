#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The two commands of the README:
#   ./dev.sh demo   install what is missing, build, profile examples/example.c
#   ./dev.sh test   install what is missing, build, run every test (plain,
#                   then under AddressSanitizer+UBSan, then a clang build)
set -eu
cd "$(dirname "$0")"

PACKAGES="gcc clang meson ninja-build pkg-config libelf-dev libdw-dev libunwind-dev valgrind python3"

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
	build build
	meson test -C build --print-errorlogs
	build build-san -Db_sanitize=address,undefined -Db_lundef=false
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		meson test -C build-san --print-errorlogs
	CC=clang build build-clang
	;;
*)
	echo "usage: ./dev.sh demo|test" >&2
	exit 2
	;;
esac
