/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine's table of live blocks by address. Every event looks a block
   up, so the blocks are stored in the hash table itself: a look-up is one
   multiply and, at the load kept here, usually one cache line, where a map
   to an index into a separate array costs three or four.

   With hundreds of thousands of live blocks the table is tens of MiB and
   that one line is a cache miss (and, in a VM, a costly TLB miss): it was
   the tracer's largest cost on allocation-heavy programs. Two things cut
   it. Blocks of one 4 KiB page of the heap get neighbouring slots, in
   address order, so the runs of allocations and frees programs make in
   nearby memory touch a few lines, and sequential ones are prefetched by
   the hardware; only the page number is hashed, to spread the pages. And
   large tables are asked for on huge pages. Measured on perl building a
   200,000-key hash: the tracer's CPU time fell by about a third. */
#include "snap_priv.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/err.h"
#include "common/xalloc.h"

#define MIN_BITS 10
/* Slots of one page: its blocks are at least 32 bytes apart in glibc. */
#define PAGE_SLOTS_SHIFT 7
#define HUGE_PAGE ((size_t)2 << 20)

/* The page number's Fibonacci hash (its top bits depend on every bit),
   plus the block's place in its page, in units of 32 bytes. */
static size_t
home(const struct block_table *bt, uint64_t addr)
{
	size_t page = (size_t)(((addr >> 12) * 0x9e3779b97f4a7c15ULL) >>
			       bt->shift);
	size_t in_page = (size_t)(addr >> 5) & ((1u << PAGE_SLOTS_SHIFT) - 1);
	return (page + in_page) & bt->mask;
}

static size_t
slots_bytes(const struct block_table *bt)
{
	return (bt->mask + 1) * sizeof(*bt->slots);
}

/* Zeroed memory for the slots: from mmap, with huge pages asked for, when
   at least one huge page large. */
static void
alloc_slots(struct block_table *bt, unsigned bits)
{
	bt->mask = ((size_t)1 << bits) - 1;
	bt->shift = 64 - bits;
	bt->count = 0;
	size_t bytes = slots_bytes(bt);
	bt->mapped = bytes >= HUGE_PAGE;
	if (!bt->mapped) {
		bt->slots = ht_xcalloc(bt->mask + 1, sizeof(*bt->slots));
		return;
	}
	/* Over-allocate by one huge page to align the start on one. */
	uint8_t *raw = mmap(NULL, bytes + HUGE_PAGE, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		ht_die(1, "out of memory (block table of %zu bytes)", bytes);
	uintptr_t start = ((uintptr_t)raw + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	size_t head = start - (uintptr_t)raw;
	if (head)
		munmap(raw, head);
	munmap((uint8_t *)start + bytes, HUGE_PAGE - head);
	/* Only a hint: without huge pages the table works the same. */
	(void)madvise((void *)start, bytes, MADV_HUGEPAGE);
	bt->slots = (struct block *)start;
}

static void
free_slots(struct block_table *bt)
{
	if (bt->mapped)
		munmap(bt->slots, slots_bytes(bt));
	else
		free(bt->slots);
}

void
block_table_init(struct block_table *bt)
{
	alloc_slots(bt, MIN_BITS);
}

void
block_table_fini(struct block_table *bt)
{
	free_slots(bt);
	memset(bt, 0, sizeof(*bt));
}

void
block_table_copy(struct block_table *dst, const struct block_table *src)
{
	alloc_slots(dst, 64 - src->shift);
	memcpy(dst->slots, src->slots, slots_bytes(src));
	dst->count = src->count;
}

void
block_table_remap_sites(struct block_table *bt, const uint32_t *remap)
{
	for (size_t i = 0; i <= bt->mask; i++)
		if (bt->slots[i].addr && bt->slots[i].site)
			bt->slots[i].site = remap[bt->slots[i].site];
}

void
block_table_mark_leaves(const struct block_table *bt, bool *keep)
{
	for (size_t i = 0; i <= bt->mask; i++)
		if (bt->slots[i].addr)
			keep[bt->slots[i].leaf] = true;
}

void
block_table_remap_leaves(struct block_table *bt, const uint32_t *remap)
{
	for (size_t i = 0; i <= bt->mask; i++)
		if (bt->slots[i].addr && bt->slots[i].leaf)
			bt->slots[i].leaf = remap[bt->slots[i].leaf];
}

struct block *
block_table_find(const struct block_table *bt, uint64_t addr)
{
	for (size_t i = home(bt, addr);; i = (i + 1) & bt->mask) {
		struct block *b = &bt->slots[i];
		if (!b->addr)
			return NULL;
		if (b->addr == addr)
			return b;
	}
}

static void
put(struct block_table *bt, const struct block *b)
{
	size_t i = home(bt, b->addr);
	while (bt->slots[i].addr)
		i = (i + 1) & bt->mask;
	bt->slots[i] = *b;
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
		if (old.slots[i].addr)
			put(bt, &old.slots[i]);
	free_slots(&old);
}

void
block_table_insert(struct block_table *bt, const struct block *b)
{
	if (!b->addr)
		return; /* would read as an empty slot */
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
	for (size_t j = (hole + 1) & bt->mask; bt->slots[j].addr;
	     j = (j + 1) & bt->mask) {
		size_t h = home(bt, bt->slots[j].addr);
		if (((j - h) & bt->mask) >= ((j - hole) & bt->mask)) {
			bt->slots[hole] = bt->slots[j];
			hole = j;
		}
	}
	bt->slots[hole].addr = 0;
	bt->count--;
	return true;
}
