/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stub blob run for real, in this process, without ptrace: calls go
   through trampolines to test "allocators" compiled here (never the
   process's own malloc), the SIGTRAP handler of stubenv.c plays the
   tracer, and the drained records are checked: one per call with the
   right kind, arguments, result, entry registers and stack; one total
   order that keeps each thread's program order and puts every free before
   the allocation that reuses its address; nothing lost with a full ring
   or a signal handler allocating mid-record; callee-saved registers
   preserved. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "stubenv.h"
#include "tests/check.h"
#include "tracer/inline/stub_blob.h"
#include "tracer/inline/tsc.h"

/* Descriptor indices. */
enum {
	IX_MALLOC,
	IX_CALLOC,
	IX_FREE,
	IX_REALLOC,
	IX_POSIX_MEMALIGN,
	IX_NEW,
	IX_REALLOC_TAIL,
	IX_POOL_MALLOC,
	IX_POOL_FREE,
};

#define FAKE_BASE 0x7e0000000000ULL
#define PM_FAIL 0xdeadULL       /* posix_memalign size that fails */
#define NESTED_MARK (1ULL << 40) /* arguments of calls made by handlers */

static uint64_t orig_calls[RING_MAX_FNS];

static void
count(unsigned idx)
{
	__atomic_fetch_add(&orig_calls[idx], 1, __ATOMIC_RELAXED);
}

/* ---- The "allocators" ---- */

static uint64_t
fake_malloc(uint64_t size)
{
	count(IX_MALLOC);
	return FAKE_BASE + size * 16;
}

static uint64_t
fake_calloc(uint64_t n, uint64_t size)
{
	count(IX_CALLOC);
	return FAKE_BASE + n * size * 16 + 8;
}

static void
fake_free(uint64_t p)
{
	(void)p;
	count(IX_FREE);
}

static uint64_t
fake_realloc(uint64_t p, uint64_t n)
{
	count(IX_REALLOC);
	return p ? p + n : FAKE_BASE + n;
}

static int
fake_posix_memalign(uint64_t *memptr, uint64_t align, uint64_t size)
{
	count(IX_POSIX_MEMALIGN);
	if (size == PM_FAIL)
		return 12;
	*memptr = FAKE_BASE + align + size;
	return 0;
}

/* operator new calling malloc, in a section of its own so that its
   "object" is known: the inner malloc returns into it. */
static uint64_t (*volatile new_calls_malloc)(uint64_t);

__attribute__((noinline, section("fake_new_text"))) static uint64_t
fake_new(uint64_t size)
{
	uint64_t p = new_calls_malloc(size);
	count(IX_NEW); /* after the call: no tail call */
	return p;
}
extern const char __start_fake_new_text[], __stop_fake_new_text[];

/* realloc(p, n) tail-jumping into malloc(n): the inner call returns into
   the blob, as glibc's realloc(NULL, n) does into malloc. */
uint64_t malloc_tramp_ptr __attribute__((visibility("hidden")));
uint64_t fake_realloc_tail(uint64_t p, uint64_t n);
__asm__(
	"	.text\n"
	"	.hidden	fake_realloc_tail\n"
	"	.type	fake_realloc_tail, @function\n"
	"fake_realloc_tail:\n"
	"	movq	%rsi, %rdi\n"
	"	jmpq	*malloc_tramp_ptr(%rip)\n"
	"	.size	fake_realloc_tail, . - fake_realloc_tail\n");

/* A pool of addresses handed out and taken back by several threads, so
   that an address freed by one is reused by another. */
#define POOL_N 4096
#define POOL_BASE 0x7f0000000000ULL
#define POOL_STRIDE 64
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t pool[POOL_N];
static unsigned pool_n;

static void
pool_init(void)
{
	for (unsigned i = 0; i < POOL_N; i++)
		pool[i] = POOL_BASE + (uint64_t)(POOL_N - 1 - i) * POOL_STRIDE;
	pool_n = POOL_N;
}

static uint64_t
pool_malloc(uint64_t size)
{
	(void)size;
	pthread_mutex_lock(&pool_lock);
	uint64_t p = pool_n ? pool[--pool_n] : 0;
	pthread_mutex_unlock(&pool_lock);
	count(IX_POOL_MALLOC);
	return p;
}

static void
pool_free(uint64_t p)
{
	pthread_mutex_lock(&pool_lock);
	pool[pool_n++] = p;
	pthread_mutex_unlock(&pool_lock);
	count(IX_POOL_FREE);
}

static void
setup_fns(void)
{
	env_fn(IX_MALLOC, HT_FN_MALLOC, fake_malloc, 0, 0);
	env_fn(IX_CALLOC, HT_FN_CALLOC, fake_calloc, 0, 0);
	env_fn(IX_FREE, HT_FN_FREE, fake_free, 0, 0);
	env_fn(IX_REALLOC, HT_FN_REALLOC, fake_realloc, 0, 0);
	env_fn(IX_POSIX_MEMALIGN, HT_FN_POSIX_MEMALIGN, fake_posix_memalign,
	       0, 0);
	env_fn(IX_NEW, HT_FN_NEW, fake_new, (uint64_t)__start_fake_new_text,
	       (uint64_t)__stop_fake_new_text);
	env_fn(IX_REALLOC_TAIL, HT_FN_REALLOC, fake_realloc_tail, 0, 0);
	env_fn(IX_POOL_MALLOC, HT_FN_MALLOC, pool_malloc, 0, 0);
	env_fn(IX_POOL_FREE, HT_FN_FREE, pool_free, 0, 0);
	new_calls_malloc = (uint64_t (*)(uint64_t))env.tramp[IX_MALLOC];
	malloc_tramp_ptr = env.tramp[IX_MALLOC];
	memset(orig_calls, 0, sizeof(orig_calls));
}

static int
start(uint64_t ring_size, uint32_t stack_copy, uint64_t cap)
{
	int err = env_init(ring_size, stack_copy, cap);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		exit(EXIT_HARNESS);
	}
	setup_fns();
	return 0;
}

static const struct rec_copy *
rec(uint64_t i)
{
	static const struct rec_copy none;
	return i < coll.n ? &coll.v[i] : &none;
}

/* ---- One call, one record ---- */

static void
test_kinds(void)
{
	start(1 << 20, 256, 64);
	env_thread_init();
	uint32_t tid = (uint32_t)gettid();

	uint64_t p = tramp1(IX_MALLOC, 100);
	CHECK(p == FAKE_BASE + 1600, "malloc returned %#llx",
	      (unsigned long long)p);
	CHECK(tramp2(IX_CALLOC, 3, 5) == FAKE_BASE + 15 * 16 + 8, "calloc");
	tramp1(IX_FREE, p);
	tramp1(IX_FREE, 0);
	CHECK(tramp2(IX_REALLOC, p, 200) == p + 200, "realloc");
	CHECK(tramp2(IX_REALLOC, 0, 50) == FAKE_BASE + 50, "realloc(NULL)");
	uint64_t m = 0;
	CHECK(tramp3(IX_POSIX_MEMALIGN, (uint64_t)&m, 64, 1000) == 0 &&
		      m == FAKE_BASE + 1064,
	      "posix_memalign");
	CHECK(tramp3(IX_POSIX_MEMALIGN, (uint64_t)&m, 64, PM_FAIL) == 12,
	      "posix_memalign failing");
	CHECK(orig_calls[IX_FREE] == 2, "free(NULL) still reaches free");

	CHECK(env_drain(0) == 8, "8 records, got %llu",
	      (unsigned long long)coll.n);
	CHECK(env.h->stats.miss_traps == 1 && env.miss_stops == 1,
	      "one thread-table miss (%llu)",
	      (unsigned long long)env.h->stats.miss_traps);
	static const struct {
		uint16_t kind, fn;
		uint64_t a0, result;
		bool has_event;
	} want[] = {
		{ RING_REC_ALLOC, HT_FN_MALLOC, 100, FAKE_BASE + 1600, true },
		{ RING_REC_ALLOC, HT_FN_CALLOC, 3, FAKE_BASE + 248, true },
		{ RING_REC_FREE, HT_FN_FREE, FAKE_BASE + 1600, 0, true },
		{ RING_REC_REALLOC_BEGIN, HT_FN_REALLOC, FAKE_BASE + 1600, 0,
		  true },
		{ RING_REC_REALLOC, HT_FN_REALLOC, FAKE_BASE + 1600,
		  FAKE_BASE + 1800, true },
		{ RING_REC_REALLOC, HT_FN_REALLOC, 0, FAKE_BASE + 50, true },
		{ RING_REC_ALLOC, HT_FN_POSIX_MEMALIGN, 0, FAKE_BASE + 1064,
		  true },
		{ RING_REC_ALLOC, HT_FN_POSIX_MEMALIGN, 0, 0, false },
	};
	static const void *entry[] = {
		fake_malloc, fake_calloc, fake_free, fake_realloc,
		fake_realloc, fake_realloc, fake_posix_memalign,
		fake_posix_memalign,
	};
	for (unsigned i = 0; i < 8; i++) {
		const struct rec_copy *r = rec(i);
		CHECK(r->kind == want[i].kind && r->fn == want[i].fn,
		      "record %u: kind %u fn %u", i, r->kind, r->fn);
		if (want[i].fn != HT_FN_POSIX_MEMALIGN)
			CHECK(r->args[0] == want[i].a0, "record %u: arg %#llx",
			      i, (unsigned long long)r->args[0]);
		CHECK(r->result == want[i].result, "record %u: result %#llx",
		      i, (unsigned long long)r->result);
		CHECK(r->has_event == want[i].has_event, "record %u: event", i);
		CHECK(r->tid == tid, "record %u: tid %u", i, r->tid);
		CHECK(r->tsc == 0 && r->time_ns == 0,
		      "record %u: stamped without RING_F_TSC", i);
		if (r->kind == RING_REC_REALLOC_BEGIN ||
		    r->kind == RING_REC_FREE) {
			/* Entry records carry no stack. */
			CHECK(!r->copied && !r->stack_len && !r->npcs,
			      "record %u: no stack", i);
			continue;
		}
		CHECK(r->copied == RING_COPY_OFF && !r->npcs,
		      "record %u: copied as walking is off", i);
		CHECK(r->regs[RING_REG_RIP] == (uint64_t)entry[i],
		      "record %u: rip", i);
		uint64_t rsp = r->regs[RING_REG_RSP];
		uint64_t expect = env_self.stack_hi - rsp < 256
					  ? env_self.stack_hi - rsp
					  : 256;
		CHECK(r->stack_len == expect, "record %u: %u stack bytes", i,
		      r->stack_len);
	}
	CHECK(rec(1)->ev.size == 15, "calloc size");
	CHECK(rec(3)->ev.kind == HT_EV_REALLOC_BEGIN, "BEGIN event");
	CHECK(rec(4)->ev.kind == HT_EV_REALLOC && rec(4)->ev.size == 200 &&
		      rec(4)->ev.old_addr == FAKE_BASE + 1600,
	      "realloc event");
	CHECK(rec(6)->ev.align == 64 && rec(6)->ev.size == 1000 &&
		      rec(6)->ev.addr == FAKE_BASE + 1064,
	      "posix_memalign event");
	CHECK(env.h->head == env.h->tail, "all consumed");
	env_fini();
}

/* ---- Entry registers, stack bytes, callee-saved registers ---- */

#define NO_RET (~0ULL) /* free: rax is not a result */

static void
check_regs_call(unsigned idx, uint64_t a0, uint64_t a1, unsigned nrec,
		uint64_t want_ret)
{
	struct callctx c = {
		.fn = env.tramp[idx],
		.a = { a0, a1, 0 },
		.in = { 0x1111111111111111ULL, 0x2222222222222222ULL,
			0x3333333333333333ULL, 0x4444444444444444ULL,
			0x5555555555555555ULL, 0x6666666666666666ULL },
		.pat = { 0xa5a5a5a5a5a5a5a5ULL, 0x5a5a5a5a5a5a5a5aULL },
	};
	env_collect_reset();
	call_with_regs(&c);
	CHECK(!memcmp(c.in, c.out, sizeof(c.in)),
	      "fn %u: callee-saved registers changed", idx);
	CHECK(want_ret == NO_RET || c.ret == want_ret, "fn %u: returned %#llx",
	      idx, (unsigned long long)c.ret);
	CHECK(env_drain(0) == nrec, "fn %u: %llu records", idx,
	      (unsigned long long)coll.n);
	for (unsigned i = 0; i < coll.n; i++) {
		const struct rec_copy *r = rec(i);
		CHECK(r->args[0] == a0 && r->args[1] == a1,
		      "fn %u record %u: arguments", idx, i);
		if (r->kind == RING_REC_REALLOC_BEGIN ||
		    r->kind == RING_REC_FREE) {
			CHECK(!r->copied && r->stack_len == 0,
			      "fn %u: no stack wanted", idx);
			continue;
		}
		CHECK(r->regs[RING_REG_RSP] == c.entry_rsp, "fn %u: rsp", idx);
		CHECK(r->regs[RING_REG_RBX] == c.in[0] &&
			      r->regs[RING_REG_RBP] == c.in[1] &&
			      r->regs[RING_REG_R12] == c.in[2] &&
			      r->regs[RING_REG_R13] == c.in[3] &&
			      r->regs[RING_REG_R14] == c.in[4] &&
			      r->regs[RING_REG_R15] == c.in[5],
		      "fn %u record %u: entry registers", idx, i);
		CHECK(r->stack_len == 256, "fn %u: %u stack bytes", idx,
		      r->stack_len);
		CHECK(r->stack_head[0] == (uint64_t)call_with_regs_ret &&
			      r->stack_head[1] == c.pat[0] &&
			      r->stack_head[2] == c.pat[1],
		      "fn %u: stack starts %#llx %#llx %#llx", idx,
		      (unsigned long long)r->stack_head[0],
		      (unsigned long long)r->stack_head[1],
		      (unsigned long long)r->stack_head[2]);
	}
}

static void
test_regs(void)
{
	start(1 << 20, 256, 64);
	env_thread_init();
	check_regs_call(IX_MALLOC, 77, 0, 1, FAKE_BASE + 77 * 16);
	check_regs_call(IX_FREE, 0x1234, 0, 1, NO_RET);
	check_regs_call(IX_REALLOC, 0x1000, 24, 2, 0x1000 + 24);
	env_fini();
}

/* ---- Stack copy bounds ---- */

/* Malloc through the trampoline from a fixed frame; returns the record's
   stack length (~0u if no single record) and *RSP its entry rsp. */
static uint32_t
bounded_call(uint64_t *rsp)
{
	struct callctx c = { .fn = env.tramp[IX_MALLOC], .a = { 8 } };
	env_collect_reset();
	call_with_regs(&c);
	*rsp = c.entry_rsp;
	if (env_drain(0) != 1)
		return ~0u;
	return rec(0)->stack_len;
}

static void
test_stack_bounds(void)
{
	start(1 << 20, 4096, 64);
	env_thread_init();
	uint64_t tcb = env_tcb(), rsp, rsp2;
	uint32_t n = bounded_call(&rsp);
	/* The main thread may run close to the top of its stack. */
	uint32_t full = env_self.stack_hi - rsp < 4096
				? (uint32_t)(env_self.stack_hi - rsp)
				: 4096;
	CHECK(n == full, "full copy: %u of %u", n, full);

	tracer_ring_thread_set(env.r, tcb, env_self.tid, env_self.stack_lo,
			       rsp + 64);
	n = bounded_call(&rsp2);
	CHECK(rsp2 == rsp, "same frame, same rsp");
	CHECK(n == 64, "stack_hi 64 bytes above rsp: copied %u", n);

	tracer_ring_thread_set(env.r, tcb, env_self.tid, rsp + 8, rsp + 4096);
	n = bounded_call(&rsp2);
	CHECK(n == 0, "rsp below stack_lo: copied %u", n);
	CHECK(env.h->stats.no_stack == 1, "counted");

	tracer_ring_thread_set(env.r, tcb, env_self.tid, env_self.stack_lo,
			       env_self.stack_hi);
	n = bounded_call(&rsp2);
	CHECK(n == full, "restored bounds: copied %u", n);
	env_fini();
}

/* ---- Internal calls, pass-through ---- */

static void
test_internal(void)
{
	start(1 << 20, 64, 64);
	env_thread_init();

	/* new -> malloc: the malloc returns into new's object. */
	CHECK(tramp1(IX_NEW, 40) == FAKE_BASE + 640, "new");
	CHECK(orig_calls[IX_MALLOC] == 1, "malloc ran inside new");
	CHECK(env_drain(0) == 1 && rec(0)->fn == HT_FN_NEW &&
		      rec(0)->result == FAKE_BASE + 640,
	      "only new is recorded");

	/* realloc tail-jumping into malloc: returns into the blob. */
	env_collect_reset();
	CHECK(tramp2(IX_REALLOC_TAIL, 0x5000, 64) == FAKE_BASE + 1024,
	      "realloc through malloc");
	CHECK(env_drain(0) == 2 && rec(0)->kind == RING_REC_REALLOC_BEGIN &&
		      rec(1)->kind == RING_REC_REALLOC &&
		      rec(1)->result == FAKE_BASE + 1024,
	      "only realloc is recorded (%llu records)",
	      (unsigned long long)coll.n);

	/* The same malloc from new's object with no call in progress is
	   the program's own. */
	env_collect_reset();
	fake_new(8);
	CHECK(env_drain(0) == 1 && rec(0)->fn == HT_FN_MALLOC,
	      "malloc from new's object, new not running: recorded");
	struct tracer_ring_stats st;
	tracer_ring_stats(env.r, &st);
	CHECK(st.internal == 2, "2 internal calls, %llu",
	      (unsigned long long)st.internal);

	/* RING_F_PASS: nothing recorded, everything called. */
	env_collect_reset();
	env.h->flags |= RING_F_PASS;
	uint64_t before = env.h->head;
	CHECK(tramp1(IX_MALLOC, 1) == FAKE_BASE + 16, "pass malloc");
	tramp1(IX_FREE, 5);
	CHECK(env.h->head == before, "pass: nothing reserved");
	env.h->flags &= ~RING_F_PASS;
	env_fini();
}

/* A thread the "tracer" does not know: it answers RING_RESUME_PASS. */
static void *
unknown_thread(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++)
		if (tramp1(IX_MALLOC, 3) != FAKE_BASE + 48)
			return (void *)1;
	return NULL;
}

static void
test_unknown_thread(void)
{
	start(1 << 20, 64, 64);
	pthread_t th;
	void *ret = (void *)1;
	if (pthread_create(&th, NULL, unknown_thread, NULL) == 0)
		pthread_join(th, &ret);
	CHECK(ret == NULL, "calls went through");
	CHECK(env.miss_stops == 3, "one miss per call, %llu",
	      (unsigned long long)env.miss_stops);
	CHECK(env.h->head == 0, "nothing recorded");
	env_fini();
}

/* ---- A ring too small for the load: the full-ring stop ---- */

static void
test_tiny_ring(void)
{
	enum { N = 20000 };
	start(4096, 256, N + 16);
	env.drain_inline = true;
	env_thread_init();
	for (uint64_t i = 0; i < N; i++)
		tramp1(IX_MALLOC, i);
	env_drain(0);
	CHECK(coll.n == N && !coll.overflow, "%llu records of %d",
	      (unsigned long long)coll.n, N);
	uint64_t bad = 0;
	for (uint64_t i = 0; i < coll.n; i++)
		bad += rec(i)->args[0] != i || rec(i)->stack_len != 256;
	CHECK(!bad, "%llu records out of order or short",
	      (unsigned long long)bad);
	CHECK(env.h->stats.full_traps > N / 20 && env.full_stops > N / 20,
	      "full-ring stops: %llu", (unsigned long long)env.full_stops);
	env_fini();
}

/* ---- A handler allocating while a record is reserved, not committed ---- */

static long nested_drained = -1;
static uint64_t nested_calls;

/* Runs in the full-ring stop, which comes after the interrupted call
   reserved its record and before it commits. */
static void
allocate_in_trap(void)
{
	tramp1(IX_MALLOC, NESTED_MARK + nested_calls++);
	/* The handler's record is committed, the interrupted one is not:
	   the consumer must wait for the earlier one. */
	long n = env_drain(0);
	if (nested_drained < 0 || n > nested_drained)
		nested_drained = n;
}

static void
test_nested_mid_record(void)
{
	enum { N = 300 };
	start(4096, 256, 2 * N);
	env.drain_inline = true;
	env.on_full = allocate_in_trap;
	env_thread_init();
	for (uint64_t i = 0; i < N; i++)
		tramp1(IX_MALLOC, i);
	env_drain(0);
	CHECK(nested_calls > 10, "%llu handler calls",
	      (unsigned long long)nested_calls);
	CHECK(nested_drained == 0,
	      "drained %ld records past an uncommitted one", nested_drained);
	CHECK(coll.n == N + nested_calls, "%llu records, want %llu",
	      (unsigned long long)coll.n,
	      (unsigned long long)(N + nested_calls));
	uint64_t next = 0, next_nested = 0, bad = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		uint64_t a = rec(i)->args[0];
		if (a < NESTED_MARK) {
			bad += a != next++;
		} else {
			/* Reserved right after the interrupted record. */
			bad += a != NESTED_MARK + next_nested++;
			bad += i == 0 || rec(i - 1)->args[0] >= NESTED_MARK;
		}
	}
	CHECK(!bad, "%llu records out of place", (unsigned long long)bad);
	env_fini();
}

/* ---- Consumer thread ---- */

static volatile int consumer_stop;

static void *
consumer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&consumer_stop, __ATOMIC_ACQUIRE))
		if (env_drain(1000000) < 0)
			return (void *)1;
	while (tracer_ring_pending(env.r))
		if (env_drain(100000000) < 0)
			return (void *)1;
	return NULL;
}

static void
consumer_start(pthread_t *th)
{
	consumer_stop = 0;
	if (pthread_create(th, NULL, consumer, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
}

static void
consumer_join(pthread_t th)
{
	void *ret;
	__atomic_store_n(&consumer_stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, &ret);
	CHECK(ret == NULL, "consumer failed");
}

/* ---- 4 threads x 100k calls ---- */

enum { WORKERS = 4, PER_WORKER = 100000 };

static void *
worker(void *arg)
{
	uint64_t w = (uint64_t)(uintptr_t)arg;
	env_thread_init();
	for (uint64_t s = 0; s < PER_WORKER / 2; s++) {
		uint64_t p = tramp1(IX_POOL_MALLOC, w << 32 | s);
		tramp1(IX_POOL_FREE, p);
	}
	return NULL;
}

static void
check_threads_order(void)
{
	uint64_t next[WORKERS] = { 0 }, last[WORKERS] = { 0 };
	uint32_t tid[WORKERS] = { 0 };
	bool pending[WORKERS] = { false };
	static bool live[POOL_N];
	uint64_t bad_seq = 0, bad_addr = 0, bad_tid = 0, bad_pair = 0;
	memset(live, 0, sizeof(live));
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = rec(i);
		unsigned w;
		if (r->kind == RING_REC_ALLOC) {
			w = (unsigned)(r->args[0] >> 32);
			if (w >= WORKERS) {
				bad_seq++;
				continue;
			}
			bad_seq += (r->args[0] & 0xffffffff) != next[w] ||
				   pending[w];
			pending[w] = true;
			last[w] = r->result;
		} else {
			for (w = 0; w < WORKERS && tid[w] != r->tid; w++)
				;
			if (w == WORKERS) {
				bad_tid++;
				continue;
			}
			bad_pair += !pending[w] || r->args[0] != last[w];
			pending[w] = false;
			next[w]++;
		}
		if (!tid[w])
			tid[w] = r->tid;
		bad_tid += tid[w] != r->tid;
		/* Each address alternates: handed out, given back. */
		uint64_t a = r->kind == RING_REC_ALLOC ? r->result : r->args[0];
		uint64_t slot = (a - POOL_BASE) / POOL_STRIDE;
		if (a < POOL_BASE || slot >= POOL_N) {
			bad_addr++;
			continue;
		}
		bad_addr += live[slot] != (r->kind == RING_REC_FREE);
		live[slot] = r->kind == RING_REC_ALLOC;
	}
	CHECK(!bad_seq && !bad_pair, "program order broken: %llu, %llu",
	      (unsigned long long)bad_seq, (unsigned long long)bad_pair);
	CHECK(!bad_tid, "%llu records with a wrong tid",
	      (unsigned long long)bad_tid);
	CHECK(!bad_addr,
	      "%llu addresses handed out twice or freed while not live",
	      (unsigned long long)bad_addr);
	for (unsigned w = 0; w < WORKERS; w++)
		CHECK(next[w] == PER_WORKER / 2, "worker %u: %llu pairs", w,
		      (unsigned long long)next[w]);
}

static uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* With RING_F_TSC, every record is stamped, and the times the drain gives
   never go back and lie within the calls' span, though threads on
   different CPUs stamp a little out of ring order. */
static void
check_threads_times(uint64_t from_ns, uint64_t to_ns)
{
	uint64_t unstamped = 0, back = 0, outside = 0, tsc_behind = 0;
	uint64_t last_ns = 0, max_tsc = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = rec(i);
		unstamped += r->tsc == 0;
		tsc_behind += r->tsc < max_tsc;
		if (r->tsc > max_tsc)
			max_tsc = r->tsc;
		back += r->time_ns < last_ns;
		last_ns = r->time_ns;
		/* A microsecond of slack for the calibration's own error. */
		outside += r->time_ns + 1000 < from_ns ||
			   r->time_ns > to_ns + 1000;
	}
	CHECK(!unstamped, "%llu records without a stamp",
	      (unsigned long long)unstamped);
	CHECK(!back, "%llu times before the previous record's",
	      (unsigned long long)back);
	CHECK(!outside, "%llu times outside the calls' span",
	      (unsigned long long)outside);
	printf("threads: %llu stamps behind an earlier record's (another "
	       "CPU), clamped\n", (unsigned long long)tsc_behind);
}

static void
test_threads(void)
{
	start(256 << 10, 64, WORKERS * PER_WORKER + 16);
	pool_init();
	bool stamped = tsc_usable();
	if (stamped)
		tracer_ring_stamp(env.r);
	else
		printf("threads: no usable TSC here, records unstamped\n");
	uint64_t from_ns = monotonic_ns();
	pthread_t cons, th[WORKERS];
	consumer_start(&cons);
	for (uint64_t w = 0; w < WORKERS; w++) {
		if (pthread_create(&th[w], NULL, worker,
				   (void *)(uintptr_t)w)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	}
	for (unsigned w = 0; w < WORKERS; w++)
		pthread_join(th[w], NULL);
	uint64_t to_ns = monotonic_ns();
	consumer_join(cons);
	CHECK(coll.n == WORKERS * PER_WORKER && !coll.overflow,
	      "%llu records of %d", (unsigned long long)coll.n,
	      WORKERS * PER_WORKER);
	CHECK(orig_calls[IX_POOL_MALLOC] + orig_calls[IX_POOL_FREE] ==
		      WORKERS * PER_WORKER,
	      "every call reached its original");
	check_threads_order();
	if (stamped)
		check_threads_times(from_ns, to_ns);
	struct tracer_ring_stats st;
	tracer_ring_stats(env.r, &st);
	printf("threads: %llu records, %llu full-ring stops, %llu consumer "
	       "waits, most pending %llu bytes\n",
	       (unsigned long long)st.records,
	       (unsigned long long)env.h->stats.full_traps,
	       (unsigned long long)st.waits,
	       (unsigned long long)st.max_fill);
	env_fini();
}

/* ---- Signal handlers allocating at random points of the stub ---- */

enum { STORM_CALLS = 100000 };
static uint64_t storm_handler_calls, storm_in_blob;
static volatile int storm_ready, storm_done;

static void
on_usr1(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	uint64_t pc = (uint64_t)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
	if (pc >= (uint64_t)env.code && pc < (uint64_t)env.code + STUB_BLOB_LEN)
		storm_in_blob++;
	tramp1(IX_MALLOC, NESTED_MARK + storm_handler_calls++);
}

static void *
storm_worker(void *arg)
{
	(void)arg;
	env_thread_init();
	/* Signals only once the "tracer" knows this thread: before, its
	   calls would be passed through unrecorded. */
	__atomic_store_n(&storm_ready, 1, __ATOMIC_RELEASE);
	for (uint64_t i = 0; i < STORM_CALLS; i++)
		tramp1(IX_MALLOC, i);
	__atomic_store_n(&storm_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void
test_signal_storm(void)
{
	start(1 << 20, 4096, STORM_CALLS * 2);
	struct sigaction sa = { .sa_sigaction = on_usr1,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	storm_ready = storm_done = 0;
	pthread_t cons, th;
	consumer_start(&cons);
	if (pthread_create(&th, NULL, storm_worker, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
	uint64_t sent = 0;
	while (!__atomic_load_n(&storm_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&storm_done, __ATOMIC_ACQUIRE)) {
		pthread_kill(th, SIGUSR1);
		sent++;
		struct timespec ts = { .tv_nsec = 2000 };
		nanosleep(&ts, NULL);
	}
	pthread_join(th, NULL);
	consumer_join(cons);
	signal(SIGUSR1, SIG_DFL);

	uint64_t calls = storm_handler_calls;
	CHECK(calls > 0, "no signal was handled (%llu sent)",
	      (unsigned long long)sent);
	CHECK(coll.n == STORM_CALLS + calls, "%llu records, want %llu",
	      (unsigned long long)coll.n,
	      (unsigned long long)(STORM_CALLS + calls));
	uint64_t next = 0, next_nested = 0, bad = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		uint64_t a = rec(i)->args[0];
		if (a < NESTED_MARK)
			bad += a != next++;
		else
			bad += a != NESTED_MARK + next_nested++;
		bad += rec(i)->stack_len == 0;
	}
	CHECK(!bad, "%llu records out of order or without stack",
	      (unsigned long long)bad);
	CHECK(storm_in_blob > 0, "no signal landed inside the stub");
	printf("signals: %llu handler calls, %llu of them interrupting the "
	       "stub\n",
	       (unsigned long long)calls, (unsigned long long)storm_in_blob);
	env_fini();
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_kinds();
	test_regs();
	test_stack_bounds();
	test_internal();
	test_unknown_thread();
	test_tiny_ring();
	test_nested_mid_record();
	test_threads();
	test_signal_storm();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
