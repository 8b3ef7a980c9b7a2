/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hundreds of allocations in phases (growth with transient blocks, freeing
   every other block, a buffer grown by realloc, teardown newest first), so
   that every --max-snapshots culls several times over and peaks move.
   Allocation sequence: see cull.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define ROUNDS 120

static void *slot[2 * ROUNDS];

NOINLINE void *alloc_a(size_t n) { return malloc(n); }
NOINLINE void *alloc_b(size_t n) { return malloc(n); }
NOINLINE void *scratch(size_t n) { return calloc(n, 1); }

int main(void)
{
	void *buf;

	for (unsigned j = 0; j < ROUNDS; j++) {
		slot[2 * j] = alloc_a(16 + (j * 37) % 500);
		slot[2 * j + 1] = alloc_b(100 + (j * 53) % 900);
		void *t = scratch(2000 + (j * 11) % 300);
		free(t);
	}
	for (unsigned j = 0; j < ROUNDS; j++)
		free(slot[2 * j + 1]);
	buf = alloc_a(256);
	for (unsigned j = 1; j < 60; j++)
		buf = realloc(buf, 256 * (j + 1));
	free(buf);
	for (unsigned j = ROUNDS; j-- > 0;)
		free(slot[2 * j]);
	return 0;
}
