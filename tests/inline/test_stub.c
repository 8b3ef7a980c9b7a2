/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stub blob run for real, in this process, without ptrace: calls go
   through trampolines to test "allocators" compiled here (never the
   process's own malloc), stubenv.c plays the tracer (thread entries,
   draining, answers to the stubs' questions), and the drained records
   are checked: one per call with the right kind, arguments, result,
   entry registers and stack; one total order that keeps each thread's
   program order and puts every free before the allocation that reuses
   its address; nothing lost with a full ring (producers wait, the
   consumer wakes them) or a signal handler allocating mid-record;
   callee-saved registers preserved. Then what never stops the target
   (ring.h, "The stub never stops for the tracer"): a thread with no
   entry asks with a THREAD record, and the answer brings its entry or
   its calls pass unrecorded; RING_F_PASS passes every call,
   a call in flight then touches nothing past the ring's first page, and
   producers waiting for room give up; the NOTIFY hook's question and its
   waits (answered, unanswered, the consumer gone); the EXIT hook's
   exit-time frees. The consumer's real death is test_survive.c's. */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
	IX_BLOCK,
	IX_NOTIFY,
	IX_EXIT,
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

/* malloc that blocks until a byte comes down BLOCK_PIPE: a thread held
   inside an original. */
static int block_pipe[2];
static volatile int block_inside;

static uint64_t
blocking_malloc(uint64_t size)
{
	char c;
	__atomic_store_n(&block_inside, 1, __ATOMIC_RELEASE);
	while (read(block_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	count(IX_BLOCK);
	return FAKE_BASE + size;
}

/* ld.so's _dl_debug_state: the NOTIFY hook's original. It notes the
   answer it runs after. */
static uint32_t notify_saw_ack;

static void
fake_debug_state(void)
{
	notify_saw_ack = __atomic_load_n(&env.h->notify_ack, __ATOMIC_ACQUIRE);
	count(IX_NOTIFY);
}

/* _exit and the exit-time frees the EXIT hook runs first, which log
   their order and allocate like any other code. */
static char exit_log[16];
static unsigned exit_log_n;
static uint64_t exit_status;

static void
exit_reset(void)
{
	memset(exit_log, 0, sizeof(exit_log));
	exit_log_n = 0;
	exit_status = 0;
}

static void
exit_note(char c)
{
	if (exit_log_n < sizeof(exit_log) - 1)
		exit_log[exit_log_n++] = c;
}

static void
fake_freeres_cxx(void)
{
	exit_note('c');
	tramp1(IX_FREE, FAKE_BASE + 1);
}

static void
fake_freeres_libc(void)
{
	exit_note('l');
	tramp1(IX_MALLOC, 2);
}

static void
fake_exit(uint64_t status)
{
	exit_note('x');
	exit_status = status;
	count(IX_EXIT);
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
	env_fn(IX_BLOCK, HT_FN_MALLOC, blocking_malloc, 0, 0);
	env_hook(IX_NOTIFY, RING_CLASS_NOTIFY, fake_debug_state);
	env_hook(IX_EXIT, RING_CLASS_EXIT, fake_exit);
	new_calls_malloc = (uint64_t (*)(uint64_t))env.tramp[IX_MALLOC];
	malloc_tramp_ptr = env.tramp[IX_MALLOC];
	memset(orig_calls, 0, sizeof(orig_calls));
	notify_saw_ack = 0;
	exit_reset();
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
	/* The entry was there before the first call, as the tracer fills
	   it: nothing asked, nothing passed. */
	CHECK(env.h->stats.miss_pass == 0 && env.h->notify_seq == 0 &&
		      env.h->doorbell == 0,
	      "no question: %llu passed, %u asked",
	      (unsigned long long)env.h->stats.miss_pass, env.h->notify_seq);
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
	uint64_t rsp, rsp2;
	uint32_t n = bounded_call(&rsp);
	/* The main thread may run close to the top of its stack. */
	uint32_t full = env_self.stack_hi - rsp < 4096
				? (uint32_t)(env_self.stack_hi - rsp)
				: 4096;
	CHECK(n == full, "full copy: %u of %u", n, full);

	env_thread_set(env_self.stack_lo, rsp + 64);
	n = bounded_call(&rsp2);
	CHECK(rsp2 == rsp, "same frame, same rsp");
	CHECK(n == 64, "stack_hi 64 bytes above rsp: copied %u", n);

	env_thread_set(rsp + 8, rsp + 4096);
	n = bounded_call(&rsp2);
	CHECK(n == 0, "rsp below stack_lo: copied %u", n);
	CHECK(env.h->stats.no_stack == 1, "counted");

	env_thread_set(env_self.stack_lo, env_self.stack_hi);
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

/* ---- Threads without an entry ---- */

static uint32_t other_tid;
static uint64_t other_tcb, other_lo, other_hi;

/* Three mallocs from a thread the tracer has no entry for; known to it
   (as from /proc) when ARG. */
static void *
three_calls(void *arg)
{
	other_tid = (uint32_t)gettid();
	other_tcb = env_tcb();
	if (arg) {
		env_thread_describe();
		other_lo = env_self.stack_lo;
		other_hi = env_self.stack_hi;
	}
	for (int i = 0; i < 3; i++)
		if (tramp1(IX_MALLOC, 3) != FAKE_BASE + 48)
			return (void *)1;
	return NULL;
}

static void
in_thread(bool known)
{
	pthread_t th;
	void *ret = (void *)1;
	if (pthread_create(&th, NULL, three_calls, known ? &th : NULL) == 0)
		pthread_join(th, &ret);
	CHECK(ret == NULL, "calls went through");
}

/* A thread whose entry the tracer could not fill before it ran (its
   thread pointer was not set up: a static program's main thread at
   exec): its first call asks with a THREAD record, the answer brings
   the entry, and every call is recorded. */
static void
test_late_thread(void)
{
	start(1 << 20, 64, 64);
	env_consumer_start(0);
	in_thread(true);
	env_sync();
	env_consumer_stop(true);
	CHECK(coll.n == 4 && rec(0)->kind == RING_REC_THREAD,
	      "a THREAD question, then 3 records (%llu)",
	      (unsigned long long)coll.n);
	const struct rec_copy *q = rec(0);
	CHECK(q->tid == other_tid && q->args[0] == 0 &&
		      q->args[1] == other_tcb && q->args[2] >= other_lo &&
		      q->args[2] < other_hi && q->sp == q->args[2],
	      "THREAD: tid %u, number %llu, thread pointer, rsp", q->tid,
	      (unsigned long long)q->args[0]);
	for (unsigned i = 1; i < 4; i++)
		CHECK(rec(i)->kind == RING_REC_ALLOC &&
			      rec(i)->tid == other_tid &&
			      rec(i)->result == FAKE_BASE + 48,
		      "record %u: the thread's malloc", i);
	CHECK(env.answered[RING_REC_THREAD] == 1 &&
		      env.h->notify_seq == 1 && env.h->doorbell == 1,
	      "asked once, rang once");
	CHECK(env.h->stats.miss_pass == 0 &&
		      env.h->stats.notify_timeouts == 0,
	      "nothing passed, nothing timed out");
	env_fini();
}

/* A thread the tracer does not know: each call asks, the answer brings
   no entry, and the call is made unrecorded (miss_pass). Never a stop. */
static void
test_unknown_thread(void)
{
	start(1 << 20, 64, 64);
	env_consumer_start(0);
	in_thread(false);
	env_sync();
	env_consumer_stop(true);
	CHECK(orig_calls[IX_MALLOC] == 3, "3 calls made");
	CHECK(env.h->stats.miss_pass == 3, "3 calls passed, %llu",
	      (unsigned long long)env.h->stats.miss_pass);
	uint64_t asked = 0, other = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = rec(i);
		asked += r->kind == RING_REC_THREAD && r->tid == other_tid &&
			 r->args[1] == other_tcb;
		other += r->kind != RING_REC_THREAD;
	}
	CHECK(asked == 3 && !other, "%llu questions, %llu other records",
	      (unsigned long long)asked, (unsigned long long)other);
	CHECK(env.h->stats.notify_timeouts == 0, "answered, not timed out");
	env_fini();
}

/* ---- Passing through: a detach, a consumer gone ---- */

static uint64_t blocked_tcb;

static void *
blocked_caller(void *arg)
{
	(void)arg;
	env_thread_init();
	blocked_tcb = env_self.tcb;
	return (void *)(uintptr_t)tramp1(IX_BLOCK, 5);
}

/* Everything of the ring past its first page: PROT. */
static void
ring_protect(int prot)
{
	struct tracer_ring_layout l;
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	tracer_ring_layout(env.r, &l);
	if (mprotect((uint8_t *)env.h + page, l.map_len - page, prot) < 0) {
		perror("mprotect");
		exit(EXIT_HARNESS);
	}
}

/* A thread inside an original when the stubs are told to pass (a
   detach's RING_F_PASS) or the consumer goes (DEAD) returns through the
   stub touching nothing of the ring but its first page: a detach unmaps
   the rest. Here the rest is PROT_NONE meanwhile, so any other access
   faults. */
static void
pass_in_flight(bool dead)
{
	start(1 << 20, 64, 64);
	if (pipe(block_pipe) < 0) {
		perror("pipe");
		exit(EXIT_HARNESS);
	}
	block_inside = 0;
	pthread_t th;
	if (pthread_create(&th, NULL, blocked_caller, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
	while (!__atomic_load_n(&block_inside, __ATOMIC_ACQUIRE))
		usleep(100);
	uint64_t head = env.h->head;
	if (dead)
		__atomic_store_n(&env.h->consumer, RING_CONSUMER_DIED,
				 __ATOMIC_RELEASE);
	else
		__atomic_fetch_or(&env.h->flags, RING_F_PASS, __ATOMIC_RELEASE);
	ring_protect(PROT_NONE);
	ssize_t w = write(block_pipe[1], "x", 1);
	void *ret = NULL;
	pthread_join(th, &ret);
	ring_protect(PROT_READ | PROT_WRITE);
	CHECK(w == 1 && (uint64_t)(uintptr_t)ret == FAKE_BASE + 5,
	      "%s: the call returned %#llx", dead ? "dead" : "pass",
	      (unsigned long long)(uintptr_t)ret);
	CHECK(env.h->head == head, "%s: nothing recorded at the return",
	      dead ? "dead" : "pass");
	const struct ring_thread *t = ring_thread_lookup(env.h, blocked_tcb);
	CHECK(t && t->outer_rsp,
	      "%s: its entry untouched (still marks the call in progress)",
	      dead ? "dead" : "pass");
	close(block_pipe[0]);
	close(block_pipe[1]);
	env_fini();
}

static void
test_pass_in_flight(void)
{
	pass_in_flight(false);
	pass_in_flight(true);
}

/* Producers that fill a ring nobody drains, then wait for room until
   a detach sets RING_F_PASS: they give their records up and return. */
enum { GIVE_UP_WORKERS = 3, GIVE_UP_AFTER = 100 };
static volatile int give_up_stop;
static uint64_t give_up_calls[GIVE_UP_WORKERS];
static uint64_t give_up_ret_ns[GIVE_UP_WORKERS];

static void *
full_producer(void *arg)
{
	uint64_t w = (uint64_t)(uintptr_t)arg, i = 0;
	env_thread_init();
	while (!__atomic_load_n(&give_up_stop, __ATOMIC_ACQUIRE))
		tramp1(IX_MALLOC, w << 32 | i++);
	give_up_ret_ns[w] = env_now_ns();
	for (int k = 0; k < GIVE_UP_AFTER; k++)
		tramp1(IX_MALLOC, w << 32 | i++);
	give_up_calls[w] = i;
	return NULL;
}

/* Each record of the collector in its thread's order (args[0]: thread
   << 32 | call). Returns how many are not. */
static uint64_t
out_of_order(unsigned threads)
{
	uint64_t next[8] = { 0 }, bad = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		uint64_t w = rec(i)->args[0] >> 32;
		if (w >= threads || w >= 8) {
			bad++;
			continue;
		}
		bad += (rec(i)->args[0] & 0xffffffff) != next[w]++;
	}
	return bad;
}

static void
test_full_detach(void)
{
	start(4096, 256, 64);
	pthread_t th[GIVE_UP_WORKERS];
	give_up_stop = 0;
	for (uint64_t w = 0; w < GIVE_UP_WORKERS; w++)
		if (pthread_create(&th[w], NULL, full_producer,
				   (void *)(uintptr_t)w)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	/* No room ever comes: each producer waits once, for good. */
	while (__atomic_load_n(&env.h->stats.full_waits, __ATOMIC_ACQUIRE) <
	       GIVE_UP_WORKERS)
		usleep(1000);
	uint64_t head = env.h->head;
	usleep(20000);
	CHECK(env.h->head == head && env.h->stats.full_waits == GIVE_UP_WORKERS,
	      "the producers wait");
	__atomic_store_n(&give_up_stop, 1, __ATOMIC_RELEASE);
	uint64_t t0 = env_now_ns();
	__atomic_fetch_or(&env.h->flags, RING_F_PASS, __ATOMIC_RELEASE);
	uint64_t calls = 0;
	for (unsigned w = 0; w < GIVE_UP_WORKERS; w++) {
		pthread_join(th[w], NULL);
		calls += give_up_calls[w];
		CHECK(give_up_ret_ns[w] - t0 < 1000000000u,
		      "producer %u returned %.1f ms after the detach", w,
		      (give_up_ret_ns[w] - t0) / 1e6);
	}
	CHECK(env.h->head == head, "nothing reserved once passing");
	CHECK(orig_calls[IX_MALLOC] == calls, "%llu originals for %llu calls",
	      (unsigned long long)orig_calls[IX_MALLOC],
	      (unsigned long long)calls);
	CHECK(env.h->sleepers == 0, "no sleeper left");
	/* What was committed is whole and in order, up to the first
	   record given up (never committed: nothing reads on). */
	env_drain(0);
	CHECK(coll.n > 0 && !out_of_order(GIVE_UP_WORKERS) &&
		      env.h->tail < head,
	      "%llu records before those given up",
	      (unsigned long long)coll.n);
	env_fini();
}

/* ---- A ring too small for the load: producers wait for room ---- */

enum { TINY_WORKERS = 3, TINY_CALLS = 5000 };

static void *
tiny_producer(void *arg)
{
	uint64_t w = (uint64_t)(uintptr_t)arg;
	env_thread_init();
	for (uint64_t i = 0; i < TINY_CALLS; i++)
		tramp1(IX_MALLOC, w << 32 | i);
	return NULL;
}

/* A consumer drains a 4 KiB ring (ten records) slowly while three
   threads produce: nothing is lost, each thread's records keep its
   order, producers wait for room and the consumer's tail wakes them. */
static void
test_tiny_ring(void)
{
	start(4096, 256, TINY_WORKERS * TINY_CALLS + 16);
	env_consumer_start(100000);
	pthread_t th[TINY_WORKERS];
	for (uint64_t w = 0; w < TINY_WORKERS; w++)
		if (pthread_create(&th[w], NULL, tiny_producer,
				   (void *)(uintptr_t)w)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	for (unsigned w = 0; w < TINY_WORKERS; w++)
		pthread_join(th[w], NULL);
	env_consumer_stop(true);
	CHECK(coll.n == TINY_WORKERS * TINY_CALLS && !coll.overflow,
	      "%llu records of %d", (unsigned long long)coll.n,
	      TINY_WORKERS * TINY_CALLS);
	uint64_t short_stack = 0;
	for (uint64_t i = 0; i < coll.n; i++)
		short_stack += rec(i)->stack_len != 256;
	CHECK(!out_of_order(TINY_WORKERS) && !short_stack,
	      "records out of order or short");
	CHECK(env.h->stats.full_waits > 0, "no producer waited");
	/* Bumped by publish_tail only when it saw a sleeper to wake. */
	CHECK(env.h->drained > 0, "the consumer never woke a producer");
	CHECK(env.h->sleepers == 0, "%u sleepers left", env.h->sleepers);
	printf("tiny ring: %llu waits for room, %u wake-ups\n",
	       (unsigned long long)env.h->stats.full_waits, env.h->drained);
	env_fini();
}

/* ---- A handler allocating while its thread waits for room ---- */

/* args[1] of a handler's record: the call its thread was making, and
   whether it was waiting for room for that call's record (reserved, not
   committed). */
#define IN_WAIT (1ULL << 63)

static volatile uint64_t wait_cur;
static uint64_t wait_nested, wait_in_wait;
static volatile int wait_ready, wait_done;

static void
on_usr1_wait(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)si;
	const greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
	uint64_t pc = (uint64_t)g[REG_RIP];
	/* The stub's only use of DRAINED is its wait for room. */
	bool in_wait = pc >= (uint64_t)env.code &&
		       pc < (uint64_t)env.code + STUB_BLOB_LEN &&
		       (uint64_t)g[REG_RDI] == (uint64_t)&env.h->drained;
	wait_in_wait += in_wait;
	tramp2(IX_MALLOC, NESTED_MARK + wait_nested++,
	       wait_cur | (in_wait ? IN_WAIT : 0));
}

static void *
wait_worker(void *arg)
{
	(void)arg;
	env_thread_init();
	__atomic_store_n(&wait_ready, 1, __ATOMIC_RELEASE);
	for (uint64_t i = 0; i < 3000; i++) {
		wait_cur = i;
		tramp1(IX_MALLOC, i);
	}
	__atomic_store_n(&wait_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The record a handler's record follows, skipping other handler
   records; ~0 for none. */
static uint64_t
interrupted_of(uint64_t i)
{
	while (i-- > 0)
		if (rec(i)->args[0] < NESTED_MARK)
			return rec(i)->args[0];
	return ~0ULL;
}

/* Signals land while the thread waits for room with its record reserved
   and uncommitted; their handlers' records come right after it, and the
   consumer, which waits at the uncommitted one, loses nothing. */
static void
test_wait_interrupted(void)
{
	start(4096, 256, 20000);
	wait_nested = wait_in_wait = 0;
	wait_ready = wait_done = 0;
	struct sigaction sa = { .sa_sigaction = on_usr1_wait,
				.sa_flags = SA_SIGINFO | SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	env_consumer_start(200000);
	pthread_t th;
	if (pthread_create(&th, NULL, wait_worker, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
	while (!__atomic_load_n(&wait_ready, __ATOMIC_ACQUIRE))
		sched_yield();
	while (!__atomic_load_n(&wait_done, __ATOMIC_ACQUIRE)) {
		pthread_kill(th, SIGUSR1);
		usleep(300);
	}
	pthread_join(th, NULL);
	env_consumer_stop(true);
	signal(SIGUSR1, SIG_DFL);

	CHECK(wait_in_wait > 10, "%llu signals in the wait for room",
	      (unsigned long long)wait_in_wait);
	CHECK(coll.n == 3000 + wait_nested, "%llu records, want %llu",
	      (unsigned long long)coll.n,
	      (unsigned long long)(3000 + wait_nested));
	uint64_t next = 0, next_nested = 0, bad = 0;
	for (uint64_t i = 0; i < coll.n; i++) {
		const struct rec_copy *r = rec(i);
		if (r->args[0] < NESTED_MARK) {
			bad += r->args[0] != next++;
			continue;
		}
		bad += r->args[0] != NESTED_MARK + next_nested++;
		/* Reserved while the interrupted record waited: after it. */
		if (r->args[1] & IN_WAIT)
			bad += interrupted_of(i) != (r->args[1] & ~IN_WAIT);
	}
	CHECK(!bad, "%llu records out of place", (unsigned long long)bad);
	printf("wait: %llu handler calls, %llu of them in a wait for room\n",
	       (unsigned long long)wait_nested,
	       (unsigned long long)wait_in_wait);
	env_fini();
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
	uint64_t from_ns = env_now_ns();
	pthread_t th[WORKERS];
	env_consumer_start(0);
	for (uint64_t w = 0; w < WORKERS; w++) {
		if (pthread_create(&th[w], NULL, worker,
				   (void *)(uintptr_t)w)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	}
	for (unsigned w = 0; w < WORKERS; w++)
		pthread_join(th[w], NULL);
	uint64_t to_ns = env_now_ns();
	env_consumer_stop(true);
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
	printf("threads: %llu records, %llu waits for room, %llu consumer "
	       "waits, most pending %llu bytes\n",
	       (unsigned long long)st.records,
	       (unsigned long long)env.h->stats.full_waits,
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
	pthread_t th;
	env_consumer_start(0);
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
	env_consumer_stop(true);
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

/* ---- The NOTIFY hook (ld.so's _dl_debug_state) ---- */

/* Call the NOTIFY hook from a fixed frame; returns its entry rsp. */
static uint64_t
notify_call(void)
{
	struct callctx c = { .fn = env.tramp[IX_NOTIFY] };
	call_with_regs(&c);
	return c.entry_rsp;
}

/* The hook asks with a NOTIFY record (its number, the thread pointer,
   the entry rsp; the caller's tid) and runs the original only once
   answered, however late. The answer gives a thread the tracer knows its
   entry (after an exec the main thread has none until its first
   NOTIFY), so that its calls are recorded without a THREAD question. */
static void
test_notify(void)
{
	start(1 << 20, 64, 64);
	env_thread_describe();
	env.answer_delay_ns = 30000000;
	env_consumer_start(0);
	uint64_t t0 = env_now_ns();
	uint64_t rsp = notify_call();
	uint64_t took = env_now_ns() - t0;
	tramp1(IX_MALLOC, 9);
	env_sync();
	env_consumer_stop(true);
	CHECK(coll.n == 2 && rec(0)->kind == RING_REC_NOTIFY &&
		      rec(1)->kind == RING_REC_ALLOC,
	      "a NOTIFY, then the malloc (%llu records)",
	      (unsigned long long)coll.n);
	const struct rec_copy *q = rec(0);
	uint32_t tid = (uint32_t)gettid();
	/* Its number is its ring position: the ring's first record. */
	CHECK(q->args[0] == 0 && q->args[1] == env_tcb() && q->args[2] == rsp &&
		      q->sp == rsp && q->tid == tid,
	      "NOTIFY: number %llu, thread pointer %#llx, rsp %#llx (want "
	      "%#llx), tid %u",
	      (unsigned long long)q->args[0], (unsigned long long)q->args[1],
	      (unsigned long long)q->args[2], (unsigned long long)rsp,
	      q->tid);
	CHECK(rec(1)->tid == tid, "the malloc recorded, with its tid");
	CHECK(orig_calls[IX_NOTIFY] == 1 && notify_saw_ack == 1,
	      "the original ran once, after the answer (saw %u)",
	      notify_saw_ack);
	CHECK(took >= 30000000, "returned after %.1f ms, before the answer",
	      took / 1e6);
	CHECK(env.h->doorbell == 1 && env.h->notify_ack == 1 &&
		      env.h->answered == 1 &&
		      env.answered[RING_REC_THREAD] == 0,
	      "one question, rung once, answered");
	CHECK(env.h->stats.notify_timeouts == 0 && env.h->stats.miss_pass == 0,
	      "nothing timed out or passed");
	env_fini();
}

static uint64_t notify_ret_ns;

static void *
notify_caller(void *arg)
{
	(void)arg;
	notify_call();
	notify_ret_ns = env_now_ns();
	return NULL;
}

/* Unanswered when the consumer goes (declared gone here, as
   tracer_ring_free declares it, but without its wake-up; test_survive.c
   kills a consumer for real): the hook returns within a wait's slice,
   without counting a time-out, and passes straight through from then on. */
static void
test_notify_consumer_gone(void)
{
	start(1 << 20, 64, 64);
	pthread_t th;
	if (pthread_create(&th, NULL, notify_caller, NULL)) {
		fprintf(stderr, "pthread_create failed\n");
		exit(EXIT_HARNESS);
	}
	/* Rung once the question is in the ring: it waits from then on. */
	while (!__atomic_load_n(&env.h->doorbell, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(20000);
	CHECK(orig_calls[IX_NOTIFY] == 0, "the original ran unanswered");
	uint64_t t0 = env_now_ns();
	__atomic_store_n(&env.h->consumer, RING_CONSUMER_DIED,
			 __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	CHECK(notify_ret_ns - t0 < 500000000u,
	      "returned %.1f ms after the consumer went",
	      (notify_ret_ns - t0) / 1e6);
	CHECK(orig_calls[IX_NOTIFY] == 1 &&
		      env.h->stats.notify_timeouts == 0,
	      "the original ran; no time-out counted");
	uint64_t head = env.h->head;
	notify_call();
	CHECK(orig_calls[IX_NOTIFY] == 2 && env.h->head == head &&
		      env.h->notify_seq == 1,
	      "then straight through");
	env_fini();
}

/* Unanswered while the consumer lives (a tracer stopped, or busy): the
   hook gives up after RING_NOTIFY_WAIT_NS and runs the original. The
   one test that waits that long. */
static void
test_notify_timeout(void)
{
	start(1 << 20, 64, 64);
	uint64_t t0 = env_now_ns();
	notify_call();
	uint64_t took = env_now_ns() - t0;
	CHECK(orig_calls[IX_NOTIFY] == 1, "the original ran");
	CHECK(took >= RING_NOTIFY_WAIT_NS * 3 / 4 &&
		      took < RING_NOTIFY_WAIT_NS * 5,
	      "gave up after %.0f ms", took / 1e6);
	CHECK(env.h->stats.notify_timeouts == 1, "%llu time-outs counted",
	      (unsigned long long)env.h->stats.notify_timeouts);
	env_fini();
}

/* ---- The EXIT hook (_exit, under --massif-compat=yes) ---- */

/* The hook runs the exit-time frees, C++'s then libc's, recorded like
   any other calls, then the original; the frees once in the process's
   life, however many threads exit. Passing, it runs the original
   alone. */
static void
test_exit(void)
{
	start(1 << 20, 64, 64);
	env_thread_init();
	tracer_ring_freeres_set(env.r, (uint64_t)fake_freeres_cxx,
				(uint64_t)fake_freeres_libc);
	tramp1(IX_EXIT, 3);
	tramp1(IX_EXIT, 4);
	CHECK(!strcmp(exit_log, "clxx"), "ran %s", exit_log);
	CHECK(exit_status == 4 && orig_calls[IX_EXIT] == 2,
	      "the original, each time");
	CHECK(!env.h->freeres[0] && !env.h->freeres[1], "each free taken");
	CHECK(env_drain(0) == 2 && rec(0)->kind == RING_REC_FREE &&
		      rec(0)->args[0] == FAKE_BASE + 1 &&
		      rec(1)->kind == RING_REC_ALLOC && rec(1)->args[0] == 2,
	      "the frees' calls recorded (%llu records)",
	      (unsigned long long)coll.n);

	exit_reset();
	tracer_ring_freeres_set(env.r, 0, (uint64_t)fake_freeres_libc);
	tramp1(IX_EXIT, 5);
	CHECK(!strcmp(exit_log, "lx"), "libc's alone: ran %s", exit_log);

	exit_reset();
	tracer_ring_freeres_set(env.r, (uint64_t)fake_freeres_cxx,
				(uint64_t)fake_freeres_libc);
	env.h->flags |= RING_F_PASS;
	tramp1(IX_EXIT, 6);
	env.h->flags &= ~RING_F_PASS;
	CHECK(!strcmp(exit_log, "x") && exit_status == 6 &&
		      env.h->freeres[0] && env.h->freeres[1],
	      "passing: ran %s", exit_log);
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
	test_late_thread();
	test_unknown_thread();
	test_pass_in_flight();
	test_full_detach();
	test_tiny_ring();
	test_wait_interrupted();
	test_threads();
	test_signal_storm();
	test_notify();
	test_notify_consumer_gone();
	test_notify_timeout();
	test_exit();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
