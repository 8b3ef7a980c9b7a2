#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Print a `sym` line for every call instruction in the functions of PROG that
# have line info (plus _start), as Valgrind would name the return address
# (function names demangled, as --alloc-fn and --ignore-fn match them):
# pc = load base + return address - 1, described "fn (file.c:line)", inline
# chains innermost first. Used to write and check the .events files; see
# README.md. Needs binutils (objdump, addr2line).
#
# usage: callsites.sh PROG [LOAD-BASE]   (LOAD-BASE: 0x108000, Valgrind's for
#                                         a PIE executable)
set -eu

prog=$1
base=${2:-0x108000}

# "func<TAB>return-address-minus-one" for each call, from the disassembly:
# the return address is the address of the next instruction.
objdump -d -C --no-show-raw-insn "$prog" | awk '
	/^[0-9a-f]+ <.*>:$/ {
		fn = $0; sub(/^[0-9a-f]+ </, "", fn); sub(/>:$/, "", fn)
		pending = 0; next
	}
	/^ *[0-9a-f]+:\t/ {
		addr = $1; sub(/:$/, "", addr)
		if (pending) { printf "%s\t%s\n", pending_fn, addr; pending = 0 }
		if ($0 ~ /\tcall/) { pending = 1; pending_fn = fn }
	}
' | while IFS="$(printf '\t')" read -r fn ra; do
	off=$(printf '%x' $((0x$ra - 1)))
	pc=$(printf '0x%X' $((0x$ra - 1 + base)))
	desc=$(addr2line -f -i -C -e "$prog" "$off" | paste - - |
		awk -F'\t' '{
			loc = $2; sub(/.*\//, "", loc); sub(/ \(discriminator [0-9]+\)/, "", loc)
			printf "%s%s (%s)", (NR > 1 ? " | " : ""), $1, loc
		}')
	case $desc in
	*'??:'* | *':?)'*)
		[ "$fn" = _start ] || continue
		desc="_start (in ./$(basename "$prog"))" ;;
	esac
	echo "sym $pc $fn | $desc"
done
