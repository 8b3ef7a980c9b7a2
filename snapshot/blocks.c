/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's table of live blocks by address. Every event looks a block
   up, so the blocks are stored in the hash table itself: a look-up is one
   multiply and, at the load kept here, usually one cache line, where a map
   to an index into a separate array costs three or four. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define MIN_BITS 10

/* Fibonacci hashing: the top bits of the product depend on every bit of
   the address, including the low ones where heap addresses differ. */
static size_t
home(const struct block_table *bt, uint64_t addr)
{
	return (size_t)((addr * 0x9e3779b97f4a7c15ULL) >> bt->shift);
}

static void
alloc_slots(struct block_table *bt, unsigned bits)
{
	bt->slots = ht_xcalloc((size_t)1 << bits, sizeof(*bt->slots));
	bt->mask = ((size_t)1 << bits) - 1;
	bt->shift = 64 - bits;
	bt->count = 0;
}

void
block_table_init(struct block_table *bt)
{
	alloc_slots(bt, MIN_BITS);
}

void
block_table_fini(struct block_table *bt)
{
	free(bt->slots);
	memset(bt, 0, sizeof(*bt));
}

void
block_table_copy(struct block_table *dst, const struct block_table *src)
{
	*dst = *src;
	dst->slots = ht_xmemdup_array(src->slots, src->mask + 1, src->mask + 1,
				      sizeof(*src->slots));
}

struct block *
block_table_find(const struct block_table *bt, uint64_t addr)
{
	for (size_t i = home(bt, addr);; i = (i + 1) & bt->mask) {
		struct block *b = &bt->slots[i];
		if (!b->used)
			return NULL;
		if (b->addr == addr)
			return b;
	}
}

static void
put(struct block_table *bt, const struct block *b)
{
	size_t i = home(bt, b->addr);
	while (bt->slots[i].used)
		i = (i + 1) & bt->mask;
	bt->slots[i] = *b;
	bt->slots[i].used = true;
	bt->count++;
}

/* Kept at most half full: an insert probes to an empty slot, and linear
   probing's runs grow quickly past that (measured: three quarters made
   the benchmark a tenth slower, fewer cache misses notwithstanding). */
static void
grow(struct block_table *bt)
{
	struct block_table old = *bt;
	alloc_slots(bt, 64 - old.shift + 1);
	for (size_t i = 0; i <= old.mask; i++)
		if (old.slots[i].used)
			put(bt, &old.slots[i]);
	free(old.slots);
}

void
block_table_insert(struct block_table *bt, const struct block *b)
{
	if ((bt->count + 1) * 2 > bt->mask + 1)
		grow(bt);
	put(bt, b);
}

bool
block_table_take(struct block_table *bt, uint64_t addr, struct block *out)
{
	struct block *b = block_table_find(bt, addr);
	if (!b)
		return false;
	*out = *b;
	/* Backward shift: pull later members of the probe run into the hole
	   unless their home lies cyclically in (hole, j]. */
	size_t hole = (size_t)(b - bt->slots);
	for (size_t j = (hole + 1) & bt->mask; bt->slots[j].used;
	     j = (j + 1) & bt->mask) {
		size_t h = home(bt, bt->slots[j].addr);
		if (((j - h) & bt->mask) >= ((j - hole) & bt->mask)) {
			bt->slots[hole] = bt->slots[j];
			hole = j;
		}
	}
	bt->slots[hole].used = false;
	bt->count--;
	return true;
}
