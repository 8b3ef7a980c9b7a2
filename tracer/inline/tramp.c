/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Trampoline encoding (x86-64). */
#include "tracer/inline/tramp.h"

#include <string.h>

size_t
tracer_tramp_encode(uint8_t out[TRACER_TRAMP_MAX], uint64_t at,
		    uint64_t entry, uint32_t idx)
{
	/* mov r11d, imm32: zero-extends into r11. */
	out[0] = 0x41;
	out[1] = 0xbb;
	memcpy(out + 2, &idx, 4);
	int64_t rel = (int64_t)(entry - (at + 11));
	if (rel >= INT32_MIN && rel <= INT32_MAX) {
		int32_t rel32 = (int32_t)rel;
		out[6] = 0xe9;
		memcpy(out + 7, &rel32, 4);
		return 11;
	}
	/* jmp qword [rip + 0], then the target. */
	static const uint8_t jmp_abs[] = { 0xff, 0x25, 0, 0, 0, 0 };
	memcpy(out + 6, jmp_abs, sizeof(jmp_abs));
	memcpy(out + 12, &entry, 8);
	return 20;
}
