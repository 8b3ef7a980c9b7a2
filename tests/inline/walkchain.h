/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Call chains of chosen frame kinds for the stub's stack walk
   (test_walk.c, test_memo.c): each function does its part of the chain, then calls
   walk_next() for the rest, which ends in the chain's leaf. The kinds
   live in files compiled differently (meson.build): with and without a
   frame pointer, with a variable-length array (CFA from rbp even without
   one), and without any CFI (the frame-pointer rule). */
#ifndef HT_TESTS_INLINE_WALKCHAIN_H
#define HT_TESTS_INLINE_WALKCHAIN_H

#include <stdint.h>

struct walk_chain {
	const char *kinds; /* one letter per frame: F fp, N no fp, V vla,
			      C no CFI; the leaf after the last */
	uint64_t (*leaf)(struct walk_chain *c);
	uint64_t sum;      /* keeps every frame's work alive */
};

/* The function for C->kinds[I], or the leaf past the end (walkchain.c). */
uint64_t walk_next(struct walk_chain *c, unsigned i);

uint64_t walk_fp(struct walk_chain *c, unsigned i);
uint64_t walk_nofp(struct walk_chain *c, unsigned i);
uint64_t walk_vla(struct walk_chain *c, unsigned i);
uint64_t walk_nocfi(struct walk_chain *c, unsigned i);

#endif
