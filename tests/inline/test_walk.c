/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stub's stack walk against the tracer's unwinder, in this process:
   call chains of every frame kind (walkchain.h) reach a fake allocator
   through a trampoline twice from one call site, once walked by the stub
   from the rules our own symbol session compiles (selfrule.h), which
   stubenv's consumer publishes answering the stub's RULE questions as
   the tracer does, once copied and unwound by sym_unwind; the addresses
   must be the same, to the last frame and at every depth limit. A
   question left unanswered makes the stub copy, and the rules learnt
   from that copy make the next call walk. Then each reason a stub copies
   instead (walking off, a signal frame, a read past the stack's bounds,
   the rule table emptied mid-walk) gives its copy and the same
   addresses; and threads walk while the table is emptied over and
   over. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "selfrule.h"
#include "stubenv.h"
#include "tests/check.h"
#include "walkchain.h"

#define MAX_PCS 80

static uint64_t
fake_malloc(uint64_t size)
{
	return 0x7e0000000000ULL + size;
}

__attribute__((noinline)) static uint64_t
leaf_malloc(struct walk_chain *c)
{
	uint64_t r = tramp1(0, 24);
	c->sum += r;
	return r + 1;
}

/* One record's addresses as the profile gets them: walked by the stub
   (return addresses minus one), or the copy unwound by sym_unwind. */
struct got {
	unsigned max;
	unsigned records;
	bool walked;
	enum ring_copy copied;
	unsigned n;
	uint64_t pcs[MAX_PCS];
};

/* stubenv's on_item: the allocation's addresses into ARG, a struct got.
   Questions (RULE records) were answered already. */
static int
grab(void *arg, const struct tracer_ring_item *it)
{
	struct got *g = arg;
	if (it->rec->kind != RING_REC_ALLOC)
		return 0;
	g->records++;
	g->copied = it->copied;
	g->walked = it->npcs > 0;
	if (g->walked) {
		g->n = it->npcs < g->max ? it->npcs : g->max;
		g->pcs[0] = it->pcs[0];
		for (unsigned i = 1; i < g->n; i++)
			g->pcs[i] = it->pcs[i] - 1;
		return 0;
	}
	g->n = selfrule_unwind(&it->cap, g->pcs, g->max);
	return 0;
}

/* Two rounds of a loop: the compiler may not make a call site of each. */
static volatile int rounds = 2;

/* One call of the chain KINDS, its record's addresses into G once the
   consumer has delivered it. */
__attribute__((noinline)) static void
run_once(const char *kinds, unsigned walk_max, struct got *g)
{
	tracer_ring_walk_set(env.r, walk_max);
	env.item_arg = g;
	struct walk_chain ch = { .kinds = kinds, .leaf = leaf_malloc };
	walk_next(&ch, 0);
	env_sync();
}

/* Run KINDS from one call site (not inlined: the compiler may not make
   a call site per round) once per WALK_MAX[i] (0: copy), at most MAX
   addresses each, into G[i]. */
__attribute__((noinline)) static void
run_rounds(const char *kinds, unsigned max, const unsigned *walk_max,
	   int n, struct got *g)
{
	for (int i = 0; i < n; i++) {
		memset(&g[i], 0, sizeof(g[i]));
		g[i].max = max;
		run_once(kinds, walk_max[i], &g[i]);
	}
}

/* Run KINDS twice from one call site, walking (at most MAX addresses),
   then copying; W and C get the two records' addresses. */
static void
run_chain(const char *kinds, unsigned max, struct got *w, struct got *c)
{
	const unsigned modes[2] = { max, 0 };
	struct got g[2];
	run_rounds(kinds, max, modes, 2, g);
	*w = g[0];
	*c = g[1];
}

static bool
same(const struct got *a, const struct got *b)
{
	return a->n == b->n && !memcmp(a->pcs, b->pcs, a->n * sizeof(*a->pcs));
}

static void
show(const char *what, const struct got *g)
{
	struct ht_symbolizer sym = sym_session_symbolizer(selfrule_session());
	fprintf(stderr, "  %s: %u addresses%s\n", what, g->n,
		g->walked ? ", walked" : "");
	for (unsigned i = 0; i < g->n; i++) {
		const char *fn = sym.function_name(sym.ctx, g->pcs[i]);
		fprintf(stderr, "    %#llx %s\n", (unsigned long long)g->pcs[i],
			fn ? fn : "?");
	}
}

/* How many of G's frames are in FN. */
static unsigned
frames_in(const struct got *g, const char *fn)
{
	struct ht_symbolizer sym = sym_session_symbolizer(selfrule_session());
	unsigned k = 0;
	for (unsigned i = 0; i < g->n; i++) {
		const char *name = sym.function_name(sym.ctx, g->pcs[i]);
		k += name && !strcmp(name, fn);
	}
	return k;
}

static void
check_chain(const char *kinds, unsigned max)
{
	struct got w, c;
	run_chain(kinds, max, &w, &c);
	CHECK(w.records == 1 && c.records == 1, "%s: %u and %u records",
	      kinds, w.records, c.records);
	CHECK(w.walked && w.copied == RING_COPY_NONE,
	      "%s, max %u: walked (copied: %d)", kinds, max, (int)w.copied);
	CHECK(!c.walked && c.copied == RING_COPY_OFF, "%s: copied when off",
	      kinds);
	bool ok = same(&w, &c);
	CHECK(ok, "%s, max %u: walked as unwound", kinds, max);
	if (!ok) {
		show("walked", &w);
		show("unwound", &c);
	}
	unsigned want = (unsigned)strlen(kinds) + 3; /* + leaf, walk_next x2 */
	CHECK(w.n >= (want < max ? want : max), "%s: %u frames", kinds, w.n);
}

static void
test_kinds(void)
{
	check_chain("F", MAX_PCS);
	check_chain("N", MAX_PCS);
	check_chain("V", MAX_PCS);
	check_chain("C", MAX_PCS);
	check_chain("FNVC", MAX_PCS);
	check_chain("CNCVCFCC", MAX_PCS);
	check_chain("NNNNVVVVFFFFCCCC", MAX_PCS);
	struct got w, c;
	uint64_t misses = 0, asked = 0;
	for (int i = 0; i < rounds; i++) {
		/* The second time round, every frame is known: nothing
		   asked. */
		misses = env.h->stats.rule_misses;
		asked = env.answered[RING_REC_RULE];
		run_chain("FNVC", MAX_PCS, &w, &c);
	}
	CHECK(env.h->stats.rule_misses == misses &&
		      env.answered[RING_REC_RULE] == asked,
	      "%llu misses, %llu questions for known frames",
	      (unsigned long long)(env.h->stats.rule_misses - misses),
	      (unsigned long long)(env.answered[RING_REC_RULE] - asked));
	CHECK(frames_in(&w, "walk_fp") == 1 &&
		      frames_in(&w, "walk_nofp") == 1 &&
		      frames_in(&w, "walk_vla") == 1 &&
		      frames_in(&w, "walk_nocfi") == 1 &&
		      frames_in(&w, "leaf_malloc") == 1 &&
		      frames_in(&w, "fake_malloc") == 1,
	      "every kind of frame walked");
}

static void
test_depth(void)
{
	static const char deep[] = "FNFNFNFNFNFNFNFNFNFNFNFNFNFNFNFNFNFNFNFN";
	for (unsigned max = 1; max <= 50; max += 7)
		check_chain(deep, max);
	check_chain(deep, MAX_PCS);
}

/* ---- Copies ---- */

static struct got sig_w, sig_c;

static void
on_usr2(int sig)
{
	(void)sig;
	run_chain("FN", MAX_PCS, &sig_w, &sig_c);
}

static void
test_signal_frame(void)
{
	struct sigaction sa = { .sa_handler = on_usr2 }, old;
	sigaction(SIGUSR2, &sa, &old);
	raise(SIGUSR2);
	sigaction(SIGUSR2, &old, NULL);
	CHECK(!sig_w.walked && sig_w.copied == RING_COPY_RULE,
	      "a signal frame: copied (%d)", (int)sig_w.copied);
	CHECK(same(&sig_w, &sig_c) && sig_w.n > 8,
	      "the copy unwound through the handler (%u addresses)", sig_w.n);
}

static void
test_bounds(void)
{
	/* The stack ends, for the stub, a little above this frame. */
	volatile uint64_t here = 0;
	env_thread_set(env_self.stack_lo, (uint64_t)&here + 64);
	struct got w, c;
	run_chain("FNVC", MAX_PCS, &w, &c);
	env_thread_set(env_self.stack_lo, env_self.stack_hi);
	CHECK(!w.walked && w.copied == RING_COPY_BOUNDS,
	      "a read past the stack's top: copied (%d)", (int)w.copied);
	CHECK(same(&w, &c), "the same addresses from the shorter copy");
}

static unsigned resets_left;

/* env.on_rule, called by the drainer as the tables' writer. */
static bool
rule_resetting(uint64_t pc, struct ring_rule *out)
{
	if (resets_left) {
		resets_left--;
		tracer_ring_rules_reset(env.r);
	}
	return selfrule_get(pc, out);
}

static void
test_reset(void)
{
	/* A walk that asks for a rule after a frame it looked up already:
	   the table is emptied in between. */
	env_rules_reset();
	struct got w, c;
	run_chain("F", MAX_PCS, &w, &c); /* the frames up to main are known */
	env.on_rule = rule_resetting;
	resets_left = 1;
	run_chain("NVC", MAX_PCS, &w, &c);
	env.on_rule = selfrule_get;
	CHECK(!w.walked && w.copied == RING_COPY_RESET,
	      "the table emptied mid-walk: copied (%d)", (int)w.copied);
	CHECK(same(&w, &c), "the same addresses from the copy");
	run_chain("NVC", MAX_PCS, &w, &c);
	CHECK(w.walked && same(&w, &c), "walked again after the reset");
}

/* ---- Questions left unanswered, or answered without a rule ---- */

/* A RULE question nobody answers in time (a tracer busy elsewhere):
   after RING_RULE_WAIT_NS the stub copies (RING_COPY_RULE), and the
   tracer, unwinding the copy, publishes the rules of its frames
   (rules_from_copy), so that the next call through them is walked; the
   addresses are the same as sym_unwind's on a copy each time. */
static void
test_learn_from_copy(void)
{
	static const unsigned modes[3] = { MAX_PCS, MAX_PCS, 0 };
	struct got g[3];
	env_rules_reset();
	uint64_t timeouts = env.h->stats.notify_timeouts;
	uint64_t learnt = env.copy_rules;
	env.rules_silent = true;
	run_rounds("FNVC", MAX_PCS, modes, 3, g);
	env.rules_silent = false;
	CHECK(!g[0].walked && g[0].copied == RING_COPY_RULE,
	      "unanswered: copied (%d)", (int)g[0].copied);
	CHECK(env.h->stats.notify_timeouts == timeouts + 1,
	      "one question timed out (%llu)",
	      (unsigned long long)(env.h->stats.notify_timeouts - timeouts));
	CHECK(env.copy_rules > learnt, "no rule learnt from the copy");
	CHECK(g[1].walked, "the next call walked (copied: %d)",
	      (int)g[1].copied);
	CHECK(!g[2].walked && g[2].copied == RING_COPY_OFF,
	      "copied when off");
	bool ok = same(&g[0], &g[1]) && same(&g[1], &g[2]);
	CHECK(ok && g[0].n > 8, "the same addresses each way (%u)", g[0].n);
	if (!ok) {
		show("copied unanswered", &g[0]);
		show("walked", &g[1]);
		show("copied", &g[2]);
	}
}

/* Questions answered without a rule (a tracer with no rules to give,
   e.g. before its profile starts): the stub copies at once, with no
   time-out, and those copies teach nothing. */
static void
test_declined(void)
{
	static const unsigned modes[2] = { MAX_PCS, MAX_PCS };
	struct got g[2];
	env_rules_reset();
	uint64_t timeouts = env.h->stats.notify_timeouts;
	uint64_t asked = env.answered[RING_REC_RULE];
	env.on_rule = NULL;
	run_rounds("NV", MAX_PCS, modes, 2, g);
	env.on_rule = selfrule_get;
	CHECK(!g[0].walked && g[0].copied == RING_COPY_RULE &&
		      !g[1].walked && g[1].copied == RING_COPY_RULE,
	      "declined: copied (%d, %d)", (int)g[0].copied,
	      (int)g[1].copied);
	CHECK(env.answered[RING_REC_RULE] == asked + 2 &&
		      env.h->stats.notify_timeouts == timeouts,
	      "asked each time, answered, no time-out");
	CHECK(same(&g[0], &g[1]), "the same addresses");
}

/* ---- Threads walking while the table is emptied ---- */

enum { WALKERS = 3, WALKS = 20000 };

static volatile int walkers_go, walkers_done;

static void *
walker(void *arg)
{
	(void)arg;
	env_thread_init();
	while (!__atomic_load_n(&walkers_go, __ATOMIC_ACQUIRE))
		;
	for (int i = 0; i < WALKS; i++) {
		struct walk_chain ch = { .kinds = "FNVC",
					 .leaf = leaf_malloc };
		walk_next(&ch, 0);
	}
	__atomic_fetch_add(&walkers_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Each thread's stack is the same at every call: its first record's
   addresses, walked or unwound from a copy, are the reference. */
struct per_tid {
	uint32_t tid;
	struct got ref;
};

struct threads_check {
	struct per_tid t[WALKERS];
	uint64_t walked, copied[RING_COPY_N], bad;
};

static int
check_thread_record(void *arg, const struct tracer_ring_item *it)
{
	struct threads_check *tc = arg;
	struct got g = { .max = MAX_PCS };
	if (it->rec->kind != RING_REC_ALLOC)
		return 0; /* a question, answered */
	grab(&g, it);
	if (g.walked)
		tc->walked++;
	else
		tc->copied[g.copied]++;
	struct per_tid *pt = NULL;
	for (int i = 0; i < WALKERS && !pt; i++) {
		if (tc->t[i].tid == it->rec->tid)
			pt = &tc->t[i];
		else if (!tc->t[i].tid) {
			pt = &tc->t[i];
			pt->tid = it->rec->tid;
			pt->ref = g;
		}
	}
	if (!pt || !same(&g, &pt->ref)) {
		if (!tc->bad) {
			show("record", &g);
			show("first of its thread", &pt->ref);
		}
		tc->bad++;
	}
	return 0;
}

static void
test_threads_reset(void)
{
	pthread_t th[WALKERS];
	struct threads_check tc;
	memset(&tc, 0, sizeof(tc));
	tracer_ring_walk_set(env.r, MAX_PCS);
	env_consumer_stop(true);
	env.on_item = check_thread_record;
	env.item_arg = &tc;
	walkers_go = walkers_done = 0;
	for (int i = 0; i < WALKERS; i++)
		if (pthread_create(&th[i], NULL, walker, NULL)) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	/* This thread plays the tracer: drains (answering the questions
	   each emptied table brings), and every 20 us empties the rule
	   table, as a library mapping would make it. */
	unsigned resets = 0;
	__atomic_store_n(&walkers_go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&walkers_done, __ATOMIC_ACQUIRE) < WALKERS) {
		env_drain(1000000);
		env_rules_reset();
		resets++;
		usleep(20);
	}
	for (int i = 0; i < WALKERS; i++)
		pthread_join(th[i], NULL);
	while (tracer_ring_pending(env.r))
		env_drain(100000000);
	env.on_item = grab;
	env_consumer_start(0);
	uint64_t copies = 0;
	for (int i = 0; i < RING_COPY_N; i++)
		copies += tc.copied[i];
	CHECK(tc.walked + copies == WALKERS * WALKS && !tc.bad,
	      "%llu walked, %llu copied, %llu with other addresses",
	      (unsigned long long)tc.walked, (unsigned long long)copies,
	      (unsigned long long)tc.bad);
	CHECK(copies == tc.copied[RING_COPY_RESET],
	      "copies only for resets (%llu)",
	      (unsigned long long)tc.copied[RING_COPY_RESET]);
	CHECK(tc.walked > 0, "some walked");
	fprintf(stderr, "threads: %llu walked, %llu copied across %u table "
		"resets\n", (unsigned long long)tc.walked,
		(unsigned long long)copies, resets);
}

int
main(void)
{
	if (!selfrule_session()) {
		fprintf(stderr, "SKIP: cannot read our own symbols\n");
		return EXIT_SKIP;
	}
	int err = env_init(1 << 20, RING_MAX_STACK_COPY, 16);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		return EXIT_HARNESS;
	}
	env_thread_init();
	env_fn(0, HT_FN_MALLOC, fake_malloc, 0, 0);
	env.on_rule = selfrule_get;
	env.on_item = grab;
	env_consumer_start(0);

	test_kinds();
	test_depth();
	test_learn_from_copy();
	test_declined();
	test_signal_frame();
	test_bounds();
	test_reset();
	test_threads_reset();

	env_consumer_stop(true);
	fprintf(stderr, "rules: %llu asked, %llu the stubs cannot follow; "
		"%llu RULE questions, %llu rules published answering them, "
		"%llu from copies\n", (unsigned long long)selfrule_asked,
		(unsigned long long)selfrule_refused,
		(unsigned long long)env.answered[RING_REC_RULE],
		(unsigned long long)env.ahead_rules,
		(unsigned long long)env.copy_rules);
	env_fini();
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
