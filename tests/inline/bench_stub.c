/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cost of a call through the stub, against a direct call of the same
   function: no stack copy, then a 4 KiB one, then the stack walked (rules
   from our own CFI, selfrule.h) from a few frames deep and from 20 frames
   deeper, in a ring of the default 8 MiB. Batches of calls are timed; the
   drain between them is timed apart (in heaptrace it runs on the tracer's
   CPU). Walking, a first batch with stubenv's consumer answering the
   stubs' RULE questions publishes the rules; the timed batches then ask
   nothing. Prints the median and best batch; fails only when records go
   missing or stacks are not walked. Then, sampling at 512 KiB
   (--sampling-interval), the common calls: a malloc of 0-999 bytes and
   a free of a block, neither sampled. Last, walking with Python frames
   (tracer/python/pyword.h) on a fake 3.11 thread state: 10 frames, and
   64 (PY_MAX_FRAMES). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "selfrule.h"
#include "stubenv.h"
#include "tests/check.h"

enum { BATCH = 1000, BATCHES = 301 };

static uint64_t calls;
/* How the walking stubs use their walk memo (ring.h). */
static enum ring_memo_mode memo_mode = RING_MEMO_OFF;

__attribute__((noinline)) static uint64_t
fake_malloc(uint64_t size)
{
	calls++;
	return 0x7e0000000000ULL + size;
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct timing {
	double median, best; /* ns per call */
	double drain;        /* ns per record, mean */
};

/* FN(I) called DEPTH frames below the caller. */
__attribute__((noinline)) static uint64_t
nest(unsigned depth, uint64_t (*fn)(uint64_t), uint64_t i)
{
	if (!depth)
		return fn(i);
	uint64_t r = nest(depth - 1, fn, i);
	/* Used after the call, where the compiler cannot see: no tail call,
	   and no loop made of the recursion either (a frame per level). */
	__asm__ volatile("" : "+r"(r));
	return r + 1;
}

/* BATCHES batches of calls of FN, DEPTH frames deep, each drained here
   when RING. */
static struct timing
run(uint64_t (*fn)(uint64_t), bool ring, unsigned depth, int batches)
{
	static double t[BATCHES];
	double dsum = 0;
	for (int b = 0; b < batches; b++) {
		double t0 = now();
		for (uint64_t i = 0; i < BATCH; i++)
			nest(depth, fn, i);
		t[b] = (now() - t0) / BATCH;
		if (ring) {
			t0 = now();
			env_collect_reset();
			long n = env_drain(0);
			CHECK(n == BATCH, "%ld records of %d", n, BATCH);
			dsum += (now() - t0) / BATCH;
		}
	}
	qsort(t, (size_t)batches, sizeof(t[0]), cmp_double);
	return (struct timing){ .median = t[batches / 2], .best = t[0],
				.drain = dsum / batches };
}

/* Warm-up, then timed: two rounds of one loop, so that both run() from
   the same call site and the warm-up's rules are the timed stacks'. The
   loop's body has no branch either (round_begin and round_end decide),
   which the compiler could thread into a call site per round. */
static volatile int rounds = 2;
static struct tracer_ring_stats warm_st;
static uint64_t warm_misses;

/* Round 0 is the warm-up: stubenv's consumer answers the stubs' RULE
   questions meanwhile. */
__attribute__((noinline)) static void
round_begin(int i)
{
	if (i == 0)
		env_consumer_start(0);
}

__attribute__((noinline)) static void
round_end(int i)
{
	if (i != 0)
		return;
	env_sync();
	env_consumer_stop(true);
	tracer_ring_stats(env.r, &warm_st);
	warm_misses = env.h->stats.rule_misses;
}

/* A fake 3.11 thread state of this thread, its innermost frame the
   first of FRAMES frames (3.11's offsets: tracer/python/'s tables). */
static uint64_t py_anchor;
static uint64_t py_ts[32];
static uint64_t py_cframe[2];
static uint64_t py_frames[PY_MAX_FRAMES][10];
static uint8_t py_code[256] __attribute__((aligned(8)));

static void
python_publish(unsigned frames)
{
	struct py_walk_params p = {
		.anchor = (uint64_t)&py_anchor,
		.tstate_rule = PY_TSTATE_DIRECT,
		.first_rule = PY_FIRST_CFRAME,
		.instr_rule = PY_INSTR_POINTER,
		.entry_rule = PY_ENTRY_FLAG,
		.max_frames = PY_MAX_FRAMES,
		.ts_thread_id = 152, .ts_frame = 56, .cframe_current = 8,
		.f_back = 48, .f_code = 32, .f_instr = 56, .f_entry = 68,
		.code_adaptive = 184,
	};
	py_anchor = (uint64_t)py_ts;
	py_ts[152 / 8] = env_tcb();
	py_ts[56 / 8] = (uint64_t)py_cframe;
	py_cframe[1] = (uint64_t)py_frames[0];
	for (unsigned i = 0; i < frames; i++) {
		uint64_t *f = py_frames[i];
		f[32 / 8] = (uint64_t)py_code;
		f[56 / 8] = (uint64_t)py_code + 184 + 2 * i;
		f[48 / 8] = i + 1 < frames ? (uint64_t)py_frames[i + 1] : 0;
		f[64 / 8] = i + 1 == frames ? 1ULL << 32 : 0; /* is_entry */
	}
	tracer_ring_python_set(env.r, &p);
}

/* Through the stub, copying STACK_COPY bytes, or walking when WALK;
   with PY_FRAMES Python frames (0: none published). */
static struct timing
through_stub_py(uint32_t stack_copy, bool walk, unsigned depth,
		unsigned py_frames_n)
{
	int err = env_init(8 << 20, stack_copy, BATCH);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		exit(EXIT_HARNESS);
	}
	env_thread_init();
	env_fn(0, HT_FN_MALLOC, fake_malloc, 0, 0);
	if (walk) {
		env.on_rule = selfrule_get;
		tracer_ring_walk_set(env.r, 80);
	}
	tracer_ring_memo_set(env.r, memo_mode);
	if (py_frames_n)
		python_publish(py_frames_n);
	struct timing tm = { 0 };
	struct tracer_ring_stats st;
	memset(&warm_st, 0, sizeof(warm_st));
	warm_misses = 0;
	for (int i = walk ? 0 : 1; i < rounds; i++) {
		round_begin(i);
		tm = run((uint64_t (*)(uint64_t))env.tramp[0], i > 0, depth,
			 i > 0 ? BATCHES : 1);
		round_end(i);
	}
	tracer_ring_stats(env.r, &st);
	CHECK(!walk || (env.h->stats.rule_misses == warm_misses &&
			st.walked - warm_st.walked ==
				(uint64_t)BATCH * BATCHES),
	      "%llu walked, %llu rule misses once warm",
	      (unsigned long long)(st.walked - warm_st.walked),
	      (unsigned long long)(env.h->stats.rule_misses - warm_misses));
	env_fini();
	return tm;
}

static struct timing
through_stub(uint32_t stack_copy, bool walk, unsigned depth)
{
	return through_stub_py(stack_copy, walk, depth, 0);
}

__attribute__((noinline)) static uint64_t
fake_free(uint64_t p)
{
	calls++;
	return p;
}

/* Through the stub sampling every 512 KiB: FN's unsampled calls (a few
   are sampled, and recorded, on the way). */
static struct timing
through_stub_sampled(enum ht_alloc_fn fn)
{
	int err = env_init(8 << 20, 0, BATCH);
	if (err || tracer_ring_sampling_set(env.r, 512 * 1024, 1, 0)) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		exit(EXIT_HARNESS);
	}
	env_thread_init();
	env_fn(0, fn, fn == HT_FN_FREE ? fake_free : fake_malloc, 0, 0);
	struct timing tm = run((uint64_t (*)(uint64_t))env.tramp[0], false, 0,
			       BATCHES);
	struct tracer_ring_stats st;
	tracer_ring_stats(env.r, &st);
	CHECK(fn == HT_FN_FREE ||
		      st.sample_skipped > (uint64_t)BATCH * BATCHES * 99 / 100,
	      "%llu calls passed over", (unsigned long long)st.sample_skipped);
	env_fini();
	return tm;
}

int
main(void)
{
	uint64_t (*volatile direct)(uint64_t) = fake_malloc;
	struct timing d = run(direct, false, 0, BATCHES);
	struct timing s0 = through_stub(0, false, 0);
	struct timing s4 = through_stub(4096, false, 0);
	struct timing w0 = through_stub(0, selfrule_session() != NULL, 0);
	struct timing w20 = through_stub(0, selfrule_session() != NULL, 20);
	memo_mode = RING_MEMO_ON;
	struct timing m0 = through_stub(0, selfrule_session() != NULL, 0);
	struct timing m20 = through_stub(0, selfrule_session() != NULL, 20);
	memo_mode = RING_MEMO_OFF;
	struct timing p10 =
		through_stub_py(0, selfrule_session() != NULL, 0, 10);
	struct timing p64 =
		through_stub_py(0, selfrule_session() != NULL, 0, PY_MAX_FRAMES);
	struct timing sm = through_stub_sampled(HT_FN_MALLOC);
	struct timing sf = through_stub_sampled(HT_FN_FREE);
	printf("ns per call (median, best)    call        drain/record\n");
	printf("direct                        %5.1f %5.1f\n", d.median, d.best);
	printf("stub, no stack copy           %5.1f %5.1f %10.1f\n", s0.median,
	       s0.best, s0.drain);
	printf("stub, 4 KiB stack copy        %5.1f %5.1f %10.1f\n", s4.median,
	       s4.best, s4.drain);
	printf("stub, walking 7 frames        %5.1f %5.1f %10.1f\n", w0.median,
	       w0.best, w0.drain);
	printf("stub, walking 27 frames       %5.1f %5.1f %10.1f\n", w20.median,
	       w20.best, w20.drain);
	printf("stub, 7 frames, walk memo     %5.1f %5.1f %10.1f\n", m0.median,
	       m0.best, m0.drain);
	printf("stub, 27 frames, walk memo    %5.1f %5.1f %10.1f\n", m20.median,
	       m20.best, m20.drain);
	printf("stub, 7 + 10 Python frames    %5.1f %5.1f %10.1f\n",
	       p10.median, p10.best, p10.drain);
	printf("stub, 7 + 64 Python frames    %5.1f %5.1f %10.1f\n",
	       p64.median, p64.best, p64.drain);
	printf("sampled 512K, malloc passed   %5.1f %5.1f\n", sm.median,
	       sm.best);
	printf("sampled 512K, free passed     %5.1f %5.1f\n", sf.median,
	       sf.best);
	return failures ? 1 : 0;
}
