/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frames with a frame pointer: CFA = rbp + 16 past the prologue. Built
   with -fno-omit-frame-pointer (meson.build). */
#include "walkchain.h"

__attribute__((noinline)) uint64_t
walk_fp(struct walk_chain *c, unsigned i)
{
	volatile uint64_t local[4] = { i, i * 3, i * 5, i * 7 };
	uint64_t r = walk_next(c, i + 1);
	return r + local[0] + local[3];
}
