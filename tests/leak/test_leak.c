/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the leak classifier (snapshot/leak.c) on hand-made address
   spaces: a few mapped regions in buffers, the blocks in a "heap" region,
   the roots in a "data" region. Every expected verdict is worked out from
   memcheck 3.19's rules (see leak.c's top comment). The test_memcheck_*
   tests replay small C programs that were run under real memcheck, and
   check its LEAK SUMMARY (given in their comments); the programs are at
   the end of this file, not built (no valgrind needed here). Then the
   optional callbacks: a view of copied memory (the same verdicts as the
   reads alone), and the allocator's own pointers found in roots. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot/leak.h"

#include "tests/check.h"

enum {
	HEAP = 0x10000000,
	DATA = 0x20000000,
	DATA2 = 0x20002000, /* DATA+0x1000 .. DATA2 is unmapped */
	BIG = 0x30000000,
	VT1 = 0x400000,
	VT2 = 0x400100,
	PAGE_SZ = 4096,
};

struct region {
	uint64_t addr;
	size_t len;
	unsigned char *mem;
};

static struct region regions[8];
static int nregions;
static int reads;

static void
reset(void)
{
	for (int i = 0; i < nregions; i++)
		free(regions[i].mem);
	nregions = 0;
	reads = 0;
}

static void
map(uint64_t addr, size_t len)
{
	if (nregions == 8) {
		fprintf(stderr, "too many regions\n");
		exit(EXIT_HARNESS);
	}
	regions[nregions].addr = addr;
	regions[nregions].len = len;
	regions[nregions].mem = calloc(1, len);
	if (!regions[nregions].mem)
		exit(EXIT_HARNESS);
	nregions++;
}

static struct region *
region_of(uint64_t addr)
{
	for (int i = 0; i < nregions; i++)
		if (addr >= regions[i].addr &&
		    addr - regions[i].addr < regions[i].len)
			return &regions[i];
	return NULL;
}

/* Writes word V at ADDR (any alignment), which must be mapped. */
static void
put(uint64_t addr, uint64_t v)
{
	struct region *r = region_of(addr);
	if (!r || addr + 8 > r->addr + r->len) {
		fprintf(stderr, "put outside the regions: %#llx\n",
			(unsigned long long)addr);
		exit(EXIT_HARNESS);
	}
	memcpy(r->mem + (addr - r->addr), &v, 8);
}

/* The fake process_vm_readv: stops at the end of a region. */
static ssize_t
fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	reads++;
	struct region *r = region_of(addr);
	if (!r)
		return -1;
	size_t avail = r->len - (size_t)(addr - r->addr);
	size_t n = len < avail ? len : avail;
	memcpy(buf, r->mem + (addr - r->addr), n);
	return (ssize_t)n;
}

static int
fake_vtable(void *ctx, uint64_t addr)
{
	(void)ctx;
	return addr == VT1 || addr == VT2;
}

#define MAXB 16
static struct leak_block blocks[MAXB];
static size_t nblocks;
static struct leak_root roots[8];
static size_t nroots;
static uint64_t regs[8];
static size_t nregs;
static struct leak_totals tot;

/* A fresh space: 64 KiB of heap, one page of data (the usual root). */
static void
setup(void)
{
	reset();
	memset(blocks, 0, sizeof(blocks));
	nblocks = nroots = nregs = 0;
	map(HEAP, 64 << 10);
	map(DATA, PAGE_SZ);
}

/* A block at HEAP+OFF; returns its index. */
static size_t
block(uint64_t off, uint64_t size)
{
	blocks[nblocks].addr = HEAP + off;
	blocks[nblocks].size = size;
	blocks[nblocks].id = (void *)(uintptr_t)(nblocks + 1);
	return nblocks++;
}

static void
root(uint64_t start, uint64_t len)
{
	roots[nroots].start = start;
	roots[nroots].len = len;
	nroots++;
}

static void
run_with(unsigned heuristics, leak_vtable_fn vt)
{
	struct leak_input in = {
		.blocks = blocks,
		.nblocks = nblocks,
		.roots = roots,
		.nroots = nroots,
		.regs = regs,
		.nregs = nregs,
		.read = fake_read,
		.is_vtable = vt,
		.heuristics = heuristics,
	};
	leak_classify(&in, &tot);
}

static void
run(void)
{
	run_with(LEAK_HEUR_ALL, NULL);
}

#define KIND(i, k)                                                          \
	CHECK(blocks[i].kind == (k), "block %zu: %s, expected %s", (size_t)(i), \
	      leak_kind_name(blocks[i].kind), leak_kind_name(k))
#define TOTAL(k, by, bl)                                                    \
	CHECK(tot.bytes[k] == (by) && tot.blocks[k] == (bl),                \
	      "%s: %llu bytes in %llu blocks", leak_kind_name(k),           \
	      (unsigned long long)tot.bytes[k],                             \
	      (unsigned long long)tot.blocks[k])

/* Each root is one word of DATA; a start pointer keeps a block. */
static void
test_start_pointer(void)
{
	setup();
	size_t a = block(0, 32);
	put(DATA + 8, HEAP);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_REACHABLE);
	TOTAL(LEAK_REACHABLE, 32, 1);
	TOTAL(LEAK_DEFINITE, 0, 0);
	CHECK(tot.scanned_bytes == PAGE_SZ + 32, "scanned %llu",
	      (unsigned long long)tot.scanned_bytes);
}

/* Only an interior pointer: possibly lost. */
static void
test_interior_pointer(void)
{
	setup();
	size_t a = block(0, 32);
	put(DATA, HEAP + 16);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_POSSIBLE);
	TOTAL(LEAK_POSSIBLE, 32, 1);
}

/* No pointer at all: definitely lost, with an empty clique. */
static void
test_unreferenced(void)
{
	setup();
	size_t a = block(0, 32);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_DEFINITE);
	CHECK(blocks[a].indirect_bytes == 0 && blocks[a].indirect_blocks == 0,
	      "clique of a lone block");
	TOTAL(LEAK_DEFINITE, 32, 1);
}

/* A->B->C, A unreferenced: A definite with B and C in its clique. Then
   the same chain laid out backwards in memory, C lowest: C and then B are
   clique leaders first, each swallowed by the next (memcheck merges the
   cliques), with the same result. */
static void
test_chain(void)
{
	for (int backwards = 0; backwards < 2; backwards++) {
		setup();
		uint64_t oa = backwards ? 0x200 : 0, ob = 0x100,
			 oc = backwards ? 0 : 0x200;
		size_t a = block(oa, 32), b = block(ob, 48), c = block(oc, 64);
		put(HEAP + oa + 8, HEAP + ob);
		put(HEAP + ob + 40, HEAP + oc);
		root(DATA, PAGE_SZ);
		run();
		KIND(a, LEAK_DEFINITE);
		KIND(b, LEAK_INDIRECT);
		KIND(c, LEAK_INDIRECT);
		CHECK(blocks[a].indirect_bytes == 112 &&
			      blocks[a].indirect_blocks == 2,
		      "backwards %d: clique %llu bytes %llu blocks", backwards,
		      (unsigned long long)blocks[a].indirect_bytes,
		      (unsigned long long)blocks[a].indirect_blocks);
		CHECK(blocks[b].parent == a && blocks[c].parent == b,
		      "parents %zu %zu", blocks[b].parent, blocks[c].parent);
		CHECK(blocks[b].indirect_bytes == 0, "indirect has no clique");
		TOTAL(LEAK_DEFINITE, 32, 1);
		TOTAL(LEAK_INDIRECT, 112, 2);
	}
}

/* Interior pointers count as well as start pointers inside a clique. */
static void
test_clique_interior(void)
{
	setup();
	size_t a = block(0, 32), b = block(0x100, 48);
	put(HEAP + 0, HEAP + 0x100 + 24);
	run();
	KIND(a, LEAK_DEFINITE);
	KIND(b, LEAK_INDIRECT);
	CHECK(blocks[a].indirect_bytes == 48, "clique");
}

/* A<->B unreferenced: the lower address leads. With X (highest address)
   pointing at A, the leader, X leads and both A and B join its clique;
   pointing at B instead, already gathered by A, X is a clique alone
   (memcheck's order dependence: B is no longer unreached when X's turn
   comes). */
static void
test_cycle(void)
{
	setup();
	size_t a = block(0x100, 32), b = block(0x200, 16);
	put(HEAP + 0x100, HEAP + 0x200);
	put(HEAP + 0x208, HEAP + 0x100);
	run();
	KIND(a, LEAK_DEFINITE);
	KIND(b, LEAK_INDIRECT);
	CHECK(blocks[a].indirect_bytes == 16 && blocks[a].indirect_blocks == 1,
	      "cycle clique");
	TOTAL(LEAK_DEFINITE, 32, 1);
	TOTAL(LEAK_INDIRECT, 16, 1);

	for (int to_b = 0; to_b < 2; to_b++) {
		setup();
		size_t x = block(0x300, 8);
		a = block(0x100, 32);
		b = block(0x200, 16);
		put(HEAP + 0x100, HEAP + 0x200);
		put(HEAP + 0x208, HEAP + 0x100);
		put(HEAP + 0x300, HEAP + (to_b ? 0x200 : 0x100));
		run();
		KIND(x, LEAK_DEFINITE);
		KIND(a, to_b ? LEAK_DEFINITE : LEAK_INDIRECT);
		KIND(b, LEAK_INDIRECT);
		if (to_b) {
			CHECK(blocks[x].indirect_bytes == 0 &&
				      blocks[a].indirect_bytes == 16,
			      "x alone, a leads the cycle");
			TOTAL(LEAK_DEFINITE, 40, 2);
			TOTAL(LEAK_INDIRECT, 16, 1);
		} else {
			CHECK(blocks[x].indirect_bytes == 48 &&
				      blocks[x].indirect_blocks == 2,
			      "x's clique %llu",
			      (unsigned long long)blocks[x].indirect_bytes);
			CHECK(blocks[a].parent == x && blocks[b].parent == a,
			      "parents");
			TOTAL(LEAK_DEFINITE, 8, 1);
			TOTAL(LEAK_INDIRECT, 48, 2);
		}
	}
}

/* A cycle a root points into: all reachable. */
static void
test_cycle_from_root(void)
{
	setup();
	size_t a = block(0x100, 32), b = block(0x200, 16);
	put(HEAP + 0x100, HEAP + 0x200);
	put(HEAP + 0x208, HEAP + 0x100);
	put(DATA + 64, HEAP + 0x200);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_REACHABLE);
	KIND(b, LEAK_REACHABLE);
}

/* One past the end is no reference to the block; it is a start pointer
   to a block that begins there. */
static void
test_one_past_end(void)
{
	setup();
	size_t a = block(0, 32);
	put(DATA, HEAP + 32);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_DEFINITE);

	setup();
	a = block(0, 32);
	size_t b = block(32, 16);
	put(DATA, HEAP + 32);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_DEFINITE);
	KIND(b, LEAK_REACHABLE);
}

/* Reached from a possibly-lost block, even by a start pointer: possibly
   lost (memcheck: the prior is not definite). Then a root's start pointer
   to Q as well: Q and what it points to are upgraded. */
static void
test_through_possible(void)
{
	for (int direct = 0; direct < 2; direct++) {
		setup();
		size_t p = block(0, 32), q = block(0x100, 32),
		       r = block(0x200, 32);
		put(DATA, HEAP + 16); /* interior: P possible */
		put(HEAP + 0, HEAP + 0x100);
		put(HEAP + 0x100, HEAP + 0x200);
		if (direct)
			put(DATA + 8, HEAP + 0x100);
		root(DATA, PAGE_SZ);
		run();
		KIND(p, LEAK_POSSIBLE);
		KIND(q, direct ? LEAK_REACHABLE : LEAK_POSSIBLE);
		KIND(r, direct ? LEAK_REACHABLE : LEAK_POSSIBLE);
		TOTAL(LEAK_INDIRECT, 0, 0);
		TOTAL(LEAK_DEFINITE, 0, 0);
	}
}

/* Possible first (interior pointer met first), then reachable: rescanned,
   so what it points to becomes reachable too. */
static void
test_upgrade(void)
{
	setup();
	size_t a = block(0, 32), b = block(0x100, 32);
	put(DATA, HEAP + 8);
	put(DATA + 0x800, HEAP);
	put(HEAP + 24, HEAP + 0x100);
	root(DATA, PAGE_SZ);
	run_with(0, NULL);
	KIND(a, LEAK_REACHABLE);
	KIND(b, LEAK_REACHABLE);
}

/* Registers are roots too, with the same start/interior rule. */
static void
test_registers(void)
{
	setup();
	size_t a = block(0, 32), b = block(0x100, 32), c = block(0x200, 32);
	regs[nregs++] = 0;
	regs[nregs++] = HEAP;
	regs[nregs++] = HEAP + 0x100 + 31;
	regs[nregs++] = HEAP + 0x200 + 32;
	run();
	KIND(a, LEAK_REACHABLE);
	KIND(b, LEAK_POSSIBLE);
	KIND(c, LEAK_DEFINITE);
}

/* Only 8-aligned words are pointers, in roots and in blocks; a root
   range's unaligned ends are rounded inwards. */
static void
test_unaligned(void)
{
	setup();
	size_t a = block(0, 32), b = block(0x100, 32);
	put(DATA + 4, HEAP);
	put(HEAP + 0x100 + 20, HEAP); /* in B, unaligned: not seen */
	put(DATA + 16, HEAP + 0x100);
	root(DATA, PAGE_SZ);
	run();
	KIND(a, LEAK_DEFINITE);
	KIND(b, LEAK_REACHABLE);

	setup();
	a = block(0, 32);
	put(DATA + 8, HEAP);
	root(DATA + 4, 8); /* [DATA+4, DATA+12): no whole aligned word */
	run();
	KIND(a, LEAK_DEFINITE);
	CHECK(tot.scanned_bytes == 32, "scanned %llu",
	      (unsigned long long)tot.scanned_bytes);
	nroots = 0;
	root(DATA + 4, 12); /* [DATA+4, DATA+16): the word at DATA+8 */
	run();
	KIND(a, LEAK_REACHABLE);
}

/* A zero-sized block is referenced by its address (memcheck counts it as
   one byte long), not by the next address; it counts 0 bytes, 1 block. */
static void
test_zero_size(void)
{
	setup();
	size_t z = block(0x100, 0), y = block(0x200, 0), w = block(0x300, 0);
	put(DATA, HEAP + 0x100);
	put(DATA + 8, HEAP + 0x301);
	root(DATA, PAGE_SZ);
	run();
	KIND(z, LEAK_REACHABLE);
	KIND(y, LEAK_DEFINITE);
	KIND(w, LEAK_DEFINITE);
	TOTAL(LEAK_DEFINITE, 0, 2);
	TOTAL(LEAK_REACHABLE, 0, 1);
}

/* Each heuristic turns one kind of interior pointer into a start pointer;
   with heuristics off (--leak-check-heuristics=none) they stay possible. */
static void
test_heuristics(void)
{
	for (int on = 0; on < 2; on++) {
		setup();
		/* length64: first word = size - 8 */
		size_t l = block(0x000, 48);
		put(HEAP + 0x000, 40);
		put(DATA + 0, HEAP + 0x000 + 8);
		/* newarray: first word = element count dividing size - 8 */
		size_t n = block(0x100, 56);
		put(HEAP + 0x100, 3);
		put(DATA + 8, HEAP + 0x100 + 8);
		/* stdstring: length <= capacity, 24 + capacity + 1 == size */
		size_t s = block(0x200, 40);
		put(HEAP + 0x200, 5);
		put(HEAP + 0x208, 15);
		put(DATA + 16, HEAP + 0x200 + 24);
		/* stdstring layout but length > capacity: no */
		size_t s2 = block(0x300, 40);
		put(HEAP + 0x300, 16);
		put(HEAP + 0x308, 15);
		put(DATA + 24, HEAP + 0x300 + 24);
		/* multipleinheritance: vtables at the start and at ptr */
		size_t m = block(0x400, 32);
		put(HEAP + 0x400, VT1);
		put(HEAP + 0x410, VT2);
		put(DATA + 32, HEAP + 0x410);
		/* newarray's count not dividing: no */
		size_t n2 = block(0x500, 56);
		put(HEAP + 0x500, 5);
		put(DATA + 40, HEAP + 0x500 + 8);
		root(DATA, PAGE_SZ);
		run_with(on ? LEAK_HEUR_ALL : 0, fake_vtable);
		enum leak_kind yes = on ? LEAK_REACHABLE : LEAK_POSSIBLE;
		KIND(l, yes);
		KIND(n, yes);
		KIND(s, yes);
		KIND(m, yes);
		KIND(s2, LEAK_POSSIBLE);
		KIND(n2, LEAK_POSSIBLE);
		if (on) {
			CHECK(blocks[l].heuristic == LEAK_HEUR_LENGTH64 &&
				      blocks[n].heuristic == LEAK_HEUR_NEWARRAY &&
				      blocks[s].heuristic == LEAK_HEUR_STDSTRING &&
				      blocks[m].heuristic ==
					      LEAK_HEUR_MULTIPLEINHERITANCE,
			      "heuristics %d %d %d %d", blocks[l].heuristic,
			      blocks[n].heuristic, blocks[s].heuristic,
			      blocks[m].heuristic);
			CHECK(tot.heur_blocks[LEAK_HEUR_LENGTH64] == 1 &&
				      tot.heur_bytes[LEAK_HEUR_NEWARRAY] == 56,
			      "heuristic totals");
			TOTAL(LEAK_REACHABLE, 48 + 56 + 40 + 32, 4);
		} else {
			CHECK(blocks[l].heuristic == LEAK_HEUR_NONE, "off");
		}
	}

	/* multipleinheritance without a vtable oracle never fires */
	setup();
	size_t m = block(0x400, 32);
	put(HEAP + 0x400, VT1);
	put(HEAP + 0x410, VT2);
	put(DATA, HEAP + 0x410);
	root(DATA, PAGE_SZ);
	run();
	KIND(m, LEAK_POSSIBLE);
}

/* memcheck's quirks around heuristics: a heuristic match from a possible
   block leaves the block possible but still counted "via heuristic"; a
   start pointer met later forgets the heuristic. */
static void
test_heuristic_quirks(void)
{
	setup();
	size_t p = block(0, 32), l = block(0x100, 48);
	put(DATA, HEAP + 16);
	put(HEAP, HEAP + 0x100 + 8);
	put(HEAP + 0x100, 40);
	root(DATA, PAGE_SZ);
	run();
	KIND(p, LEAK_POSSIBLE);
	KIND(l, LEAK_POSSIBLE);
	CHECK(blocks[l].heuristic == LEAK_HEUR_LENGTH64, "remembered");
	CHECK(tot.heur_blocks[LEAK_HEUR_LENGTH64] == 1, "counted");

	setup();
	l = block(0x100, 48);
	put(HEAP + 0x100, 40);
	put(DATA, HEAP + 0x100 + 8);
	put(DATA + 8, HEAP + 0x100);
	root(DATA, PAGE_SZ);
	run();
	KIND(l, LEAK_REACHABLE);
	CHECK(blocks[l].heuristic == LEAK_HEUR_NONE, "cleared");
	CHECK(tot.heur_blocks[LEAK_HEUR_LENGTH64] == 0, "not counted");
}

/* An unreadable page inside a root range is skipped, the scan goes on. */
static void
test_unreadable(void)
{
	setup();
	map(DATA2, PAGE_SZ);
	size_t a = block(0, 32), b = block(0x100, 32);
	put(DATA2 + 0xff8, HEAP);
	put(DATA + 0xff8, HEAP + 0x100);
	root(DATA, 3 * PAGE_SZ);
	run();
	KIND(a, LEAK_REACHABLE);
	KIND(b, LEAK_REACHABLE);
	CHECK(tot.unreadable_bytes == PAGE_SZ, "unreadable %llu",
	      (unsigned long long)tot.unreadable_bytes);
	CHECK(tot.scanned_bytes == 2 * PAGE_SZ + 64, "scanned %llu",
	      (unsigned long long)tot.scanned_bytes);
}

/* Roots larger than a read chunk (64 KiB): words on either side of the
   chunk boundaries are all seen; reads are chunked, not word by word. */
static void
test_big_root(void)
{
	setup();
	map(BIG, 200 << 10);
	size_t a = block(0, 16), b = block(0x100, 16), c = block(0x200, 16);
	put(BIG + (64 << 10) - 8, HEAP);
	put(BIG + (64 << 10), HEAP + 0x100);
	put(BIG + (200 << 10) - 8, HEAP + 0x200);
	root(BIG, 200 << 10);
	run();
	KIND(a, LEAK_REACHABLE);
	KIND(b, LEAK_REACHABLE);
	KIND(c, LEAK_REACHABLE);
	CHECK(reads == 4 + 3, "%d reads", reads); /* 4 chunks, 3 blocks */
}

/* Blocks given in any order; totals as LEAK SUMMARY counts them. */
static void
test_unsorted_totals(void)
{
	setup();
	size_t d = block(0x500, 100), r = block(0x000, 10),
	       i = block(0x300, 30), p = block(0x100, 20);
	put(DATA, HEAP);            /* r reachable */
	put(HEAP, HEAP + 0x100 + 4); /* r -> inside p: possible */
	put(HEAP + 0x500, HEAP + 0x300); /* d -> i */
	root(DATA, PAGE_SZ);
	run();
	KIND(d, LEAK_DEFINITE);
	KIND(r, LEAK_REACHABLE);
	KIND(i, LEAK_INDIRECT);
	KIND(p, LEAK_POSSIBLE);
	CHECK(blocks[d].indirect_bytes == 30, "clique");
	TOTAL(LEAK_DEFINITE, 100, 1);
	TOTAL(LEAK_INDIRECT, 30, 1);
	TOTAL(LEAK_POSSIBLE, 20, 1);
	TOTAL(LEAK_REACHABLE, 10, 1);
	CHECK(blocks[d].id == (void *)1, "ids untouched");
}

/* A long chain (no recursion, no stack overflow): one definite head. */
static void
test_long_chain(void)
{
	enum { N = 200000 };
	reset();
	map(HEAP, (size_t)N * 16);
	struct leak_block *bl = calloc(N, sizeof(*bl));
	if (!bl)
		exit(EXIT_HARNESS);
	for (size_t k = 0; k < N; k++) {
		size_t at = N - 1 - k; /* given in descending order */
		bl[at].addr = HEAP + k * 16;
		bl[at].size = 16;
		if (k + 1 < N)
			put(HEAP + k * 16, HEAP + (k + 1) * 16);
	}
	struct leak_input in = {.blocks = bl,
				.nblocks = N,
				.read = fake_read,
				.heuristics = LEAK_HEUR_ALL};
	leak_classify(&in, &tot);
	CHECK(bl[N - 1].kind == LEAK_DEFINITE &&
		      bl[N - 1].indirect_blocks == N - 1 &&
		      bl[N - 1].indirect_bytes == (uint64_t)(N - 1) * 16,
	      "head %s, %llu indirect", leak_kind_name(bl[N - 1].kind),
	      (unsigned long long)bl[N - 1].indirect_blocks);
	TOTAL(LEAK_INDIRECT, (uint64_t)(N - 1) * 16, N - 1);
	free(bl);
}

/* Blocks one per 256 bytes of heap, in allocation order, like a fresh
   glibc heap: for replaying the MEMCHECK programs below. */
static uint64_t next_off;

static size_t
alloc(uint64_t size)
{
	size_t i = block(next_off, size);
	next_off += 0x100;
	return i;
}

/* MEMCHECK program 1, memcheck.c at the end of this file, replayed:
   memcheck's LEAK SUMMARY for it was
     definitely lost: 184 bytes in 5 blocks
     indirectly lost: 136 bytes in 3 blocks
       possibly lost: 232 bytes in 3 blocks
     still reachable: 208 bytes in 5 blocks
                        of which reachable via heuristic:
                          length64           : 48 bytes in 1 blocks
   with loss records "64 (40 direct, 24 indirect) bytes ... definitely
   lost" (the cycle) and "144 (32 direct, 112 indirect)" (the chain). */
static void
test_memcheck_program(void)
{
	setup();
	next_off = 0;
	enum { G_REACH, G_INTERIOR, G_CYC, G_PAST, G_INT2, G_ZERO, G_L64 };
	size_t reach = alloc(32), interior = alloc(32);
	alloc(32); /* lost at once */
	size_t a = alloc(32), b = alloc(48), c = alloc(64);
	size_t x = alloc(40), y = alloc(24);
	size_t u = alloc(56), v = alloc(72);
	size_t past = alloc(80);
	size_t q = alloc(104), pp = alloc(96);
	size_t zero = alloc(0);
	alloc(0);
	size_t l = alloc(48);
#define AT(i) blocks[i].addr
	put(DATA + 8 * G_REACH, AT(reach));
	put(DATA + 8 * G_INTERIOR, AT(interior) + 16);
	put(AT(a) + 8, AT(b));
	put(AT(b) + 40, AT(c));
	put(AT(x), AT(y));
	put(AT(y) + 8, AT(x));
	put(AT(u), AT(v));
	put(AT(v) + 8, AT(u));
	put(DATA + 8 * G_CYC, AT(v));
	put(DATA + 8 * G_PAST, AT(past) + 80);
	put(AT(pp), AT(q));
	put(DATA + 8 * G_INT2, AT(pp) + 16);
	put(DATA + 8 * G_ZERO, AT(zero));
	put(AT(l), 40);
	put(DATA + 8 * G_L64, AT(l) + 8);
#undef AT
	root(DATA, PAGE_SZ);
	run();
	TOTAL(LEAK_DEFINITE, 184, 5);
	TOTAL(LEAK_INDIRECT, 136, 3);
	TOTAL(LEAK_POSSIBLE, 232, 3);
	TOTAL(LEAK_REACHABLE, 208, 5);
	CHECK(tot.heur_bytes[LEAK_HEUR_LENGTH64] == 48 &&
		      tot.heur_blocks[LEAK_HEUR_LENGTH64] == 1,
	      "length64");
	CHECK(blocks[x].indirect_bytes == 24 && blocks[a].indirect_bytes == 112,
	      "cliques %llu %llu", (unsigned long long)blocks[x].indirect_bytes,
	      (unsigned long long)blocks[a].indirect_bytes);
	KIND(q, LEAK_POSSIBLE);
	KIND(past, LEAK_DEFINITE);
	KIND(u, LEAK_REACHABLE);
}

/* MEMCHECK program 2, cycles.c at the end of this file: who leads a
   cycle. memcheck said
     64 (24 direct, 40 indirect) bytes ... definitely lost      s1 leads
     128 bytes ... definitely lost                              x alone
     232 (112 direct, 120 indirect) bytes ... definitely lost   a leads
     432 (152 direct, 280 indirect) bytes ... definitely lost   y leads
     definitely lost: 416 bytes in 4 blocks
     indirectly lost: 440 bytes in 4 blocks */
static void
test_memcheck_cycles(void)
{
	setup();
	next_off = 0;
	size_t s1 = alloc(24), s2 = alloc(40);
	size_t a = alloc(112), b = alloc(120), x = alloc(128);
	size_t c = alloc(136), d = alloc(144), y = alloc(152);
#define AT(i) blocks[i].addr
	put(AT(s2), AT(s1));
	put(AT(s1), AT(s2));
	put(AT(a), AT(b));
	put(AT(b), AT(a));
	put(AT(x), AT(b));
	put(AT(c), AT(d));
	put(AT(d), AT(c));
	put(AT(y), AT(c));
#undef AT
	root(DATA, PAGE_SZ);
	run();
	TOTAL(LEAK_DEFINITE, 416, 4);
	TOTAL(LEAK_INDIRECT, 440, 4);
	CHECK(blocks[s1].indirect_bytes == 40 &&
		      blocks[a].indirect_bytes == 120 &&
		      blocks[x].indirect_bytes == 0 &&
		      blocks[y].indirect_bytes == 280,
	      "cliques");
	KIND(s2, LEAK_INDIRECT);
	KIND(c, LEAK_INDIRECT);
}

/* MEMCHECK program 3, heur.c at the end of this file: the four default
   heuristics, and the length64 one matched from a possibly-lost block.
   memcheck said
     possibly lost: 112 bytes in 2 blocks
     still reachable: 128 bytes in 3 blocks
                        of which reachable via heuristic:
                          stdstring          : 40 bytes in 1 blocks
                          length64           : 48 bytes in 1 blocks
                          newarray           : 56 bytes in 1 blocks
                          multipleinheritance: 32 bytes in 1 blocks
   (the length64 block is possibly lost yet listed "via heuristic": the
   heuristic lines are not a subset of still reachable), and with
   --leak-check-heuristics=none: possibly lost: 240 bytes in 5 blocks. */
static void
test_memcheck_heuristics(void)
{
	for (int on = 0; on < 2; on++) {
		setup();
		next_off = 0;
		enum { G_STR, G_ARR, G_MI, G_POSS };
		size_t s = alloc(40), a = alloc(56), m = alloc(32),
		       l = alloc(48), p = alloc(64);
#define AT(i) blocks[i].addr
		put(AT(s), 5);
		put(AT(s) + 8, 15);
		put(DATA + 8 * G_STR, AT(s) + 24);
		put(AT(a), 3);
		put(DATA + 8 * G_ARR, AT(a) + 8);
		put(AT(m), VT1);
		put(AT(m) + 16, VT2);
		put(DATA + 8 * G_MI, AT(m) + 16);
		put(AT(l), 40);
		put(AT(p), AT(l) + 8);
		put(DATA + 8 * G_POSS, AT(p) + 16);
#undef AT
		root(DATA, PAGE_SZ);
		run_with(on ? LEAK_HEUR_ALL : 0, fake_vtable);
		if (!on) {
			TOTAL(LEAK_POSSIBLE, 240, 5);
			continue;
		}
		TOTAL(LEAK_POSSIBLE, 112, 2);
		TOTAL(LEAK_REACHABLE, 128, 3);
		CHECK(tot.heur_bytes[LEAK_HEUR_STDSTRING] == 40 &&
			      tot.heur_bytes[LEAK_HEUR_LENGTH64] == 48 &&
			      tot.heur_bytes[LEAK_HEUR_NEWARRAY] == 56 &&
			      tot.heur_bytes[LEAK_HEUR_MULTIPLEINHERITANCE] == 32,
		      "via heuristic");
		KIND(l, LEAK_POSSIBLE);
	}
}

/* No blocks: nothing to do, nothing read beyond the roots. */
static void
test_empty(void)
{
	setup();
	root(DATA, PAGE_SZ);
	run();
	TOTAL(LEAK_DEFINITE, 0, 0);
	TOTAL(LEAK_REACHABLE, 0, 0);
}

/* ---- leak_input.view ---- */

static int views, views_given;
/* Regions whose bytes the fake view serves (the others: NULL). */
static bool view_region[8];

/* The fake copy: a pointer into a region's buffer when it holds all of
   [ADDR, ADDR + LEN) and is one of those served, else NULL. */
static const void *
fake_view(void *ctx, uint64_t addr, size_t len)
{
	(void)ctx;
	views++;
	struct region *r = region_of(addr);
	if (!r || !view_region[r - regions] ||
	    r->len - (size_t)(addr - r->addr) < len)
		return NULL;
	views_given++;
	return r->mem + (addr - r->addr);
}

struct outcome {
	struct leak_block b[MAXB];
	struct leak_totals t;
	int reads, views, views_given;
};

/* leak_classify on the current space with VIEW (NULL: reads alone). */
static void
classify_into(leak_view_fn view, struct outcome *o)
{
	for (size_t i = 0; i < nblocks; i++) {
		blocks[i].kind = LEAK_REACHABLE;
		blocks[i].heuristic = LEAK_HEUR_NONE;
		blocks[i].indirect_bytes = blocks[i].indirect_blocks = 0;
		blocks[i].parent = 0;
	}
	reads = views = views_given = 0;
	struct leak_input in = {
		.blocks = blocks, .nblocks = nblocks,
		.roots = roots, .nroots = nroots,
		.regs = regs, .nregs = nregs,
		.read = fake_read, .view = view,
		.is_vtable = fake_vtable,
		.heuristics = LEAK_HEUR_ALL,
	};
	leak_classify(&in, &o->t);
	memcpy(o->b, blocks, sizeof(o->b));
	o->reads = reads;
	o->views = views;
	o->views_given = views_given;
}

/* Every result field of X and Y agree. */
static void
same_outcome(const char *what, const struct outcome *x,
	     const struct outcome *y)
{
	for (size_t i = 0; i < nblocks; i++) {
		const struct leak_block *a = &x->b[i], *b = &y->b[i];
		CHECK(a->kind == b->kind && a->heuristic == b->heuristic &&
			      a->indirect_bytes == b->indirect_bytes &&
			      a->indirect_blocks == b->indirect_blocks &&
			      a->parent == b->parent,
		      "%s: block %zu: %s/%s heur %d/%d clique %llu/%llu "
		      "parent %zu/%zu",
		      what, i, leak_kind_name(a->kind),
		      leak_kind_name(b->kind), a->heuristic, b->heuristic,
		      (unsigned long long)a->indirect_bytes,
		      (unsigned long long)b->indirect_bytes, a->parent,
		      b->parent);
	}
	CHECK(memcmp(&x->t, &y->t, sizeof(x->t)) == 0,
	      "%s: totals differ: scanned %llu/%llu unreadable %llu/%llu "
	      "definite %llu/%llu", what,
	      (unsigned long long)x->t.scanned_bytes,
	      (unsigned long long)y->t.scanned_bytes,
	      (unsigned long long)x->t.unreadable_bytes,
	      (unsigned long long)y->t.unreadable_bytes,
	      (unsigned long long)x->t.bytes[LEAK_DEFINITE],
	      (unsigned long long)y->t.bytes[LEAK_DEFINITE]);
}

/* A space with every kind of verdict: roots with a hole (an unmapped
   page) and one larger than a read chunk, blocks reached, possibly
   reached, through heuristics, cliques and a cycle, a register, a block
   running past its region's end (read short). The results with a view of
   every region, and with a view of the heap alone (as the tracer copies
   only the allocator's heaps), equal those of reads alone; the view is
   used (fewer reads). */
static void
test_view(void)
{
	setup();
	map(DATA2, PAGE_SZ);
	map(BIG, 200 << 10);
	next_off = 0;
	size_t r1 = alloc(32), r2 = alloc(48), p1 = alloc(64), p2 = alloc(16);
	size_t d1 = alloc(40), i1 = alloc(24), i2 = alloc(72);
	size_t c1 = alloc(32), c2 = alloc(32);
	size_t l64 = alloc(48), mi = alloc(32), reg = alloc(16);
	size_t via_big = alloc(8), lone = alloc(8);
	/* the last block runs 0x80 bytes past the heap's end */
	size_t tail = block((64 << 10) - 0x80, 0x100);
#define AT(i) blocks[i].addr
	put(DATA2 + 0xff8, AT(r1));	     /* after the hole */
	put(AT(r1) + 8, AT(r2));	     /* reachable from reachable */
	put(DATA + 0x10, AT(p1) + 8);	     /* interior: possible */
	put(AT(p1) + 16, AT(p2));	     /* possible from possible */
	put(AT(d1), AT(i1) + 4);	     /* clique: interior counts */
	put(AT(i1) + 8, AT(i2));
	put(AT(c1), AT(c2));		     /* a lost cycle */
	put(AT(c2) + 8, AT(c1));
	put(AT(l64), 40);		     /* length64 */
	put(DATA + 0x18, AT(l64) + 8);
	put(AT(mi), VT1);		     /* multipleinheritance */
	put(AT(mi) + 16, VT2);
	put(DATA + 0x20, AT(mi) + 16);
	regs[nregs++] = AT(reg) + 4;	     /* a register: possible */
	put(BIG + (64 << 10) - 8, AT(via_big)); /* across a chunk boundary */
	put(AT(tail) + 0x78, AT(lone));	     /* the readable end of TAIL */
	put(DATA + 0x28, AT(tail));
#undef AT
	root(DATA, 3 * PAGE_SZ);
	root(BIG, 200 << 10);

	struct outcome *o = calloc(3, sizeof(*o));
	if (!o)
		exit(EXIT_HARNESS);
	classify_into(NULL, &o[0]);
	for (int i = 0; i < 8; i++)
		view_region[i] = true;
	classify_into(fake_view, &o[1]);
	memset(view_region, 0, sizeof(view_region));
	view_region[0] = true; /* HEAP */
	classify_into(fake_view, &o[2]);

	/* The read-only path's verdicts, checked by hand first. */
	memcpy(blocks, o[0].b, sizeof(blocks));
	KIND(r1, LEAK_REACHABLE);
	KIND(r2, LEAK_REACHABLE);
	KIND(p1, LEAK_POSSIBLE);
	KIND(p2, LEAK_POSSIBLE);
	KIND(d1, LEAK_DEFINITE);
	KIND(i1, LEAK_INDIRECT);
	KIND(i2, LEAK_INDIRECT);
	KIND(c1, LEAK_DEFINITE);
	KIND(c2, LEAK_INDIRECT);
	KIND(l64, LEAK_REACHABLE);
	KIND(mi, LEAK_REACHABLE);
	KIND(reg, LEAK_POSSIBLE);
	KIND(via_big, LEAK_REACHABLE);
	KIND(tail, LEAK_REACHABLE);
	KIND(lone, LEAK_REACHABLE);
	CHECK(o[0].t.unreadable_bytes == PAGE_SZ + 0x80,
	      "unreadable %llu", (unsigned long long)o[0].t.unreadable_bytes);
	CHECK(o[0].views == 0, "views without a view");

	same_outcome("view of all", &o[0], &o[1]);
	same_outcome("view of the heap", &o[0], &o[2]);
	CHECK(o[1].views_given > 0 && o[1].reads < o[0].reads,
	      "view of all: %d views given, %d reads (%d without)",
	      o[1].views_given, o[1].reads, o[0].reads);
	CHECK(o[2].views_given > 0 && o[2].reads < o[0].reads &&
		      o[2].reads > o[1].reads,
	      "view of the heap: %d views given, %d reads", o[2].views_given,
	      o[2].reads);
	free(o);
	memset(view_region, 0, sizeof(view_region));
}

/* The view's bytes are what the scan sees: with a copy of the heap taken
   while A still pointed at B (the live heap no longer does), B is
   reachable; read live, it is lost. */
static unsigned char *heap_copy;

static const void *
copy_view(void *ctx, uint64_t addr, size_t len)
{
	(void)ctx;
	views++;
	uint64_t heap_len = 64 << 10;
	if (addr < HEAP || addr - HEAP >= heap_len ||
	    heap_len - (addr - HEAP) < len)
		return NULL;
	return heap_copy + (addr - HEAP);
}

static void
test_view_is_used(void)
{
	setup();
	size_t a = block(0, 32), b = block(0x100, 32);
	put(DATA, HEAP);
	put(HEAP + 8, HEAP + 0x100);
	root(DATA, PAGE_SZ);
	heap_copy = malloc(64 << 10);
	if (!heap_copy)
		exit(EXIT_HARNESS);
	memcpy(heap_copy, regions[0].mem, 64 << 10);
	put(HEAP + 8, 0); /* the live heap changed since the copy */
	struct outcome o;
	classify_into(copy_view, &o);
	CHECK(o.b[a].kind == LEAK_REACHABLE && o.b[b].kind == LEAK_REACHABLE,
	      "through the copy: %s, %s", leak_kind_name(o.b[a].kind),
	      leak_kind_name(o.b[b].kind));
	CHECK(o.views > 0, "no view asked");
	classify_into(NULL, &o);
	CHECK(o.b[a].kind == LEAK_REACHABLE && o.b[b].kind == LEAK_DEFINITE,
	      "live: %s, %s", leak_kind_name(o.b[a].kind),
	      leak_kind_name(o.b[b].kind));
	free(heap_copy);
	heap_copy = NULL;
}

/* ---- leak_input.allocator_pointer ---- */

struct alloc_call {
	uint64_t p, lo, size;
};
static struct alloc_call alloc_calls[16];
static int nalloc_calls;
static void *alloc_ctx_seen;
static uint64_t claimed[4]; /* pointers the fake allocator owns */
static int nclaimed;
static int ctx_marker;

static int
fake_allocator(void *ctx, uint64_t p, uint64_t lo, uint64_t size)
{
	alloc_ctx_seen = ctx;
	if (nalloc_calls < 16)
		alloc_calls[nalloc_calls] = (struct alloc_call){ p, lo, size };
	nalloc_calls++;
	for (int i = 0; i < nclaimed; i++)
		if (claimed[i] == p)
			return 1;
	return 0;
}

static void
run_alloc(void)
{
	struct leak_input in = {
		.blocks = blocks, .nblocks = nblocks,
		.roots = roots, .nroots = nroots,
		.regs = regs, .nregs = nregs,
		.read = fake_read,
		.allocator_pointer = fake_allocator,
		.ctx = &ctx_marker,
		.heuristics = LEAK_HEUR_ALL,
	};
	nalloc_calls = 0;
	alloc_ctx_seen = NULL;
	leak_classify(&in, &tot);
}

#define CALLS(n)                                                            \
	CHECK(nalloc_calls == (n), "%d allocator_pointer calls, want %d",   \
	      nalloc_calls, (n))

/* An interior pointer in a root or a register that the allocator claims
   is no reference: a block reached only by it is definitely lost (and is
   asked about with the pointer, the block's start and size, and the
   input's ctx); unclaimed, the same pointer makes it possibly lost. A
   claimed pointer that a heuristic would have taken is ignored too. */
static void
test_allocator_pointer_roots(void)
{
	for (int claim = 0; claim < 2; claim++) {
		setup();
		size_t a = block(0x40, 48);
		put(DATA + 0x100, HEAP + 0x40 + 32);
		root(DATA, PAGE_SZ);
		nclaimed = 0;
		if (claim)
			claimed[nclaimed++] = HEAP + 0x40 + 32;
		run_alloc();
		KIND(a, claim ? LEAK_DEFINITE : LEAK_POSSIBLE);
		CALLS(1);
		CHECK(alloc_calls[0].p == HEAP + 0x40 + 32 &&
			      alloc_calls[0].lo == HEAP + 0x40 &&
			      alloc_calls[0].size == 48,
		      "asked about %#llx in %#llx+%llu",
		      (unsigned long long)alloc_calls[0].p,
		      (unsigned long long)alloc_calls[0].lo,
		      (unsigned long long)alloc_calls[0].size);
		CHECK(alloc_ctx_seen == &ctx_marker, "ctx %p", alloc_ctx_seen);
		TOTAL(LEAK_DEFINITE, claim ? 48 : 0, claim ? 1 : 0);

		/* the same pointer in a register */
		setup();
		a = block(0x40, 48);
		regs[nregs++] = HEAP + 0x40 + 32;
		run_alloc();
		KIND(a, claim ? LEAK_DEFINITE : LEAK_POSSIBLE);
		CALLS(1);

		/* length64 would take it */
		setup();
		size_t l = block(0x200, 48);
		put(HEAP + 0x200, 40);
		put(DATA, HEAP + 0x200 + 8);
		root(DATA, PAGE_SZ);
		nclaimed = 0;
		if (claim)
			claimed[nclaimed++] = HEAP + 0x200 + 8;
		run_alloc();
		KIND(l, claim ? LEAK_DEFINITE : LEAK_REACHABLE);
		CHECK(blocks[l].heuristic ==
			      (claim ? LEAK_HEUR_NONE : LEAK_HEUR_LENGTH64),
		      "heuristic %s",
		      leak_heuristic_name(blocks[l].heuristic));
		CALLS(1);
	}
	nclaimed = 0;
}

/* Only interior pointers found in roots and registers are asked about:
   never start pointers (even one the allocator would claim), pointers
   into no block, nor anything found inside blocks, whether reachable or
   in a lost clique. The claimed pointer found inside a reachable block
   still makes its target possibly lost; found inside a lost block, it
   still gathers its target into the clique. */
static void
test_allocator_pointer_blocks(void)
{
	/* a start pointer, claimed or not, and words pointing at no block */
	setup();
	size_t a = block(0x40, 48);
	put(DATA, HEAP + 0x40);
	put(DATA + 8, HEAP + 0x4000);
	put(DATA + 16, 0x1234);
	root(DATA, PAGE_SZ);
	regs[nregs++] = HEAP + 0x40;
	regs[nregs++] = HEAP + 0x70; /* past A's end (0x70 = 0x40 + 48) */
	nclaimed = 0;
	claimed[nclaimed++] = HEAP + 0x40;
	run_alloc();
	KIND(a, LEAK_REACHABLE);
	CALLS(0);

	/* B reachable holds the claimed pointer into A: A possible, and
	   the allocator never asked */
	setup();
	a = block(0x40, 48);
	size_t b = block(0x100, 32);
	put(DATA, HEAP + 0x100);
	put(HEAP + 0x108, HEAP + 0x40 + 32);
	root(DATA, PAGE_SZ);
	nclaimed = 0;
	claimed[nclaimed++] = HEAP + 0x40 + 32;
	run_alloc();
	KIND(b, LEAK_REACHABLE);
	KIND(a, LEAK_POSSIBLE);
	CALLS(0);

	/* in a root (ignored) and in B (counted): A possible, one call */
	setup();
	a = block(0x40, 48);
	b = block(0x100, 32);
	put(DATA, HEAP + 0x40 + 32);
	put(DATA + 8, HEAP + 0x100);
	put(HEAP + 0x108, HEAP + 0x40 + 32);
	root(DATA, PAGE_SZ);
	run_alloc();
	KIND(b, LEAK_REACHABLE);
	KIND(a, LEAK_POSSIBLE);
	CALLS(1);

	/* the same from a block reached through a register */
	setup();
	a = block(0x40, 48);
	b = block(0x100, 32);
	regs[nregs++] = HEAP + 0x40 + 32;
	regs[nregs++] = HEAP + 0x100;
	put(HEAP + 0x108, HEAP + 0x40 + 32);
	run_alloc();
	KIND(a, LEAK_POSSIBLE);
	CALLS(1);

	/* L lost (its only pointer claimed) holds the claimed pointer
	   into C: C joins L's clique, asked about once (the root) */
	setup();
	size_t l = block(0x40, 48), c = block(0x200, 64);
	put(DATA, HEAP + 0x40 + 32);
	put(HEAP + 0x40, HEAP + 0x200 + 16);
	root(DATA, PAGE_SZ);
	nclaimed = 0;
	claimed[nclaimed++] = HEAP + 0x40 + 32;
	claimed[nclaimed++] = HEAP + 0x200 + 16;
	run_alloc();
	KIND(l, LEAK_DEFINITE);
	KIND(c, LEAK_INDIRECT);
	CHECK(blocks[l].indirect_bytes == 64 && blocks[c].parent == l,
	      "clique %llu, parent %zu",
	      (unsigned long long)blocks[l].indirect_bytes, blocks[c].parent);
	CALLS(1);
	nclaimed = 0;
}

int
main(void)
{
	test_start_pointer();
	test_interior_pointer();
	test_unreferenced();
	test_chain();
	test_clique_interior();
	test_cycle();
	test_cycle_from_root();
	test_one_past_end();
	test_through_possible();
	test_upgrade();
	test_registers();
	test_unaligned();
	test_zero_size();
	test_heuristics();
	test_heuristic_quirks();
	test_unreadable();
	test_big_root();
	test_unsorted_totals();
	test_long_chain();
	test_empty();
	test_memcheck_program();
	test_memcheck_cycles();
	test_memcheck_heuristics();
	test_view();
	test_view_is_used();
	test_allocator_pointer_roots();
	test_allocator_pointer_blocks();
	reset();
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	return 0;
}

/* The MEMCHECK programs, never compiled here (no valgrind needed to run
   the tests). Built with gcc -O0 -g, run under valgrind-3.19.0 with
   --leak-check=full --show-leak-kinds=all --run-libc-freeres=no; their
   summaries are above the tests that replay them. clobber() wipes the
   dead stack frames so that no stale pointer is left on the stack. */
#if 0
/* ---- memcheck.c ---- */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
void *g_reach, *g_interior, *g_cyc, *g_past, *g_int2, *g_zero, *g_l64;
__attribute__((noinline)) static void build(void)
{
	void **p;
	g_reach = malloc(32);                          /* 1 reachable */
	g_interior = (char *)malloc(32) + 16;          /* 2 possible */
	p = malloc(32); p[0] = 0; p = 0;               /* 3 definite */
	void **a = malloc(32), **b = malloc(48), **c = malloc(64);
	memset(a, 0, 32); memset(b, 0, 48); memset(c, 0, 64);
	a[1] = b; b[5] = c; a = b = c = 0;             /* 4 chain A->B->C */
	void **x = malloc(40), **y = malloc(24);       /* 5 cycle, x lower */
	memset(x, 0, 40); memset(y, 0, 24);
	x[0] = y; y[1] = x; x = y = 0;
	void **u = malloc(56), **v = malloc(72);       /* 6 cycle from root */
	memset(u, 0, 56); memset(v, 0, 72);
	u[0] = v; v[1] = u; g_cyc = v; u = v = 0;
	g_past = (char *)malloc(80) + 80;              /* 7 one past end */
	void **q = malloc(104); memset(q, 0, 104);     /* 8 through possible */
	void **pp = malloc(96); memset(pp, 0, 96);
	pp[0] = q; g_int2 = (char *)pp + 16; q = pp = 0;
	g_zero = malloc(0); (void)malloc(0);                 /* 9 zero-sized */
	uint64_t *l = malloc(48); memset(l, 0, 48);    /* 10 length64 */
	l[0] = 40; g_l64 = l + 1; l = 0;
}
__attribute__((noinline)) static void clobber(void)
{
	volatile char junk[8192];
	memset((char *)junk, 0, sizeof(junk));
}
int main(void) { build(); clobber(); return 0; }

/* ---- cycles.c ---- */
#include <stdlib.h>
#include <string.h>
static void **z(size_t n) { void **p = malloc(n); memset(p, 0, n); return p; }
__attribute__((noinline)) static void build(void)
{
	void **s1 = z(24), **s2 = z(40);     /* s1 lower */
	s2[0] = s1; s1[0] = s2;
	void **a = z(112), **b = z(120), **x = z(128);
	a[0] = b; b[0] = a; x[0] = b;        /* x -> member b */
	void **c = z(136), **d = z(144), **y = z(152);
	c[0] = d; d[0] = c; y[0] = c;        /* y -> leader c */
}
__attribute__((noinline)) static void clobber(void)
{
	volatile char junk[8192];
	memset((char *)junk, 0, sizeof(junk));
}
int main(void) { build(); clobber(); return 0; }
/* ---- heur.c ---- */
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
static void f1(void) {}
static void f2(void) {}
static void f3(void) {}
void (*const vt1[])(void) = {f1, f2, f3};
void (*const vt2[])(void) = {f3, f2, f1};
void *g_str, *g_arr, *g_mi, *g_poss;
static uint64_t *z(size_t n) { uint64_t *p = malloc(n); memset(p, 0, n); return p; }
__attribute__((noinline)) static void build(void)
{
	uint64_t *s = z(40);  s[0] = 5; s[1] = 15;  g_str = s + 3;   /* stdstring */
	uint64_t *a = z(56);  a[0] = 3;             g_arr = a + 1;   /* newarray */
	uint64_t *m = z(32);  m[0] = (uint64_t)vt1; m[2] = (uint64_t)vt2;
	g_mi = m + 2;                                             /* multipleinheritance */
	uint64_t *l = z(48);  l[0] = 40;                          /* length64, from a possible block */
	uint64_t *p = z(64);  p[0] = (uint64_t)(l + 1); g_poss = p + 2;
}
__attribute__((noinline)) static void clobber(void)
{
	volatile char junk[8192];
	memset((char *)junk, 0, sizeof(junk));
}
int main(void) { build(); clobber(); return 0; }
#endif
