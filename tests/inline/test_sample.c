/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --sampling-interval: the sampler's arithmetic (tracer/inline/sample.h)
   against numbers checked by hand, its statistics against their
   expectations (bounds of 5 standard deviations, fixed seeds), the set of
   sampled addresses; then the stub blob sampling for real in this
   process (stubenv.c plays the tracer): an unsampled call writes nothing
   to the ring, a sampled one a record with its weight, every sampled
   block's free is recorded and no other, reallocs keep the tracer's
   blocks those sampled, and a seed gives the same records twice. */
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stubenv.h"
#include "tests/check.h"
#include "tracer/inline/sample.h"
#include "tracer/inline/stub_blob.h"

/* ---- Arithmetic ---- */

static void
test_log2(void)
{
	/* floor(log2(x) x 2^24), from the real logarithm: 1.5849625007 x
	   2^24 = 26591258.1, 3.3219280949 x 2^24 = 55732705.3, 13.591639
	   x 2^24 = 228029866.9. */
	CHECK(sample_log2(1) == 0, "log2(1) = %llu",
	      (unsigned long long)sample_log2(1));
	CHECK(sample_log2(2) == 1ULL << 24, "log2(2)");
	CHECK(sample_log2(1ULL << 52) == 52ULL << 24, "log2(2^52)");
	uint64_t l3 = sample_log2(3), l10 = sample_log2(10),
		 l12345 = sample_log2(12345);
	CHECK(l3 == 26591258 || l3 == 26591257, "log2(3) = %llu",
	      (unsigned long long)l3);
	CHECK(l10 == 55732705 || l10 == 55732704, "log2(10) = %llu",
	      (unsigned long long)l10);
	CHECK(l12345 == 228029866 || l12345 == 228029865,
	      "log2(12345) = %llu", (unsigned long long)l12345);
}

static void
test_gap(void)
{
	/* (52 - log2 x) ln 2 x interval: 52 ln 2 x 1024 = 36908.70,
	   (52 - log2 3) ln 2 x 1024 = 35783.72, (52 - log2 10) ln 2 x
	   524288 = 17690037.21; x = 2^52 (u = 1) is a gap of 0, made 1. */
	CHECK(sample_gap_of(1, 1024) == 36909, "gap(1) = %llu",
	      (unsigned long long)sample_gap_of(1, 1024));
	CHECK(sample_gap_of(3, 1024) == 35784, "gap(3) = %llu",
	      (unsigned long long)sample_gap_of(3, 1024));
	CHECK(sample_gap_of(10, 524288) == 17690037, "gap(10) = %llu",
	      (unsigned long long)sample_gap_of(10, 524288));
	CHECK(sample_gap_of(1ULL << 52, 524288) == 1, "gap(2^52)");
	CHECK(sample_gap_of(1, SAMPLE_INTERVAL_MAX) >
		      36 * SAMPLE_INTERVAL_MAX,
	      "the largest interval's longest gap does not overflow");

	/* The mean of N exponential gaps of mean T has a standard
	   deviation of T / sqrt(N); its variance T^2. */
	const int n = 400000;
	const double t = 524288;
	uint64_t s = 42;
	double sum = 0, sq = 0;
	for (int i = 0; i < n; i++) {
		double g = (double)sample_gap(&s, (uint64_t)t);
		sum += g;
		sq += g * g;
	}
	double mean = sum / n, var = sq / n - mean * mean;
	CHECK(fabs(mean - t) < 5 * t / sqrt(n), "mean gap %.1f, not %.0f",
	      mean, t);
	CHECK(fabs(var / (t * t) - 1) < 0.05, "gap variance %.3f T^2",
	      var / (t * t));
}

static void
test_take(void)
{
	uint64_t s = 7;
	int64_t left = 100;
	CHECK(sample_take(&left, &s, 1000, 30) == 0 && left == 70,
	      "30 bytes of 100 left: not sampled, 70 left (%lld)",
	      (long long)left);
	CHECK(sample_take(&left, &s, 1000, 1000) == SAMPLE_TRUE_SIZE &&
		      left == 70,
	      "a block of the interval: its own size, counter untouched");
	CHECK(sample_take(&left, &s, 1000, 69) == 0 && left == 1, "69 more");
	uint32_t k = sample_take(&left, &s, 1000, 1);
	CHECK(k >= 1 && left > 0, "the byte on the point: sampled (k %u, "
				   "left %lld)", k, (long long)left);
	CHECK(sample_weight(3, 1000, 10) == 3000 &&
		      sample_weight(SAMPLE_TRUE_SIZE, 1000, 4321) == 4321,
	      "weights");

	/* Unbiased: a stream of random small sizes. The estimate's variance
	   is at most T x bytes (each point stands for T bytes, Poisson). */
	const uint64_t t = 4096;
	uint64_t r = 99, truth = 0, est = 0, samples = 0;
	double expect = 0; /* sampled calls: P(a point in s bytes) each */
	left = (int64_t)sample_gap(&s, t);
	for (int i = 0; i < 2000000; i++) {
		uint64_t size = 1 + sample_rand(&r) % 600;
		truth += size;
		expect += 1 - exp(-(double)size / (double)t);
		uint32_t kk = sample_take(&left, &s, t, size);
		if (kk) {
			est += sample_weight(kk, t, size);
			samples++;
		}
	}
	double sd = sqrt((double)t * (double)truth);
	CHECK(fabs((double)est - (double)truth) < 5 * sd,
	      "estimate %llu of %llu bytes (5 sd: %.0f)",
	      (unsigned long long)est, (unsigned long long)truth, 5 * sd);
	CHECK(fabs((double)samples - expect) < 5 * sqrt(expect),
	      "%llu calls sampled, %.0f expected", (unsigned long long)samples,
	      expect);
}

static void
test_streams(void)
{
	uint64_t a = sample_stream(1, 0, 0), b = sample_stream(1, 0, 0);
	CHECK(a == b, "a stream is the same for the same seed and ordinals");
	uint64_t seen[6] = {
		sample_stream(1, 0, 0), sample_stream(1, 0, 1),
		sample_stream(1, 1, 0), sample_stream(2, 0, 0),
		sample_stream(1, 1, 1), sample_stream(0, 0, 0),
	};
	for (int i = 0; i < 6; i++)
		for (int j = i + 1; j < 6; j++)
			CHECK(seen[i] != seen[j], "streams %d and %d differ", i,
			      j);
}

/* A set of 4 buckets: 28 keys fit (a chain wraps around), the 29th is
   refused; removing makes room; counts stay right. */
static void
test_set(void)
{
	uint32_t shift = 64 - 2;
	struct sample_bucket *b = calloc(1, sample_set_bytes(shift));
	uint64_t keys[29];
	int ok = 0;
	for (int i = 0; i < 29; i++) {
		keys[i] = 0x10000 + (uint64_t)i * 0x30;
		ok += sample_set_insert(b, shift, keys[i]) == 0;
	}
	CHECK(ok == 28, "%d keys in 4 buckets of 7", ok);
	CHECK(sample_set_insert(b, shift, 0x999990) == -1, "full");
	int found = 0;
	for (int i = 0; i < 29; i++)
		found += sample_set_remove(b, shift, keys[i]);
	CHECK(found == 28, "%d removed", found);
	CHECK(sample_set_remove(b, shift, keys[0]) == 0, "removed once");
	uint8_t *homed = sample_set_homed(b, shift);
	CHECK(!homed[0] && !homed[1] && !homed[2] && !homed[3],
	      "counts back to 0");
	CHECK(sample_set_insert(b, shift, keys[5]) == 0 &&
		      sample_set_may_hold(b, shift, keys[5]) &&
		      sample_set_remove(b, shift, keys[5]) == 1 &&
		      !sample_set_may_hold(b, shift, keys[5]),
	      "room again");
	free(b);
}

/* The set's size follows the interval: room at half its slots for the
   keys of a 4 GiB heap (4 GiB / interval), between 512 and 2^15
   buckets. */
static void
test_set_sizing(void)
{
	static const struct {
		uint64_t interval;
		uint32_t shift;
	} want[] = {
		{ 0, 49 },         { 1, 49 },         { 64 << 10, 49 },
		{ 128 << 10, 50 }, { 256 << 10, 51 }, { 512 << 10, 52 },
		{ 1 << 20, 53 },   { 2 << 20, 54 },   { 4 << 20, 55 },
		{ 1ULL << 30, 55 }, { SAMPLE_INTERVAL_MAX, 55 },
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK(sample_set_shift_for(want[i].interval) == want[i].shift,
		      "interval %llu: shift %u, not %u",
		      (unsigned long long)want[i].interval,
		      sample_set_shift_for(want[i].interval), want[i].shift);
	/* The home is masked to the set: every home of a small set is in
	   it, and a key's home in a set of 2^k buckets is its home in the
	   largest one, masked. */
	for (uint64_t a = 0x10000; a < 0x10000 + 4096 * 16; a += 16) {
		uint64_t big = sample_set_home(a, 49);
		if (sample_set_home(a, 55) != (big & 511) ||
		    sample_set_home(a, 52) != (big & 4095)) {
			CHECK(0, "home of %#llx", (unsigned long long)a);
			break;
		}
	}
}

/* A fork child's copy of its parent's set: bucket for bucket when both
   rings sample at one interval, key by key when their sizes differ;
   either way every key is found once in the child, its counts right. */
static void
test_set_copy(void)
{
	uint64_t child_interval[] = { 8 << 10, 512 << 10, 64 << 20 };
	for (int c = 0; c < 3; c++) {
		struct tracer_ring *src, *dst;
		if (tracer_ring_new(1 << 16, 8, 4, 8, 0, &src) ||
		    tracer_ring_new(1 << 16, 8, 4, 8, 0, &dst)) {
			fprintf(stderr, "tracer_ring_new failed\n");
			exit(EXIT_HARNESS);
		}
		tracer_ring_sampling_set(src, 8 << 10, 1, 0);
		tracer_ring_sampling_set(dst, child_interval[c], 1, 1);
		uint32_t ss, ds;
		struct sample_bucket *s = tracer_ring_sample_set(src, &ss);
		int in = 0;
		for (uint64_t i = 0; i < 2000; i++)
			in += sample_set_insert(s, ss, 0x7f0000001000 +
							       i * 0x1230) == 0;
		tracer_ring_sample_set_copy(dst, src);
		struct sample_bucket *d = tracer_ring_sample_set(dst, &ds);
		int found = 0;
		for (uint64_t i = 0; i < 2000; i++)
			found += sample_set_remove(d, ds, 0x7f0000001000 +
								  i * 0x1230);
		uint64_t left = 0;
		uint8_t *homed = sample_set_homed(d, ds);
		for (uint64_t i = 0; i < (1ULL << (64 - ds)); i++)
			left += homed[i];
		CHECK(in == 2000 && found == 2000 && left == 0 &&
			      !(tracer_ring_header(dst)->flags &
				RING_F_SET_FULL),
		      "child at %llu (shift %u from %u): %d of %d keys found, "
		      "%llu counts left",
		      (unsigned long long)child_interval[c], ds, ss, found, in,
		      (unsigned long long)left);
		tracer_ring_free(src);
		tracer_ring_free(dst);
	}
}

/* ---- The stub sampling ---- */

enum { IX_MALLOC, IX_FREE, IX_REALLOC, IX_CALLOC, IX_NEW, IX_MEMALIGN,
       IX_SIGNALLED };

static uint64_t bump = 0x7e0000000000ULL;
static uint64_t orig_calls;
static uint64_t lean_calls; /* calls of an original by stub_lean */

/* Count a call of an original made by the stub's lean path: its return
   address is stub_lean_ret. */
#define COUNT_LEAN()                                                        \
	(lean_calls += (uint64_t)__builtin_return_address(0) ==             \
		       (uint64_t)env.code + STUB_BLOB_LEAN_RET)

static uint64_t
fake_malloc(uint64_t size)
{
	COUNT_LEAN();
	orig_calls++;
	uint64_t p = bump;
	bump += (size + 31) & ~15ULL;
	return p;
}

static uint64_t
fake_calloc(uint64_t n, uint64_t size)
{
	return fake_malloc(n * size);
}

static void
fake_free(uint64_t p)
{
	(void)p;
	orig_calls++;
}

static uint64_t
fake_realloc(uint64_t p, uint64_t size)
{
	(void)p;
	return size ? fake_malloc(size) : 0;
}

/* The tracer's blocks, as the engine would hold them: address ->
   weight, from the collected events. */
struct model {
	uint64_t addr[65536], weight[65536];
	size_t n;
	uint64_t unknown_frees, live;
};

static size_t
model_find(const struct model *m, uint64_t addr)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->addr[i] == addr)
			return i;
	return SIZE_MAX;
}

static void
model_drop(struct model *m, uint64_t addr)
{
	size_t i = model_find(m, addr);
	if (i == SIZE_MAX) {
		m->unknown_frees++;
		return;
	}
	m->live -= m->weight[i];
	m->addr[i] = m->addr[--m->n];
	m->weight[i] = m->weight[m->n];
}

static void
model_add(struct model *m, uint64_t addr, uint64_t weight)
{
	if (m->n < 65536) {
		m->addr[m->n] = addr;
		m->weight[m->n++] = weight;
		m->live += weight;
	}
}

/* Apply the collected events to M. */
static void
model_apply(struct model *m)
{
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = &coll.v[i];
		if (!r->has_event)
			continue;
		const struct ht_event *ev = &r->ev;
		switch (ev->kind) {
		case HT_EV_ALLOC:
			model_add(m, ev->addr, ev->weight);
			break;
		case HT_EV_FREE:
			model_drop(m, ev->addr);
			break;
		case HT_EV_REALLOC:
			if (ev->old_addr)
				model_drop(m, ev->old_addr);
			if (ev->addr)
				model_add(m, ev->addr, ev->weight);
			break;
		default:
			break;
		}
	}
}

static void
start(uint64_t interval, uint64_t seed)
{
	int err = env_init(1 << 22, 0, 200000);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		exit(EXIT_HARNESS);
	}
	if (tracer_ring_sampling_set(env.r, interval, seed, 0)) {
		fprintf(stderr, "sampling_set failed\n");
		exit(EXIT_HARNESS);
	}
	env_fn(IX_MALLOC, HT_FN_MALLOC, fake_malloc, 0, 0);
	env_fn(IX_FREE, HT_FN_FREE, fake_free, 0, 0);
	env_fn(IX_REALLOC, HT_FN_REALLOC, fake_realloc, 0, 0);
	env_fn(IX_CALLOC, HT_FN_CALLOC, fake_calloc, 0, 0);
	env_thread_init();
	orig_calls = 0;
}

static uint64_t
thread_passed(void)
{
	struct tracer_ring_stats st;
	tracer_ring_stats(env.r, &st);
	return st.sample_skipped;
}

/* N blocks of SIZE bytes, all freed: records only for the sampled ones
   and their frees; the total estimated within 5 sd. */
static void
test_stub_small(void)
{
	const uint64_t t = 4096, n = 100000, size = 48;
	start(t, 1);
	static uint64_t blocks[100000];
	for (uint64_t i = 0; i < n; i++) {
		blocks[i] = tramp1(IX_MALLOC, size);
		if (i % 1000 == 0)
			env_drain(0);
	}
	env_drain(0);
	uint64_t allocs = 0, est = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = &coll.v[i];
		if (r->has_event && r->ev.kind == HT_EV_ALLOC) {
			allocs++;
			est += r->ev.weight;
			CHECK(r->ev.weight % t == 0 && r->ev.size == size,
			      "weight %llu", (unsigned long long)r->ev.weight);
		}
	}
	double truth = (double)(n * size), sd = sqrt(truth * (double)t);
	CHECK(fabs((double)est - truth) < 5 * sd,
	      "estimate %llu of %.0f (5 sd %.0f)", (unsigned long long)est,
	      truth, 5 * sd);
	CHECK(coll.n == allocs && allocs < n / 50,
	      "%llu records for %llu calls", (unsigned long long)coll.n,
	      (unsigned long long)n);
	CHECK(thread_passed() == n - allocs,
	      "%llu calls passed over, %llu sampled",
	      (unsigned long long)thread_passed(),
	      (unsigned long long)allocs);
	env_collect_reset();
	for (uint64_t i = 0; i < n; i++) {
		tramp1(IX_FREE, blocks[i]);
		if (i % 1000 == 0)
			env_drain(0);
	}
	env_drain(0);
	CHECK(coll.n == allocs, "%llu frees recorded for %llu sampled blocks",
	      (unsigned long long)coll.n, (unsigned long long)allocs);
	CHECK(orig_calls == 2 * n, "every call reached the allocator");
	env_fini();
}

/* Blocks of at least the interval: each recorded at its size, and
   freed. */
static void
test_stub_big(void)
{
	start(4096, 2);
	uint64_t p[10];
	for (int i = 0; i < 10; i++)
		p[i] = tramp1(IX_MALLOC, 4096 + (uint64_t)i * 1000);
	uint64_t c = tramp2(IX_CALLOC, 100, 50);
	for (int i = 0; i < 10; i++)
		tramp1(IX_FREE, p[i]);
	tramp1(IX_FREE, c);
	env_drain(0);
	CHECK(coll.n == 22, "%llu records", (unsigned long long)coll.n);
	for (int i = 0; i < 10 && i < (int)coll.n; i++)
		CHECK(coll.v[i].ev.weight == 4096 + (uint64_t)i * 1000,
		      "block %d weighs %llu", i,
		      (unsigned long long)coll.v[i].ev.weight);
	if (coll.n > 10)
		CHECK(coll.v[10].ev.weight == 5000, "calloc(100, 50)");
	env_fini();
}

/* Realloc chains: the tracer's blocks stay exactly the sampled ones
   (every free and realloc of a block it holds, none of another), the
   estimate of what is live in the end within 5 sd, and a chain of
   unsampled reallocs writes nothing. */
static void
test_stub_realloc(void)
{
	const uint64_t t = 8192;
	start(t, 3);
	static struct model m;
	memset(&m, 0, sizeof(m));
	uint64_t truth = 0;
	uint64_t r = 5;
	for (int chain = 0; chain < 3000; chain++) {
		uint64_t size = 16 + sample_rand(&r) % 256;
		uint64_t p = tramp1(IX_MALLOC, size);
		for (int step = 0; step < 8; step++) {
			size = 16 + sample_rand(&r) % 2048;
			p = tramp2(IX_REALLOC, p, size);
		}
		if (chain % 2)
			tramp1(IX_FREE, p);
		else if (chain % 4 == 0)
			tramp2(IX_REALLOC, p, 0); /* frees it */
		else
			truth += size; /* kept */
		if (chain % 50 == 0) {
			env_drain(0);
			model_apply(&m);
			env_collect_reset();
		}
	}
	env_drain(0);
	model_apply(&m);
	CHECK(m.unknown_frees == 0, "%llu frees of blocks not held",
	      (unsigned long long)m.unknown_frees);
	double sd = sqrt((double)truth * (double)t);
	CHECK(fabs((double)m.live - (double)truth) < 5 * sd,
	      "live estimate %llu of %llu (5 sd %.0f)",
	      (unsigned long long)m.live, (unsigned long long)truth, 5 * sd);
	env_fini();

	/* Small reallocs and frees, none sampled: nothing in the ring. */
	start(1ULL << 30, 4);
	uint64_t p = tramp1(IX_MALLOC, 10);
	for (int i = 0; i < 1000; i++)
		p = tramp2(IX_REALLOC, p, 10 + (uint64_t)i);
	tramp1(IX_FREE, p);
	env_drain(0);
	CHECK(coll.n == 0, "%llu records for unsampled calls",
	      (unsigned long long)coll.n);
	env_fini();
}

/* Allocate blocks of SIZE (sampled: at least the interval) until the
   sampled-address set overflows or MAX were made, draining as they go;
   the first block's address in *FIRST when not NULL. Returns how many. */
static uint64_t
fill_set(uint64_t size, uint64_t max, uint64_t *first)
{
	uint64_t n = 0;
	while (!(env.h->flags & RING_F_SET_FULL) && n < max) {
		uint64_t p = tramp1(IX_MALLOC, size);
		if (first && !n)
			*first = p;
		if (++n % 1000 == 0) {
			env_drain(0);
			env_collect_reset();
		}
	}
	env_drain(0);
	env_collect_reset();
	return n;
}

/* More sampled blocks live than the set holds: the stub sets
   RING_F_SET_FULL once (counted in stats.set_full), and from then on
   every free is recorded, a block's never sampled too. */
static void
test_stub_full(void)
{
	start(16, 6); /* every block of 16 B is at least the interval */
	uint64_t n = fill_set(16, 400000, NULL);
	CHECK(env.h->flags & RING_F_SET_FULL, "no overflow in %llu blocks",
	      (unsigned long long)n);
	CHECK(n > 150000, "the set held only %llu blocks",
	      (unsigned long long)n);
	CHECK(env.h->stats.set_full == 1, "%llu overflows counted",
	      (unsigned long long)env.h->stats.set_full);
	tramp1(IX_FREE, 0x1000); /* never allocated, never sampled */
	env_drain(0);
	CHECK(coll.n == 1 && coll.v[0].ev.kind == HT_EV_FREE &&
		      coll.v[0].ev.addr == 0x1000,
	      "the free recorded once the set is full (%llu records)",
	      (unsigned long long)coll.n);
	env_fini();
}

/* A ring sampling at 512 KiB has a set of 4096 buckets (its counts 4
   KiB), the descriptors the stub reads say so, and the stub finds the
   blocks there. */
static void
test_stub_set_size(void)
{
	start(512 << 10, 8);
	CHECK(env.h->set_shift == 52, "shift %u", env.h->set_shift);
	CHECK(env.h->set_homed_off == env.h->set_off + 64 * 4096,
	      "counts at %llu",
	      (unsigned long long)(env.h->set_homed_off - env.h->set_off));
	int ix[] = { IX_MALLOC, IX_FREE, IX_REALLOC, IX_CALLOC };
	for (int i = 0; i < 4; i++)
		CHECK(env.h->fns[ix[i]].set_home_mask == 4095 &&
			      env.h->fns[ix[i]].set_homed_off ==
				      env.h->set_homed_off,
		      "descriptor %d: mask %#llx", ix[i],
		      (unsigned long long)env.h->fns[ix[i]].set_home_mask);
	/* The stub's free finds every sampled block at its masked home
	   (homes beyond 4095 would read no count and pass them over). */
	uint64_t blocks[200];
	for (int i = 0; i < 200; i++)
		blocks[i] = tramp1(IX_MALLOC, 512 << 10);
	env_drain(0);
	env_collect_reset();
	for (int i = 0; i < 200; i++)
		tramp1(IX_FREE, blocks[i]);
	env_drain(0);
	uint64_t freed = 0;
	for (uint64_t i = 0; i < coll.n; i++)
		freed += coll.v[i].ev.kind == HT_EV_FREE;
	CHECK(freed == 200 && coll.n == 200, "%llu of 200 frees recorded",
	      (unsigned long long)freed);
	env_fini();
}

/* The smallest set (a large interval: 512 buckets, 3584 slots) fills
   like the largest: the overflow comes past 60% of its slots, once, and
   then every free is recorded; a sampled block freed after it is
   recorded once. */
static void
test_stub_full_small(void)
{
	uint64_t big = 64ULL << 20;
	start(big, 9);
	CHECK(env.h->set_shift == 55, "shift %u", env.h->set_shift);
	uint64_t first = 0;
	uint64_t n = fill_set(big, 10000, &first);
	CHECK(env.h->flags & RING_F_SET_FULL, "no overflow in %llu blocks",
	      (unsigned long long)n);
	CHECK(n - 1 > 3584 * 6 / 10 && n - 1 <= 3584,
	      "the set of 3584 slots held %llu blocks",
	      (unsigned long long)(n - 1));
	CHECK(env.h->stats.set_full == 1, "%llu overflows counted",
	      (unsigned long long)env.h->stats.set_full);
	tramp1(IX_FREE, first);
	tramp1(IX_FREE, 0x1000);
	env_drain(0);
	CHECK(coll.n == 2 && coll.v[0].ev.kind == HT_EV_FREE &&
		      coll.v[0].ev.addr == first &&
		      coll.v[1].ev.kind == HT_EV_FREE &&
		      coll.v[1].ev.addr == 0x1000,
	      "both frees recorded once the set is full (%llu records)",
	      (unsigned long long)coll.n);
	env_fini();
}

/* ---- The lean path (stub_lean) ---- */

/* This thread's entry in the thread table. */
static const volatile struct ring_thread *
self_entry(void)
{
	return ring_thread_lookup(env.h, env_self.tcb);
}

/* The estimate of the allocations recorded for FN, into *EST; returns
   how many. */
static uint64_t
recorded(enum ht_alloc_fn fn, uint64_t *est)
{
	uint64_t n = 0;
	*est = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = &coll.v[i];
		if (r->has_event && r->ev.kind == HT_EV_ALLOC &&
		    r->ev.fn == fn) {
			n++;
			*est += r->ev.weight;
		}
	}
	return n;
}

/* operator new that calls malloc, as libstdc++'s does: its descriptor's
   object covers everything, so the malloc is internal. */
static uint64_t
fake_new(uint64_t size)
{
	COUNT_LEAN();
	uint64_t p = tramp1(IX_MALLOC, size);
	__asm__ volatile("" ::: "memory"); /* a call, not a jump */
	return p;
}

/* An operator new-like allocation calling malloc is counted once, as
   the new: the lean path marks its call in progress, so the malloc goes
   the whole way and is found internal (counted in the thread's
   INTERNAL, never sampled); every unsampled new reaches its original
   from the lean path, the mallocs never. */
static void
test_lean_internal(void)
{
	const uint64_t t = 4096, n = 50000, size = 40;
	start(t, 3);
	env_fn(IX_NEW, HT_FN_NEW, fake_new, 0, UINT64_MAX);
	uint64_t internal0 = self_entry()->internal;
	lean_calls = 0;
	for (uint64_t i = 0; i < n; i++) {
		tramp1(IX_NEW, size);
		if (i % 1000 == 0)
			env_drain(0);
	}
	env_drain(0);
	uint64_t est, mallocs = recorded(HT_FN_MALLOC, &est);
	uint64_t news = recorded(HT_FN_NEW, &est);
	double truth = (double)(n * size), sd = sqrt(truth * (double)t);
	CHECK(mallocs == 0, "%llu internal mallocs recorded",
	      (unsigned long long)mallocs);
	CHECK(fabs((double)est - truth) < 5 * sd,
	      "new estimated %llu of %.0f (5 sd %.0f)",
	      (unsigned long long)est, truth, 5 * sd);
	CHECK(self_entry()->internal - internal0 == n,
	      "%llu internal calls seen of %llu",
	      (unsigned long long)(self_entry()->internal - internal0),
	      (unsigned long long)n);
	CHECK(lean_calls == n - news && thread_passed() == n - news,
	      "%llu originals called by the lean path, %llu passed over, for "
	      "%llu unsampled news", (unsigned long long)lean_calls,
	      (unsigned long long)thread_passed(),
	      (unsigned long long)(n - news));
	CHECK(self_entry()->outer_rsp == 0, "a call left in progress");
	env_fini();
}

/* The sizes the lean path reads: calloc's product (the full path when
   either factor is 2^32 or more), memalign's second argument; each
   estimate within 5 sd. */
static void
test_lean_sizes(void)
{
	const uint64_t t = 4096, n = 40000;
	start(t, 4);
	env_fn(IX_MEMALIGN, HT_FN_MEMALIGN, fake_calloc, 0, 0);
	lean_calls = 0;
	for (uint64_t i = 0; i < n; i++) {
		tramp2(IX_CALLOC, 3, 16);
		tramp2(IX_MEMALIGN, 1, 80); /* fake_calloc: 80 bytes */
		if (i % 500 == 0)
			env_drain(0);
	}
	env_drain(0);
	uint64_t est_c, est_m;
	uint64_t nc = recorded(HT_FN_CALLOC, &est_c);
	uint64_t nm = recorded(HT_FN_MEMALIGN, &est_m);
	double truth_c = (double)(n * 48), truth_m = (double)(n * 80);
	CHECK(fabs((double)est_c - truth_c) < 5 * sqrt(truth_c * (double)t),
	      "calloc estimated %llu of %.0f", (unsigned long long)est_c,
	      truth_c);
	CHECK(fabs((double)est_m - truth_m) < 5 * sqrt(truth_m * (double)t),
	      "memalign estimated %llu of %.0f", (unsigned long long)est_m,
	      truth_m);
	CHECK(lean_calls == 2 * n - nc - nm,
	      "%llu originals called by the lean path for %llu unsampled",
	      (unsigned long long)lean_calls,
	      (unsigned long long)(2 * n - nc - nm));
	env_collect_reset();
	lean_calls = 0;
	/* 2^32 * 0: no bytes, but the factor is too wide for the lean
	   path's product */
	tramp2(IX_CALLOC, 1ULL << 32, 0);
	CHECK(lean_calls == 0, "a calloc with a factor of 2^32 went lean");
	env_fini();
}

/* A signal handler's allocation while an original runs from the lean
   path. */
static volatile uint64_t sig_outer_in, sig_outer_before, sig_outer_after;
static volatile uint64_t sig_block;

static void
on_usr1(int sig)
{
	(void)sig;
	sig_outer_in = self_entry()->outer_rsp;
	sig_block = tramp1(IX_MALLOC, 3 << 20); /* sampled: its own */
	tramp1(IX_MALLOC, 24);                  /* not sampled */
}

/* A malloc whose code raises a signal, then calls malloc (internal).
   Its own section is its object's code: the handler's calls return
   elsewhere. */
extern const char __start_lean_sig[], __stop_lean_sig[];

__attribute__((section("lean_sig"), noinline)) static uint64_t
fake_signalled(uint64_t size)
{
	COUNT_LEAN();
	uint64_t p = bump;
	bump += (size + 31) & ~15ULL;
	sig_outer_before = self_entry()->outer_rsp;
	raise(SIGUSR1);
	sig_outer_after = self_entry()->outer_rsp;
	tramp1(IX_MALLOC, 32);
	__asm__ volatile("" ::: "memory"); /* no tail call above */
	return p;
}

/* The handler's calls are its own, not internal: they see a call in
   progress (OUTER_RSP, the lean path's), so they go the whole way: the
   large one recorded at its size, the small one passed over; the lean
   path's call is still in progress when the handler returns (its
   internal malloc is not counted), and over once it returns. */
static void
test_lean_signal(void)
{
	start(1 << 20, 5);
	env_fn(IX_SIGNALLED, HT_FN_MALLOC, fake_signalled,
	       (uint64_t)__start_lean_sig, (uint64_t)__stop_lean_sig);
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, &old);
	uint64_t internal0 = self_entry()->internal;
	lean_calls = 0;
	tramp1(IX_SIGNALLED, 100);
	sigaction(SIGUSR1, &old, NULL);
	env_drain(0);
	CHECK(lean_calls == 1, "the signalled malloc did not go lean");
	CHECK(sig_outer_before != 0 && sig_outer_in == sig_outer_before &&
		      sig_outer_after == sig_outer_before,
	      "the call in progress: 0x%llx, in the handler 0x%llx, after "
	      "it 0x%llx", (unsigned long long)sig_outer_before,
	      (unsigned long long)sig_outer_in,
	      (unsigned long long)sig_outer_after);
	CHECK(self_entry()->internal - internal0 == 1,
	      "%llu internal calls, 1 expected",
	      (unsigned long long)(self_entry()->internal - internal0));
	CHECK(coll.n == 1 && coll.v[0].has_event &&
		      coll.v[0].ev.kind == HT_EV_ALLOC &&
		      coll.v[0].ev.addr == sig_block &&
		      coll.v[0].ev.size == 3 << 20 &&
		      coll.v[0].ev.weight >= 3 << 20,
	      "%llu records, the handler's block alone expected",
	      (unsigned long long)coll.n);
	CHECK(self_entry()->outer_rsp == 0, "a call left in progress");
	env_fini();
}

/* Exact mode never takes the lean path: every call recorded. */
static void
test_lean_exact(void)
{
	start(0, 1);
	lean_calls = 0;
	for (int i = 0; i < 1000; i++)
		tramp1(IX_MALLOC, 48);
	env_drain(0);
	uint64_t est;
	CHECK(lean_calls == 0 && recorded(HT_FN_MALLOC, &est) == 1000,
	      "exact: %llu calls went lean, %llu recorded",
	      (unsigned long long)lean_calls, (unsigned long long)coll.n);
	env_fini();
}

/* The same seed samples the same calls. */
static void
run_seeded(uint64_t seed, uint64_t *out, size_t max, size_t *n)
{
	start(2048, seed);
	uint64_t r = 11;
	for (int i = 0; i < 20000; i++)
		tramp1(IX_MALLOC, 1 + sample_rand(&r) % 100);
	env_drain(0);
	*n = 0;
	for (uint64_t i = 0; i < coll.n && *n < max; i++)
		out[(*n)++] = coll.v[i].args[0] ^ (coll.v[i].ev.weight << 20);
	env_fini();
}

static void
test_stub_seed(void)
{
	static uint64_t a[4096], b[4096], c[4096];
	size_t na, nb, nc;
	run_seeded(77, a, 4096, &na);
	run_seeded(77, b, 4096, &nb);
	run_seeded(78, c, 4096, &nc);
	CHECK(na > 100 && na == nb && !memcmp(a, b, na * sizeof(*a)),
	      "seed 77 twice: %zu and %zu records", na, nb);
	CHECK(na != nc || memcmp(a, c, na * sizeof(*a)),
	      "seeds 77 and 78 sample other calls");
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_log2();
	test_gap();
	test_take();
	test_streams();
	test_set();
	test_set_sizing();
	test_set_copy();
	test_stub_small();
	test_stub_big();
	test_stub_realloc();
	test_stub_full();
	test_stub_set_size();
	test_stub_full_small();
	test_stub_seed();
	test_lean_internal();
	test_lean_sizes();
	test_lean_signal();
	test_lean_exact();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
