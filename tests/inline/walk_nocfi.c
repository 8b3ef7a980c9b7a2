/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A frame no CFI describes: built without unwind tables but with a frame
   pointer (meson.build), so unwinders follow the rbp chain through it. */
#include "walkchain.h"

__attribute__((noinline)) uint64_t
walk_nocfi(struct walk_chain *c, unsigned i)
{
	volatile uint64_t local = i;
	uint64_t r = walk_next(c, i + 1);
	return r + local;
}
