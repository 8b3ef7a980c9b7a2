/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the extra-heap models: the numbers massif-semantics.md
   reports from real Massif (§2.3 slop table, unsplit reuse, aligned
   observations, huge blocks, realloc), failure cases, clone independence,
   the footprint under churn, and the glibc and estimate rules. The
   workload goldens are checked by test_replay. */
#include "snapshot/extra.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/options.h"
#include "snapshot/extra_priv.h"

static int failures;

#define CHECK_EQ(got, want)                                                  \
	check_eq(__FILE__, __LINE__, #got, (uint64_t)(got), (uint64_t)(want))

static void
check_eq(const char *file, int line, const char *what, uint64_t got,
	 uint64_t want)
{
	if (got == want)
		return;
	fprintf(stderr, "%s:%d: %s is %" PRIu64 ", want %" PRIu64 "\n", file,
		line, what, got, want);
	failures++;
}

static struct ht_options
options(unsigned heap_admin, unsigned alignment)
{
	struct ht_options opt;

	memset(&opt, 0, sizeof(opt));
	opt.heap_admin = heap_admin;
	opt.alignment = alignment;
	return opt;
}

static struct snap_extra *
model(enum snap_extra_kind kind, unsigned heap_admin, unsigned alignment)
{
	struct ht_options opt = options(heap_admin, alignment);

	return snap_extra_new(kind, &opt);
}

/* Allocate REQ (ALIGN as the engine passes it) and return its extra. */
static uint64_t
alloc(struct snap_extra *x, uint64_t req, uint64_t align,
      struct snap_extra_block *b)
{
	struct snap_extra_block tmp;

	if (!b)
		b = &tmp;
	if (snap_extra_alloc(x, req, align, 0, b)) {
		fprintf(stderr, "allocation of %" PRIu64 " failed\n", req);
		failures++;
		return UINT64_MAX;
	}
	return b->extra;
}

static uint64_t
payload(struct snap_extra *x, const struct snap_extra_block *b)
{
	return extra_valgrind_payload(x, b->cookie);
}

/* §2.3: the slop table, in one program, and the unsplit reuse case. */
static void
test_slop_table(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);
	struct snap_extra_block p, g;
	static const uint64_t req[] = { 1000, 2000, 300, 12, 1, 0 };
	static const uint64_t slop[] = { 8, 0, 4, 4, 15, 0 };

	for (size_t i = 0; i < sizeof(req) / sizeof(req[0]); i++)
		CHECK_EQ(alloc(x, req[i], 0, NULL), 8 + slop[i]);
	alloc(x, 32, 0, &p);
	alloc(x, 8, 0, &g);
	snap_extra_release(x, &p);
	CHECK_EQ(alloc(x, 16, 0, NULL), 8 + 16);
	snap_extra_free(x);
}

/* §2.3 case 2. From an empty arena real Massif gave the first row; after
   one malloc(113) it gave the doc's numbers (cases/observed*.exp). */
static void
test_aligned(void)
{
	static const uint64_t align[] = { 64, 4096, 256, 32, 4096 };
	static const uint64_t req[] = { 100, 10, 300, 64, 5 };
	static const uint64_t fresh[] = { 28, 326, 68, 32, 411 };
	static const uint64_t doc[] = { 60, 486, 228, 16, 571 };

	for (int run = 0; run < 2; run++) {
		struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);

		if (run)
			alloc(x, 113, 0, NULL);
		for (int i = 0; i < 5; i++)
			CHECK_EQ(alloc(x, req[i], align[i], NULL),
				 8 + (run ? doc : fresh)[i]);
		snap_extra_free(x);
	}
}

/* §2.3 case 3: a huge block gets a superblock of its own, unmapped at
   once when freed, and the next one reuses its address. */
static void
test_huge(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);
	struct snap_extra_block small, h;
	uint64_t blocks, sbs, addr;

	alloc(x, 10, 0, &small);
	CHECK_EQ(alloc(x, (uint64_t)1 << 30, 0, &h), 4040);
	addr = payload(x, &h);
	extra_valgrind_footprint(x, &blocks, &sbs);
	CHECK_EQ(sbs, 2);
	snap_extra_release(x, &h);
	extra_valgrind_footprint(x, &blocks, &sbs);
	CHECK_EQ(sbs, 1);
	CHECK_EQ(alloc(x, (uint64_t)1 << 30, 0, &h), 4040);
	CHECK_EQ(payload(x, &h), addr);
	/* The most a 4 MiB superblock holds, exactly; then one byte more
	   needs a superblock of 4 MiB + 4 KiB, unsplittable. */
	CHECK_EQ(alloc(x, (4 << 20) - 64, 0, NULL), 8);
	CHECK_EQ(alloc(x, (4 << 20) - 63, 0, NULL), 8 + 4095);
	snap_extra_free(x);
}

/* §2.4: in place, within the slop, moving (allocate first, free after). */
static void
test_realloc(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);
	struct snap_extra_block b, keep, c;
	uint64_t old;

	alloc(x, 100, 0, &b);
	CHECK_EQ(b.extra, 8 + 12);
	old = payload(x, &b);
	CHECK_EQ(snap_extra_realloc(x, &b, 100, 90, 0), 0);
	CHECK_EQ(b.extra, 8 + 22);
	CHECK_EQ(snap_extra_realloc(x, &b, 90, 112, 0), 0);
	CHECK_EQ(b.extra, 8);
	CHECK_EQ(payload(x, &b), old);
	CHECK_EQ(snap_extra_realloc(x, &b, 112, 113, 0), 0);
	CHECK_EQ(b.extra, 8 + 15);
	if (payload(x, &b) == old) {
		fprintf(stderr, "realloc(113) did not move\n");
		failures++;
	}
	/* The old block was freed after the new one was taken: the next
	   block of its size goes back where it was. */
	alloc(x, 100, 0, &c);
	CHECK_EQ(payload(x, &c), old);

	/* Growing into a free right neighbour is not done: Massif always
	   allocates anew. */
	alloc(x, 16, 0, &keep);
	old = payload(x, &keep);
	CHECK_EQ(snap_extra_realloc(x, &keep, 16, 48, 0), 0);
	if (payload(x, &keep) == old) {
		fprintf(stderr, "growing realloc stayed in place\n");
		failures++;
	}

	/* A failing realloc leaves the block alone. */
	c = b;
	CHECK_EQ(snap_extra_realloc(x, &b, 113, (uint64_t)1 << 63, 0), -1);
	CHECK_EQ(b.extra, c.extra);
	CHECK_EQ(b.cookie, c.cookie);
	snap_extra_free(x);
}

/* Requests Massif or the allocator refuse. */
static void
test_failures(void)
{
	static const enum snap_extra_kind kinds[] = {
		SNAP_EXTRA_VALGRIND, SNAP_EXTRA_GLIBC, SNAP_EXTRA_ESTIMATE,
	};
	struct snap_extra_block b = { 0, 0 };

	for (int k = 0; k < 3; k++) {
		struct snap_extra *x = model(kinds[k], 8, 16);

		CHECK_EQ(snap_extra_alloc(x, (uint64_t)1 << 63, 0, 0, &b), -1);
		CHECK_EQ(snap_extra_alloc(x, UINT64_MAX, 64, 0, &b), -1);
		CHECK_EQ(snap_extra_alloc(x, INT64_MAX, 0, 0, &b),
			 kinds[k] == SNAP_EXTRA_VALGRIND ? -1 : 0);
		snap_extra_free(x);
	}
	/* Valgrind's arena cannot map more than the user address space. */
	struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);

	CHECK_EQ(snap_extra_alloc(x, (uint64_t)1 << 47, 0, 0, &b), -1);
	CHECK_EQ(snap_extra_alloc(x, (uint64_t)1 << 46, 0, 0, &b), 0);
	CHECK_EQ(snap_extra_alloc(x, (uint64_t)1 << 46, 0, 0, &b), -1);
	CHECK_EQ(snap_extra_alloc(x, 100, 0, 0, &b), 0);
	CHECK_EQ(b.extra, 8 + 12);
	snap_extra_free(x);
}

/* --heap-admin, --pages-as-heap and --alignment. */
static void
test_options(void)
{
	struct ht_options opt = options(8, 16);
	struct snap_extra *x;

	x = model(SNAP_EXTRA_VALGRIND, 16, 16);
	CHECK_EQ(alloc(x, 1000, 0, NULL), 16 + 8);
	snap_extra_free(x);

	opt.pages_as_heap = true;
	x = snap_extra_new(SNAP_EXTRA_VALGRIND, &opt);
	CHECK_EQ(alloc(x, 1000, 0, NULL), 8);
	snap_extra_free(x);

	/* --alignment=64 takes the aligned path for plain calls (first
	   block of cases/rand-a64 style: payload at 0x4a3a080). */
	x = model(SNAP_EXTRA_VALGRIND, 8, 64);
	struct snap_extra_block b;

	alloc(x, 1, 0, &b);
	CHECK_EQ(payload(x, &b), 0x4a3a080);
	CHECK_EQ(b.extra, 8 + 31);
	/* An explicit 16 is the plain path, whatever --alignment says. */
	alloc(x, 1, 16, &b);
	CHECK_EQ(b.extra, 8 + 15);
	snap_extra_free(x);
}

static void
test_names(void)
{
	static const char *names[] = { "valgrind", "glibc", "estimate" };

	for (int k = 0; k < 3; k++) {
		struct snap_extra *x = model((enum snap_extra_kind)k, 8, 16);
		struct snap_extra *c = snap_extra_clone(x);

		if (strcmp(snap_extra_name(x), names[k]) ||
		    strcmp(snap_extra_name(c), names[k])) {
			fprintf(stderr, "model %d is named %s\n", k,
				snap_extra_name(x));
			failures++;
		}
		snap_extra_free(c);
		snap_extra_free(x);
	}
	snap_extra_free(NULL);
}

/* A deterministic generator, so runs are reproducible. */
static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t
random_size(uint64_t *s)
{
	uint64_t r = next_random(s);

	switch (r % 16) {
	case 0:
		return r % (6 << 20);
	case 1:
	case 2:
		return r % 100000;
	default:
		return r % 300;
	}
}

/* Drive X with N random operations on SLOTS live-block slots. */
static void
churn(struct snap_extra *x, struct snap_extra_block *blk, uint64_t *req,
      bool *live, size_t slots, uint64_t *seed, long n)
{
	for (long i = 0; i < n; i++) {
		uint64_t r = next_random(seed);
		size_t k = (size_t)(r % slots);

		if (live[k] && r % 5 == 0) {
			uint64_t nreq = random_size(seed);

			if (!snap_extra_realloc(x, &blk[k], req[k], nreq, 0))
				req[k] = nreq;
		} else if (live[k]) {
			snap_extra_release(x, &blk[k]);
			live[k] = false;
		} else {
			uint64_t a = r % 7 ? 0 : (uint64_t)16 << (r % 9);

			req[k] = random_size(seed);
			live[k] = !snap_extra_alloc(x, req[k], a, 0, &blk[k]);
		}
	}
}

#define SLOTS 512

/* A forked child continues from the parent's state: the clone must give
   the same answers as the original, and they must not share anything. */
static void
test_clone(void)
{
	for (int k = 0; k < 3; k++) {
		struct snap_extra *x = model((enum snap_extra_kind)k, 8, 16);
		static struct snap_extra_block b1[SLOTS], b2[SLOTS];
		static uint64_t r1[SLOTS], r2[SLOTS];
		static bool l1[SLOTS], l2[SLOTS];
		uint64_t s1 = 42, s2;
		struct snap_extra *c;

		memset(l1, 0, sizeof(l1));
		churn(x, b1, r1, l1, SLOTS, &s1, 20000);
		c = snap_extra_clone(x);
		memcpy(b2, b1, sizeof(b1));
		memcpy(r2, r1, sizeof(r1));
		memcpy(l2, l1, sizeof(l1));
		s2 = s1;
		/* The original goes its own way first, then is freed. */
		uint64_t s3 = 7;

		churn(x, b1, r1, l1, SLOTS, &s3, 20000);
		snap_extra_free(x);
		/* Replaying the same sequence on a second clone of the clone
		   must give the same results. */
		struct snap_extra *d = snap_extra_clone(c);
		static struct snap_extra_block b3[SLOTS];
		static uint64_t r3[SLOTS];
		static bool l3[SLOTS];
		uint64_t s4 = s2;

		memcpy(b3, b2, sizeof(b2));
		memcpy(r3, r2, sizeof(r2));
		memcpy(l3, l2, sizeof(l2));
		churn(c, b2, r2, l2, SLOTS, &s2, 20000);
		churn(d, b3, r3, l3, SLOTS, &s4, 20000);
		for (size_t i = 0; i < SLOTS; i++) {
			CHECK_EQ(l2[i], l3[i]);
			if (l2[i]) {
				CHECK_EQ(b2[i].extra, b3[i].extra);
				CHECK_EQ(b2[i].cookie, b3[i].cookie);
			}
		}
		snap_extra_free(c);
		snap_extra_free(d);
	}
}

/* Memory follows the live blocks, not the number of events; and the
   throughput is printed for the record. */
static void
test_footprint(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_VALGRIND, 8, 16);
	static struct snap_extra_block blk[SLOTS];
	static uint64_t req[SLOTS];
	static bool live[SLOTS];
	uint64_t seed = 1, blocks, sbs, peak_blocks = 0;
	struct timespec t0, t1;
	long rounds = 20, per_round = 100000;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long r = 0; r < rounds; r++) {
		churn(x, blk, req, live, SLOTS, &seed, per_round);
		extra_valgrind_footprint(x, &blocks, &sbs);
		if (blocks > peak_blocks)
			peak_blocks = blocks;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* Live blocks plus free fragments between them. */
	if (peak_blocks > 4 * SLOTS + 64) {
		fprintf(stderr, "%" PRIu64 " block records for %d slots\n",
			peak_blocks, SLOTS);
		failures++;
	}
	for (size_t i = 0; i < SLOTS; i++)
		if (live[i])
			snap_extra_release(x, &blk[i]);
	extra_valgrind_footprint(x, &blocks, &sbs);
	/* Everything freed: at most the deferred superblock is left. */
	if (sbs > 1 || blocks != sbs) {
		fprintf(stderr, "%" PRIu64 " blocks, %" PRIu64
			" superblocks left after freeing all\n", blocks, sbs);
		failures++;
	}
	double s = (double)(t1.tv_sec - t0.tv_sec) +
		   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("valgrind model: %.1f M operations/s, peak %" PRIu64
	       " block records\n", (double)(rounds * per_round) / s / 1e6,
	       peak_blocks);
	snap_extra_free(x);
}

/* Sizes checked against real chunk headers on Debian 12 (test_glibc). */
static void
test_glibc(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_GLIBC, 8, 64);
	struct snap_extra_block b, m;

	CHECK_EQ(alloc(x, 0, 0, NULL), 32);
	CHECK_EQ(alloc(x, 1, 0, NULL), 31);
	CHECK_EQ(alloc(x, 24, 0, NULL), 8);
	CHECK_EQ(alloc(x, 25, 0, NULL), 23);
	CHECK_EQ(alloc(x, 1000, 0, NULL), 8);
	CHECK_EQ(alloc(x, 200000, 0, NULL), 200704 - 200000);
	CHECK_EQ(alloc(x, 100, 64, NULL), 12);
	CHECK_EQ(alloc(x, 200000, 32, NULL), 200656 - 200000);
	CHECK_EQ(alloc(x, 200000, 256, NULL), 200464 - 200000);
	CHECK_EQ(alloc(x, 200000, 4096, NULL), 200720 - 200000);
	/* The tracer's chunk size wins. */
	CHECK_EQ(snap_extra_alloc(x, 100, 0, 112 | 1, &b), 0);
	CHECK_EQ(b.extra, 12);

	/* Realloc: a heap chunk shrinks when a chunk can be split off. */
	alloc(x, 1000, 0, &b);
	CHECK_EQ(snap_extra_realloc(x, &b, 1000, 990, 0), 0);
	CHECK_EQ(b.extra, 1008 - 990);
	CHECK_EQ(snap_extra_realloc(x, &b, 990, 960, 0), 0);
	CHECK_EQ(b.extra, 976 - 960);
	/* A mapped chunk is remapped, to a page at least. */
	alloc(x, 200000, 0, &m);
	CHECK_EQ(snap_extra_realloc(x, &m, 200000, 10, 0), 0);
	CHECK_EQ(m.extra, 4096 - 10);
	CHECK_EQ(snap_extra_realloc(x, &m, 10, 300000, 0), 0);
	CHECK_EQ(m.extra, 303104 - 300000);
	alloc(x, 200000, 64, &m);
	CHECK_EQ(snap_extra_realloc(x, &m, 200000, 210000, 0), 0);
	CHECK_EQ(m.extra, 212944 - 210000);

	/* Freeing a mapped chunk raises the mmap threshold to its size. */
	alloc(x, 300000, 0, &m);
	CHECK_EQ(m.extra, 303104 - 300000);
	snap_extra_release(x, &m);
	CHECK_EQ(alloc(x, 300000, 0, NULL), 16);
	CHECK_EQ(alloc(x, 400000, 0, NULL), 401408 - 400000);
	snap_extra_free(x);
}

static void
test_estimate(void)
{
	struct snap_extra *x = model(SNAP_EXTRA_ESTIMATE, 8, 16);
	struct snap_extra_block b;

	CHECK_EQ(alloc(x, 1000, 0, NULL), 16);
	CHECK_EQ(alloc(x, 2000, 0, NULL), 8);
	CHECK_EQ(alloc(x, 0, 0, NULL), 8);
	CHECK_EQ(alloc(x, 100, 64, NULL), 8 + 28);
	alloc(x, 1, 0, &b);
	CHECK_EQ(snap_extra_realloc(x, &b, 1, 20, 0), 0);
	CHECK_EQ(b.extra, 8 + 12);
	snap_extra_free(x);

	x = model(SNAP_EXTRA_ESTIMATE, 0, 256);
	CHECK_EQ(alloc(x, 1, 0, NULL), 255);
	CHECK_EQ(alloc(x, 1, 16, NULL), 15);
	snap_extra_free(x);
}

int
main(void)
{
	test_slop_table();
	test_aligned();
	test_huge();
	test_realloc();
	test_failures();
	test_options();
	test_names();
	test_clone();
	test_footprint();
	test_glibc();
	test_estimate();
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	return 0;
}
