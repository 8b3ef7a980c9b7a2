/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Stacks that change in every frame, for the exactness test of the inline
   stub's walk memo (walk_memo.sh): each allocation's stack shares a suffix
   of varying length with the one before it in its thread, and what lies
   above the shared part changes in every way a walk can be fooled by a
   frame that looks as it did: same-sized frames of different functions at
   the same addresses (rec_a, rec_b, rec_c are one body), alloca frames
   (CFA by rbp) shifting every frame below them, signal handlers on the
   stack and on a sigaltstack, longjmp out of deep recursion then new
   frames where the abandoned ones were, makecontext coroutines on stacks
   of their own (one restarted on its stack with another function).

   Parts, each run by main alone (tid 0), then by three threads at once
   (tid 1..3; with the argument "serial", one after another, so that the
   profile is deterministic). Every block's size is
   PART * 1000 + TID * 100 + (0..99): its part and thread can be read off.
     1 rec       120 descents, depth 1 + i % 40, a twist level below which
                 the functions differ from the previous descent's
     2 alloca    80 descents of depth 1 + (7 * i) % 40 through rec_d too,
                 whose alloca size changes with the level and the descent
     3 raise     40 descents; at the bottom an allocation, raise(SIGUSR1)
                 or pthread_kill(self), an allocation after the handler;
                 the handler descends 1..7 levels and allocates
     4 altstack  the same with SIGUSR2, whose handler runs on the thread's
                 sigaltstack
     5 timer     (main only) a setitimer SIGALRM every millisecond while
                 main spins on arithmetic at depth 12; the first 20 ticks'
                 handlers descend and allocate through timer_alloc
     6 longjmp   30 times: setjmp at depth s, longjmp from depth s + 5..24,
                 an allocation at depth s, then a new descent of another
                 shape over the abandoned frames
     7 coro      two coroutines (swapcontext), each 12 rounds of a descent
                 that allocates, switches back to main from its bottom and
                 allocates again when resumed; then each stack reused by a
                 new coroutine of another function (6 rounds)
     8 back      main's allocation right after each switch back
   Signals arrive at fixed points holding no malloc lock: raise() and
   pthread_kill(self) are called between allocations, and the timer only
   while main spins without allocating (a handler that mallocs while its
   thread is inside malloc could deadlock or corrupt the heap; glibc's
   malloc is not async-signal-safe). SIGALRM is blocked in the threads.
   The timer handler's frames above the trampoline hold wherever the spin
   was interrupted: its allocations (timer_alloc, the only caller of
   malloc in part 5) are left out of profiles compared byte for byte.

   The rec part alone gives each thread 120 descents whose bottom makes
   three walks (malloc, calloc, realloc in leaf_alloc); the second and
   third share with the walk just before them every frame from the
   descent's bottom up: bottom_alloc, depth + 1 rec_* and depth descend
   frames, run_descent, part_rec, run_parts, main (or thread_main) and
   what calls it: at least 2 * depth + 6 return addresses. Over the 120
   depths (1..40 three times) that is 240 walks and at least
   2 * 3 * (2 * 820 + 6 * 40) = 11,280 frames per thread, 960 walks and
   45,120 frames for the four. Output: per thread its number of blocks and
   a checksum of their bytes; exit 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <alloca.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>

/* Frames kept as written: no inlining, cloning or interprocedural
   shortcuts (clang has no noipa; noinline is its nearest). */
#if defined(__clang__)
#define KEEP __attribute__((noinline))
#else
#define KEEP __attribute__((noipa))
#endif

enum part {
	P_REC = 1,
	P_ALLOCA,
	P_RAISE,
	P_ALTSTACK,
	P_TIMER,
	P_LONGJMP,
	P_CORO,
	P_BACK,
};

#define THREADS 3
#define KEPT 4
#define ALT_SIZE (256 * 1024)
#define CORO_SIZE (256 * 1024)
#define TIMER_TICKS 20

struct descent;
typedef void bottom_fn(const struct descent *ds);

/* One descent: DEPTH levels below level 0, the functions chosen by level
   and, from level TWIST down, by K too; BOTTOM runs at the deepest. */
struct descent {
	int depth, twist, k, kinds;
	enum part part;
	bottom_fn *bottom;
	jmp_buf *jump; /* longjmp target of bottom_jump */
};

struct coro {
	ucontext_t uc;
	int done;
};

/* One thread's state. */
struct ctx {
	int tid;
	unsigned long blocks, sum;
	void *kept[KEPT];
	unsigned next_kept;
	int sig_k; /* the handler's descent parameter */
	struct coro co[2];
	ucontext_t main_uc;
};

static __thread struct ctx *me;
static volatile unsigned long sink;
static volatile sig_atomic_t ticks;

static char alt_stacks[THREADS + 1][ALT_SIZE];
static char coro_stacks[THREADS + 1][2][CORO_SIZE];

typedef int level_fn(const struct descent *ds, int level);
static level_fn rec_a, rec_b, rec_c, rec_d;
static level_fn *const levels[] = {rec_a, rec_b, rec_c, rec_d};

/* The size of a block of part PART, the Kth of its kind. */
static size_t
part_size(enum part part, int k)
{
	return (size_t)part * 1000 + (size_t)me->tid * 100 + (size_t)(k % 50);
}

/* Keep P among the thread's last KEPT blocks, freeing the oldest. */
static void
keep(void *p)
{
	unsigned i = me->next_kept++ % KEPT;
	free(me->kept[i]);
	me->kept[i] = p;
}

static void
drop_kept(void)
{
	for (unsigned i = 0; i < KEPT; i++) {
		free(me->kept[i]);
		me->kept[i] = 0;
	}
}

/* Sum of N bytes at P, written with K first. */
static unsigned long
fill_sum(unsigned char *p, size_t n, int k)
{
	unsigned long s = 0;
	memset(p, k & 0xff, n);
	for (size_t i = 0; i < n; i += 37)
		s += p[i] + i;
	return s;
}

/* Three walks from one frame: malloc, calloc, realloc; one block kept. */
static KEEP void
leaf_alloc(enum part part, int k)
{
	size_t n = part_size(part, k);
	unsigned char *a = malloc(n);
	unsigned char *b = calloc(1, n);
	if (!a || !b)
		abort();
	me->sum += fill_sum(a, n, k) + b[n - 1];
	free(b);
	unsigned char *c = realloc(a, n + 50);
	if (!c)
		abort();
	me->sum += fill_sum(c, n + 50, k + 1);
	keep(c);
	me->blocks += 2;
}

/* The level below LEVEL: from DS->twist down, a function that changes with
   the descent; above it, one that depends on the level only. A frame of
   its own at every level, whatever the optimisation. */
static KEEP int
descend(const struct descent *ds, int level)
{
	int kind = level + (level >= ds->twist ? ds->k : 0);
	return levels[kind % ds->kinds](ds, level + 1);
}

/* rec_a, rec_b and rec_c: one body, so one frame size: a frame of one at
   the address where another's was. */
static KEEP int
rec_a(const struct descent *ds, int level)
{
	if (level >= ds->depth) {
		ds->bottom(ds);
		return 1;
	}
	int r = descend(ds, level);
	sink += (unsigned long)r;
	return r + 1;
}

static KEEP int
rec_b(const struct descent *ds, int level)
{
	if (level >= ds->depth) {
		ds->bottom(ds);
		return 1;
	}
	int r = descend(ds, level);
	sink += (unsigned long)r;
	return r + 1;
}

static KEEP int
rec_c(const struct descent *ds, int level)
{
	if (level >= ds->depth) {
		ds->bottom(ds);
		return 1;
	}
	int r = descend(ds, level);
	sink += (unsigned long)r;
	return r + 1;
}

/* An alloca frame whose size changes with the level and the descent: the
   frames below it move by that much from one descent to the next. */
static KEEP int
rec_d(const struct descent *ds, int level)
{
	size_t n = 16 * (size_t)(1 + (level * 5 + ds->k * 3) % 37);
	volatile char *pad = alloca(n);
	pad[0] = (char)level;
	pad[n - 1] = (char)ds->k;
	if (level >= ds->depth) {
		ds->bottom(ds);
		return 1;
	}
	int r = descend(ds, level);
	sink += (unsigned long)r + (unsigned long)pad[n - 1];
	return r + 1;
}

static void
run_descent(struct descent *ds)
{
	if (ds->twist > ds->depth)
		ds->twist = ds->depth;
	if (!ds->kinds)
		ds->kinds = 3;
	levels[ds->k % ds->kinds](ds, 0);
}

static KEEP void
bottom_alloc(const struct descent *ds)
{
	leaf_alloc(ds->part, ds->k);
}

/* ---- part 1, rec; part 2, alloca ---- */

static KEEP void
part_rec(void)
{
	for (int i = 0; i < 120; i++) {
		int depth = 1 + i % 40;
		struct descent ds = {.depth = depth, .twist = (i * 7) % (depth + 1),
				     .k = i, .part = P_REC, .bottom = bottom_alloc};
		run_descent(&ds);
	}
	drop_kept();
}

static KEEP void
part_alloca(void)
{
	for (int i = 0; i < 80; i++) {
		int depth = 1 + (7 * i) % 40;
		struct descent ds = {.depth = depth, .twist = (i * 11) % (depth + 1),
				     .k = i, .kinds = 4, .part = P_ALLOCA,
				     .bottom = bottom_alloc};
		run_descent(&ds);
	}
	drop_kept();
}

/* ---- parts 3 and 4, signals raised by the thread itself ---- */

static void
on_raised(int sig)
{
	struct descent ds = {.depth = 1 + me->sig_k % 7, .twist = me->sig_k % 3,
			     .k = me->sig_k,
			     .part = sig == SIGUSR2 ? P_ALTSTACK : P_RAISE,
			     .bottom = bottom_alloc};
	run_descent(&ds);
}

/* An allocation, a signal whose handler allocates, an allocation: the
   walk after the handler's finds the same frames in the same places. */
static KEEP void
bottom_signal(const struct descent *ds)
{
	int sig = ds->part == P_ALTSTACK ? SIGUSR2 : SIGUSR1;
	leaf_alloc(ds->part, ds->k);
	me->sig_k = ds->k;
	if (ds->k % 2)
		raise(sig);
	else
		pthread_kill(pthread_self(), sig);
	leaf_alloc(ds->part, ds->k + 1);
}

static KEEP void
part_signal(enum part part)
{
	for (int i = 0; i < 40; i++) {
		int depth = 1 + (i * 3) % 25;
		struct descent ds = {.depth = depth, .twist = i % (depth + 1),
				     .k = i, .part = part, .bottom = bottom_signal};
		run_descent(&ds);
	}
	drop_kept();
}

/* ---- part 5, timer (main alone) ---- */

/* The one caller of malloc in part 5 (walk_memo.sh leaves it out of the
   profiles it compares byte for byte). */
static KEEP void
timer_alloc(const struct descent *ds)
{
	size_t n = part_size(P_TIMER, ds->k);
	unsigned char *p = malloc(n);
	if (!p)
		abort();
	me->sum += fill_sum(p, n, ds->k);
	keep(p);
	me->blocks++;
}

static void
on_timer(int sig)
{
	(void)sig;
	if (ticks >= TIMER_TICKS)
		return; /* a tick after the last one counted: no allocation */
	int k = ticks;
	struct descent ds = {.depth = 1 + (k * 5) % 13, .twist = k % 4, .k = k,
			     .part = P_TIMER, .bottom = timer_alloc};
	run_descent(&ds);
	ticks = k + 1;
}

/* Spin on arithmetic, allocating nothing, until the handler has counted
   every tick: the only window in which SIGALRM can arrive. */
static KEEP void
bottom_spin(const struct descent *ds)
{
	unsigned long x = (unsigned long)ds->k + 88172645463325252ul;
	while (ticks < TIMER_TICKS) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	sink += x & 1;
}

static KEEP void
part_timer(void)
{
	struct itimerval on = {{0, 1000}, {0, 1000}}, off = {{0, 0}, {0, 0}};
	struct descent ds = {.depth = 12, .twist = 12, .k = 0, .part = P_TIMER,
			     .bottom = bottom_spin};
	if (setitimer(ITIMER_REAL, &on, 0))
		abort();
	run_descent(&ds);
	if (setitimer(ITIMER_REAL, &off, 0))
		abort();
	drop_kept();
}

/* ---- part 6, longjmp ---- */

static KEEP void
bottom_jump(const struct descent *ds)
{
	leaf_alloc(ds->part, ds->k);
	longjmp(*ds->jump, 1);
}

/* At depth s: setjmp, a deep descent that longjmps back from its bottom,
   then an allocation here and a descent of another shape over the frames
   abandoned. */
static KEEP void
bottom_setjmp(const struct descent *ds)
{
	jmp_buf back;
	struct descent deep = {.depth = 5 + (ds->k * 7) % 20, .twist = ds->k % 5,
			       .k = ds->k, .part = P_LONGJMP,
			       .bottom = bottom_jump, .jump = &back};
	if (setjmp(back) == 0) {
		run_descent(&deep);
		abort(); /* bottom_jump does not return */
	}
	leaf_alloc(P_LONGJMP, ds->k + 1);
	struct descent over = {.depth = 3 + (ds->k * 5) % 22, .twist = 0,
			       .k = ds->k + 1, .kinds = 4, .part = P_LONGJMP,
			       .bottom = bottom_alloc};
	run_descent(&over);
}

static KEEP void
part_longjmp(void)
{
	for (int i = 0; i < 30; i++) {
		struct descent ds = {.depth = 1 + (i * 3) % 15, .twist = i % 4,
				     .k = i, .part = P_LONGJMP,
				     .bottom = bottom_setjmp};
		run_descent(&ds);
	}
	drop_kept();
}

/* ---- parts 7 and 8, coroutines ---- */

/* At a coroutine's bottom: allocate, switch to main (which allocates),
   allocate again once resumed. */
static KEEP void
bottom_yield(const struct descent *ds)
{
	struct coro *c = &me->co[ds->k % 2];
	leaf_alloc(P_CORO, ds->k);
	if (swapcontext(&c->uc, &me->main_uc))
		abort();
	leaf_alloc(P_CORO, ds->k + 1);
}

static void
coro_rounds(int id, int rounds, int shape)
{
	for (int r = 0; r < rounds; r++) {
		int depth = 1 + (r * 5 + id * 3 + shape) % 30;
		/* k's parity names the coroutine (bottom_yield) */
		struct descent ds = {.depth = depth, .twist = (r + shape) % (depth + 1),
				     .k = 2 * (r + shape) + id, .kinds = 3 + shape % 2,
				     .part = P_CORO, .bottom = bottom_yield};
		run_descent(&ds);
	}
	me->co[id].done = 1;
}

static void
coro_first(int id)
{
	coro_rounds(id, 12, 0);
}

/* Another function on a stack that held a finished coroutine. */
static void
coro_second(int id)
{
	coro_rounds(id, 6, 7);
}

static void
coro_start(int id, void (*fn)(int))
{
	struct coro *c = &me->co[id];
	if (getcontext(&c->uc))
		abort();
	c->uc.uc_stack.ss_sp = coro_stacks[me->tid][id];
	c->uc.uc_stack.ss_size = CORO_SIZE;
	c->uc.uc_link = &me->main_uc;
	c->done = 0;
	makecontext(&c->uc, (void (*)(void))fn, 1, id);
}

/* Resume coroutine ID until it ends, allocating after each switch back. */
static KEEP void
coro_resume(int id, int k)
{
	if (swapcontext(&me->main_uc, &me->co[id].uc))
		abort();
	leaf_alloc(P_BACK, k);
}

static KEEP void
part_coro(void)
{
	for (int gen = 0; gen < 2; gen++) {
		coro_start(0, gen ? coro_second : coro_first);
		coro_start(1, gen ? coro_second : coro_first);
		for (int k = 0; !me->co[0].done || !me->co[1].done; k++)
			if (!me->co[k % 2].done)
				coro_resume(k % 2, k);
	}
	drop_kept();
}

/* ---- the threads ---- */

static void
set_altstack(void)
{
	stack_t ss = {.ss_sp = alt_stacks[me->tid], .ss_size = ALT_SIZE};
	if (sigaltstack(&ss, 0))
		abort();
}

static void
run_parts(struct ctx *c)
{
	me = c;
	set_altstack();
	part_rec();
	part_alloca();
	part_signal(P_RAISE);
	part_signal(P_ALTSTACK);
	if (c->tid == 0)
		part_timer();
	part_longjmp();
	part_coro();
}

static void *
thread_main(void *arg)
{
	sigset_t alarm;
	sigemptyset(&alarm);
	sigaddset(&alarm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alarm, 0);
	run_parts(arg);
	return 0;
}

static void
handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa = {.sa_handler = fn, .sa_flags = flags};
	sigemptyset(&sa.sa_mask);
	if (sigaction(sig, &sa, 0))
		abort();
}

int
main(int argc, char **argv)
{
	static struct ctx ctxs[THREADS + 1];
	pthread_t th[THREADS];
	int serial = argc > 1 && strcmp(argv[1], "serial") == 0;

	handle(SIGUSR1, on_raised, 0);
	handle(SIGUSR2, on_raised, SA_ONSTACK);
	handle(SIGALRM, on_timer, SA_RESTART);
	for (int t = 0; t <= THREADS; t++)
		ctxs[t].tid = t;
	run_parts(&ctxs[0]);
	for (int t = 1; t <= THREADS; t++) {
		if (pthread_create(&th[t - 1], 0, thread_main, &ctxs[t]))
			abort();
		if (serial)
			pthread_join(th[t - 1], 0);
	}
	for (int t = 1; t <= THREADS && !serial; t++)
		pthread_join(th[t - 1], 0);
	printf("timer ticks %d\n", (int)ticks);
	for (int t = 0; t <= THREADS; t++)
		printf("tid %d: %lu blocks, sum %lu\n", t, ctxs[t].blocks,
		       ctxs[t].sum);
	return 0;
}
