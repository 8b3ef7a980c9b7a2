/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frames without a frame pointer: CFA = rsp + the frame's size, rbp
   pushed like any callee-saved register or left alone; and a
   variable-length array, whose frame gets an rbp-based CFA all the same.
   Built with -fomit-frame-pointer (meson.build). */
#include "walkchain.h"

__attribute__((noinline)) uint64_t
walk_nofp(struct walk_chain *c, unsigned i)
{
	/* Values live across the call: callee-saved registers saved. */
	uint64_t a = c->sum * 3 + i, b = c->sum ^ i, d = c->sum + 11;
	uint64_t r = walk_next(c, i + 1);
	return r + a * b + d;
}

__attribute__((noinline)) uint64_t
walk_vla(struct walk_chain *c, unsigned i)
{
	volatile uint8_t buf[16 + (c->sum & 7) + i];
	buf[0] = (uint8_t)i;
	uint64_t r = walk_next(c, i + 1);
	return r + buf[0];
}
