/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stub's walk memo (ring.h, "The walk memo") against the truth, in
   this process: every call walked with the memo is followed, from the
   very same call site, by its twin walked with the memo off and as deep
   as the stub goes, and the first record's addresses must be exactly the
   twin's first walk_max ones. The memo's counters, read around each call
   (the stub updates them in the calling thread), say whether the memo was
   used and how much, so that no case passes without the memo at work (or
   kept out): random chains sharing suffixes, a word changed in a shared
   frame, the rule table emptied, another stack top, capped walks, signal
   handlers that allocate inside a walk or jump out of it, threads, and
   stacks deeper than the memo. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "selfrule.h"
#include "stubenv.h"
#include "tests/check.h"
#include "walkchain.h"

/* Twins walk this deep: deeper than any case's walk_max. */
#define TRUTH_MAX RING_MAX_PCS
#define WALK_MAX 80

/* ---- The chains ---- */

/* The size the leaf asks for: each call's tag, to find its record. */
static __thread volatile uint64_t call_tag;

/* raise(SIGUSR1) at the allocator's next call (the signal cases). */
static volatile int raise_in_malloc;

static uint64_t
fake_malloc(uint64_t size)
{
	if (raise_in_malloc) {
		raise_in_malloc = 0;
		raise(SIGUSR1);
	}
	return 0x7e0000000000ULL + size;
}

__attribute__((noinline)) static uint64_t
leaf_malloc(struct walk_chain *c)
{
	uint64_t r = tramp1(0, call_tag);
	c->sum += r;
	return r + 1;
}

/* The length of the arrays of KEEP_FRAME_POINTER. */
static volatile unsigned pad_len = 8;

/* An array of variable length gives the frame a frame pointer, so that
   rbp is its frame's address at every call it makes: a caller's loop
   counter left in rbp would be a saved word that differs at each call,
   which no memo could take (it would test less than it seems to). */
#define KEEP_FRAME_POINTER()                      \
	volatile char frame_pad_[pad_len];        \
	frame_pad_[0] = 0;                        \
	(void)frame_pad_[0]

/* The chain KINDS down to one allocation of size TAG, as things are. */
__attribute__((noinline)) static void
chain_only(const char *kinds, uint64_t tag)
{
	KEEP_FRAME_POINTER();
	call_tag = tag;
	struct walk_chain ch = { .kinds = kinds, .leaf = leaf_malloc };
	walk_next(&ch, 0);
}

/* The same with walks at most WALK_MAX deep and memo MODE. */
__attribute__((noinline)) static void
call_chain(const char *kinds, unsigned walk_max, enum ring_memo_mode mode,
	   uint64_t tag)
{
	tracer_ring_walk_set(env.r, walk_max);
	tracer_ring_memo_set(env.r, mode);
	chain_only(kinds, tag);
}

/* ---- Records, by tag ---- */

struct rec {
	uint64_t tag;
	bool walked;
	uint8_t copied;
	unsigned n;
	uint64_t pcs[TRUTH_MAX];
};

enum { LOG_CAP = 16384 };
static struct rec *log_v;
static unsigned log_n, log_overflow;

/* env.on_item: each allocation's record into the log. */
static int
log_item(void *arg, const struct tracer_ring_item *it)
{
	(void)arg;
	if (it->rec->kind != RING_REC_ALLOC)
		return 0;
	if (log_n == LOG_CAP) {
		log_overflow++;
		return 0;
	}
	struct rec *r = &log_v[log_n++];
	r->tag = it->rec->args[0];
	r->copied = it->copied;
	r->walked = it->npcs > 0;
	if (r->walked) {
		r->n = it->npcs < TRUTH_MAX ? it->npcs : TRUTH_MAX;
		r->pcs[0] = it->pcs[0];
		for (unsigned i = 1; i < r->n; i++)
			r->pcs[i] = it->pcs[i] - 1;
	} else {
		r->n = selfrule_unwind(&it->cap, r->pcs, TRUTH_MAX);
	}
	return 0;
}

static void
log_reset(void)
{
	env_sync();
	log_n = 0;
	log_overflow = 0;
}

/* The record of tag TAG, or NULL. */
static const struct rec *
rec_find(uint64_t tag)
{
	for (unsigned i = 0; i < log_n; i++)
		if (log_v[i].tag == tag)
			return &log_v[i];
	return NULL;
}

static void
show(const char *what, const struct rec *g)
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

/* ---- The memo's counters ---- */

struct counts {
	uint64_t walks, hits, reused, differed;
};

static struct counts
counts_now(void)
{
	struct tracer_ring_stats st;
	tracer_ring_stats(env.r, &st);
	return (struct counts){ st.memo_walks, st.memo_hits, st.memo_reused,
				st.memo_differed };
}

static struct counts
counts_since(struct counts a)
{
	struct counts b = counts_now();
	return (struct counts){ b.walks - a.walks, b.hits - a.hits,
				b.reused - a.reused, b.differed - a.differed };
}

/* This thread's memo, read in place. */
static struct ring_memo *
my_memo(void)
{
	struct ring_thread *t = ring_thread_lookup(env.h, env_tcb());
	return t ? ring_memo(env.h, t) : NULL;
}

/* ---- Steps: a call with the memo, then its twin without ---- */

/* Two rounds of a loop: the compiler may not make a call site of each. */
static volatile int rounds = 2;

struct step {
	const char *kinds;
	unsigned walk_max;
	enum ring_memo_mode mode;
	void (*before)(void); /* called first, when not NULL */
	/* What the call did to the memo's counters (all threads'). */
	struct counts d;
};

/* How twins walk. The mode and walk_max are the ring's, not a thread's:
   threads walking at once all walk as the threads' case says. */
static enum ring_memo_mode twin_mode = RING_MEMO_OFF;
static unsigned twin_max = TRUTH_MAX;

/* Tags: step I of series S; its twin has bit 0 set. */
static uint64_t
tag_of(unsigned series, unsigned i, unsigned twin)
{
	return ((uint64_t)series << 24) + 2u * i + twin;
}

/* Run the N steps of series SERIES from one call site, each with its
   twin (no memo, TRUTH_MAX deep); COUNT: note each step's counters. */
__attribute__((noinline)) static void
run_steps(struct step *s, unsigned n, unsigned series, bool count)
{
	KEEP_FRAME_POINTER();
	for (unsigned i = 0; i < n; i++) {
		if (s[i].before)
			s[i].before();
		struct counts c = { 0 };
		if (count)
			c = counts_now();
		/* Both from one call site: a loop whose every value is read
		   from memory, which no compiler peels into two calls. The
		   twin leaves the memo and its counters alone. */
		volatile unsigned max[2] = { s[i].walk_max, twin_max };
		volatile enum ring_memo_mode mode[2] = { s[i].mode,
							 twin_mode };
		for (volatile int twin = 0; twin < rounds; twin++)
			call_chain(s[i].kinds, max[twin], mode[twin],
				   tag_of(series, i, (unsigned)twin));
		if (count)
			s[i].d = counts_since(c);
	}
}

/* Whether the record of step I of SERIES (at most MAX addresses) is
   walked and is exactly the first MAX of its twin's, said when not;
   *N gets its length. */
static bool
step_right(unsigned series, unsigned i, unsigned max, const char *kinds,
	   unsigned *n)
{
	const struct rec *g = rec_find(tag_of(series, i, 0));
	const struct rec *t = rec_find(tag_of(series, i, 1));
	*n = 0;
	if (!g || !t) {
		fprintf(stderr, "series %u step %u (%s): no record\n", series,
			i, kinds);
		return false;
	}
	*n = g->n;
	unsigned want = t->n < max ? t->n : max;
	bool ok = g->walked && t->walked && g->n == want &&
		  !memcmp(g->pcs, t->pcs, want * sizeof(*g->pcs));
	if (!ok) {
		fprintf(stderr, "series %u step %u (%s, max %u):\n", series, i,
			kinds, max);
		show("with the memo", g);
		show("without", t);
	}
	return ok;
}

/* Run S (N steps) as SERIES and check every record; returns how many
   are wrong. */
static unsigned
steps_check(struct step *s, unsigned n, unsigned series)
{
	unsigned bad = 0, len;
	for (unsigned i = 0; i < n; i++)
		bad += !step_right(series, i, s[i].walk_max, s[i].kinds, &len);
	return bad;
}

/* The length of step I's record. */
static unsigned
step_len(unsigned series, unsigned i)
{
	const struct rec *g = rec_find(tag_of(series, i, 0));
	return g ? g->n : 0;
}

static void
run_series(struct step *s, unsigned n, unsigned series)
{
	log_reset();
	run_steps(s, n, series, true);
	env_sync();
	CHECK(!log_overflow, "series %u: log full", series);
}

/* ---- 1. Random chains sharing suffixes ---- */


static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t
rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

enum { CHAIN_MAX = 24, RANDOM_STEPS = 300 };

static char chains[RANDOM_STEPS][CHAIN_MAX + 1];

/* Chains: a quarter repeat the last one; the others keep a prefix of
   random length of it (the stack's outer frames) and go on at random. */
static void
chains_make(unsigned n)
{
	static const char kinds[] = "FNVC";
	chains[0][0] = 0;
	for (unsigned i = 1; i < n; i++) {
		const char *prev = chains[i - 1];
		size_t len = strlen(prev);
		if (rnd(4) == 0) {
			memcpy(chains[i], prev, len + 1);
			continue;
		}
		size_t keep = rnd((uint32_t)len + 1);
		size_t to = keep + rnd((uint32_t)(CHAIN_MAX - keep) + 1);
		memcpy(chains[i], prev, keep);
		for (size_t k = keep; k < to; k++)
			chains[i][k] = kinds[rnd(4)];
		chains[i][to] = 0;
	}
}

/* Series SERIES of the random chains with memo MODE; repeats (a chain
   like the last) must hit at their first frame and take every other. */
static void
random_series(enum ring_memo_mode mode, unsigned series)
{
	static struct step s[RANDOM_STEPS];
	for (unsigned i = 0; i < RANDOM_STEPS; i++)
		s[i] = (struct step){ .kinds = chains[i], .walk_max = WALK_MAX,
				      .mode = mode };
	run_series(s, RANDOM_STEPS, series);
	unsigned bad = steps_check(s, RANDOM_STEPS, series);
	unsigned repeats = 0, repeat_hits = 0, shared = 0, shared_hits = 0;
	uint64_t hits = 0, reused = 0, differed = 0, walks = 0;
	for (unsigned i = 0; i < RANDOM_STEPS; i++) {
		walks += s[i].d.walks;
		hits += s[i].d.hits;
		reused += s[i].d.reused;
		differed += s[i].d.differed;
		if (i && !strcmp(chains[i], chains[i - 1])) {
			repeats++;
			repeat_hits += s[i].d.hits == 1 &&
				       s[i].d.reused == step_len(series, i) - 1;
		} else if (i && chains[i][0] && chains[i][0] == chains[i - 1][0]) {
			shared++;
			shared_hits += s[i].d.hits == 1;
		}
	}
	CHECK(bad == 0, "random chains, mode %d: %u of %u wrong", (int)mode,
	      bad, RANDOM_STEPS);
	CHECK(walks == RANDOM_STEPS, "every call walked with its memo "
	      "(%llu of %u)", (unsigned long long)walks, RANDOM_STEPS);
	CHECK(differed == 0, "mode %d: %llu hits differed from the full walk",
	      (int)mode, (unsigned long long)differed);
	/* A repeat starts in the very state of the last walk, every word
	   the same: it hits at once. */
	CHECK(repeats > 20 && repeat_hits == repeats,
	      "mode %d: %u of %u repeats took the whole memo", (int)mode,
	      repeat_hits, repeats);
	CHECK(hits >= repeats, "mode %d: %llu hits, %u repeats", (int)mode,
	      (unsigned long long)hits, repeats);
	fprintf(stderr, "random chains, mode %d: %llu hits (%u repeats, "
		"%u of %u sharing a frame hit), %llu frames reused\n",
		(int)mode, (unsigned long long)hits, repeats, shared_hits,
		shared, (unsigned long long)reused);
}

static void
test_random(void)
{
	chains_make(RANDOM_STEPS);
	random_series(RING_MEMO_ON, 1);
	random_series(RING_MEMO_CHECK, 2);
}

/* ---- 2. A word of a shared frame changed ---- */

/* KINDS with memo MODE from one call site here, then twice from another:
   only this frame's return address differs. D gets each call's
   counters. */
__attribute__((noinline)) static void
two_sites(const char *kinds, enum ring_memo_mode mode, uint64_t tag,
	  struct counts d[3])
{
	KEEP_FRAME_POINTER();
	struct counts c = counts_now();
	call_chain(kinds, TRUTH_MAX, mode, tag);
	d[0] = counts_since(c);
	for (volatile int k = 0; k < rounds; k++) {
		c = counts_now();
		call_chain(kinds, TRUTH_MAX, mode, tag + 1 + (uint64_t)k);
		d[1 + k] = counts_since(c);
	}
	call_tag = 0; /* no tail call: this frame stays */
}

static void
test_word_changed(void)
{
	struct counts d[2][3];
	log_reset();
	for (volatile int r = 0; r < rounds; r++)
		two_sites("FNVC", r ? RING_MEMO_OFF : RING_MEMO_ON,
			  tag_of(3, (unsigned)r * 4, 0), d[r]);
	env_sync();
	const struct rec *g[3], *t[3];
	for (unsigned k = 0; k < 3; k++) {
		g[k] = rec_find(tag_of(3, 0, 0) + k);
		t[k] = rec_find(tag_of(3, 4, 0) + k);
		if (!g[k] || !t[k]) {
			CHECK(0, "word changed: record %u missing", k);
			return;
		}
		bool ok = g[k]->walked && g[k]->n == t[k]->n &&
			  !memcmp(g[k]->pcs, t[k]->pcs,
				  g[k]->n * sizeof(*g[k]->pcs));
		CHECK(ok, "word changed: call %u as without the memo", k);
		if (!ok) {
			show("with the memo", g[k]);
			show("without", t[k]);
		}
	}
	/* The two sites' stacks differ in one word: the return address
	   into two_sites, at address DIFF. */
	unsigned n = t[0]->n, diff = n, ndiff = 0;
	for (unsigned i = 0; t[1]->n == n && i < n; i++)
		if (t[0]->pcs[i] != t[1]->pcs[i]) {
			diff = i;
			ndiff++;
		}
	CHECK(t[1]->n == n && ndiff == 1 && diff > 0,
	      "the sites differ in one address (%u at %u)", ndiff, diff);
	/* Frames past the changed one may come from the memo; none at or
	   inside it. */
	CHECK(d[0][1].walks == 1 && d[0][1].reused + diff + 2 <= n,
	      "the other site: %llu frames of %u taken, the change at %u",
	      (unsigned long long)d[0][1].reused, n, diff);
	CHECK(d[0][2].hits == 1 && d[0][2].reused == n - 1,
	      "that site again: the whole memo (%llu hits, %llu frames)",
	      (unsigned long long)d[0][2].hits,
	      (unsigned long long)d[0][2].reused);
	fprintf(stderr, "word changed: %llu hits, %llu frames taken of %u "
		"(the change at %u)\n", (unsigned long long)d[0][1].hits,
		(unsigned long long)d[0][1].reused, n, diff);
}

/* ---- 3, 4. The rule table emptied; another stack top ---- */

static void
rules_reset(void)
{
	env_rules_reset();
}

/* The entry set again with a stack top a little lower: the tracer's way
   (the memo emptied with it). */
static void
top_reset(void)
{
	env_thread_set(env_self.stack_lo, env_self.stack_hi - 16);
}

/* The entry's stack top changed in place, the memo left as it is: only
   its own stack top tells it from the walk's. */
static void
top_poke(void)
{
	struct ring_thread *t = ring_thread_lookup(env.h, env_tcb());
	t->stack_hi = env_self.stack_hi - 8;
}

static void
top_restore(void)
{
	env_thread_set(env_self.stack_lo, env_self.stack_hi);
}

/* KINDS twice, BEFORE, twice more: the third call walks every frame
   (though the second's memo is the same stack), the fourth hits. */
static void
drop_case(const char *what, void (*before)(void), unsigned series)
{
	struct step s[4];
	for (unsigned i = 0; i < 4; i++)
		s[i] = (struct step){ .kinds = "NVCF", .walk_max = WALK_MAX,
				      .mode = RING_MEMO_ON,
				      .before = i == 2 ? before : NULL };
	run_series(s, 4, series);
	CHECK(steps_check(s, 4, series) == 0, "%s: addresses", what);
	unsigned n = step_len(series, 1);
	CHECK(s[1].d.hits == 1 && s[1].d.reused == n - 1,
	      "%s: the second call takes the whole memo (%llu, %llu)", what,
	      (unsigned long long)s[1].d.hits,
	      (unsigned long long)s[1].d.reused);
	CHECK(s[2].d.walks == 1 && s[2].d.hits == 0,
	      "%s: the memo not used (%llu walks, %llu hits)", what,
	      (unsigned long long)s[2].d.walks,
	      (unsigned long long)s[2].d.hits);
	CHECK(s[3].d.hits == 1 && s[3].d.reused == n - 1,
	      "%s: used again after (%llu, %llu)", what,
	      (unsigned long long)s[3].d.hits,
	      (unsigned long long)s[3].d.reused);
}

static void
test_drops(void)
{
	drop_case("rules emptied", rules_reset, 4);
	drop_case("entry set again", top_reset, 5);
	top_restore();
	drop_case("stack top changed", top_poke, 6);
	top_restore();
}

/* ---- 5. Capped walks ---- */

/* Chains around the cap K: deeper, shallower, sharing outer frames, each
   twice; the memo of a capped walk gives nothing past its last frame. */
static void
test_capped(void)
{
	static const char *const mix[] = {
		"FNVCFNVCFN", "FN",   "FNVCFNVCFN", "FNVCFNVCFN", "",
		"",           "FNV",  "FNVCFNVCFNVC", "FNV", "FNVCFN",
		"FNVCFNCCC",  "FNVCFNC", "FNVCFNNVF", "FNVCFNC", "FNVCFNVVV",
	};
	enum { N = sizeof(mix) / sizeof(mix[0]) };
	static const unsigned caps[] = { 1, 2, 3, 5, 8, 11, 14, 17, 23, 30 };
	unsigned bad = 0;
	uint64_t hits = 0;
	for (unsigned c = 0; c < sizeof(caps) / sizeof(caps[0]); c++) {
		struct step s[N];
		for (unsigned i = 0; i < N; i++)
			s[i] = (struct step){ .kinds = mix[i],
					      .walk_max = caps[c],
					      .mode = RING_MEMO_ON };
		run_series(s, N, 10 + c);
		bad += steps_check(s, N, 10 + c);
		for (unsigned i = 0; i < N; i++)
			hits += s[i].d.hits;
		/* A capped repeat hits (its memo the last walk's, or an
		   older one the last walk took a part of). */
		CHECK(s[3].d.hits == 1 && s[3].d.reused <= caps[c] - 1,
		      "cap %u: a capped repeat took %llu frames", caps[c],
		      (unsigned long long)s[3].d.reused);
	}
	CHECK(bad == 0, "capped walks: %u wrong", bad);
	fprintf(stderr, "capped walks: %llu hits\n", (unsigned long long)hits);
}

static void
memo_forget(void)
{
	my_memo()->n = 0;
}

/* A capped memo of P + X (its last frames in P) and a walk of P + Y,
   Y shorter than X: the walk meets the memo's frames in P, but the memo
   knows only K - 1 - j frames past there, fewer than the walk needs; with
   X' as long as X instead, the same frames are enough. */
static void
test_capped_guard(void)
{
	enum { K = 14 };
	struct step s[4] = {
		{ .kinds = "FNVCFNCCC", .before = memo_forget },
		{ .kinds = "FNVCFNC" },
		{ .kinds = "FNVCFNCCC", .before = memo_forget },
		{ .kinds = "FNVCFNNVF" },
	};
	for (unsigned i = 0; i < 4; i++) {
		s[i].walk_max = K;
		s[i].mode = RING_MEMO_ON;
	}
	run_series(s, 4, 24);
	CHECK(steps_check(s, 4, 24) == 0, "capped memo: addresses");
	CHECK(step_len(24, 0) == K && step_len(24, 1) == K,
	      "both capped (%u, %u)", step_len(24, 0), step_len(24, 1));
	CHECK(s[1].d.walks == 1 && s[1].d.hits == 0,
	      "a capped memo too short for the walk: not used (%llu)",
	      (unsigned long long)s[1].d.hits);
	/* Its frames from P's last function out: 3 + 2 * |X| in, so the
	   memo has K - 1 - 9 frames past it. */
	CHECK(s[3].d.hits == 1 && s[3].d.reused == K - 10,
	      "long enough: used (%llu hits, %llu frames)",
	      (unsigned long long)s[3].d.hits,
	      (unsigned long long)s[3].d.reused);
}

/* ---- 6. Signal handlers ---- */

enum handler_what { H_ALLOC, H_JUMP };
static volatile int handler_what;
static volatile int handler_entered;
static sigjmp_buf handler_jump;
static pthread_t walking_thread;
static volatile int signal_at_rule;

#define HANDLER_CHAIN "FNVC"
#define HANDLER_TAG (0x77ULL << 24)

static void
on_usr1(int sig)
{
	(void)sig;
	__atomic_store_n(&handler_entered, 1, __ATOMIC_RELEASE);
	uint64_t tag = call_tag;
	chain_only(HANDLER_CHAIN, HANDLER_TAG);
	call_tag = tag;
	if (handler_what == H_JUMP)
		siglongjmp(handler_jump, 1);
}

/* env.on_rule: at the first question after signal_at_rule is set, the
   walking thread gets SIGUSR1 while it waits for the answer in its walk;
   answered once the handler runs. */
static bool
rule_signalling(uint64_t pc, struct ring_rule *out)
{
	if (__atomic_exchange_n(&signal_at_rule, 0, __ATOMIC_ACQ_REL)) {
		handler_entered = 0;
		pthread_kill(walking_thread, SIGUSR1);
		uint64_t deadline = env_now_ns() + 10000000000ULL;
		while (!__atomic_load_n(&handler_entered, __ATOMIC_ACQUIRE) &&
		       env_now_ns() < deadline)
			usleep(100);
	}
	return selfrule_get(pc, out);
}

/* The handler's record: walked, exactly the first K addresses its chain
   gives when called plainly (tag TRUTH_TAG; all K inside the chain). */
static void
handler_right(const char *what, uint64_t truth_tag, unsigned k)
{
	const struct rec *g = rec_find(HANDLER_TAG);
	const struct rec *t = rec_find(truth_tag);
	bool ok = g && t && g->walked && g->n == k && t->n >= k &&
		  !memcmp(g->pcs, t->pcs, k * sizeof(*g->pcs));
	CHECK(ok, "%s: the handler's walk", what);
	if (!ok && g && t) {
		show("in the handler", g);
		show("plainly", t);
	}
}

/* The handler's chain called plainly, memo off, at most K deep. */
static void
handler_truth(unsigned k, uint64_t tag)
{
	tracer_ring_walk_set(env.r, k);
	tracer_ring_memo_set(env.r, RING_MEMO_OFF);
	chain_only(HANDLER_CHAIN, tag);
}

/* Walks K deep: the handler's stops before its signal frame, which would
   have it copied. */
enum { SIG_K = 6 };

static void
arm_rule_signal(void)
{
	env_rules_reset();
	__atomic_store_n(&signal_at_rule, 1, __ATOMIC_RELEASE);
}

/* The same without emptying the table: a rule the walk lacks asks. */
static void
arm_rule_signal_only(void)
{
	__atomic_store_n(&signal_at_rule, 1, __ATOMIC_RELEASE);
}

static void
arm_raise(void)
{
	raise_in_malloc = 1;
}

static void
busy_high(void)
{
	my_memo()->busy = env_self.stack_hi - 8;
}

static void
busy_low(void)
{
	my_memo()->busy = env_self.stack_lo + 8;
}

/* A walk inside another's: raised in the allocator (before the outer
   walk: both use the memo), or at a question inside the outer walk (the
   nested one must not); and the busy mark set by hand. */
static void
test_nested(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigaction(SIGUSR1, &sa, &old);
	walking_thread = pthread_self();
	handler_what = H_ALLOC;
	env.on_rule = rule_signalling;

	static const struct {
		const char *what;
		void (*arm)(void);
		unsigned walks; /* the armed call's memo walks */
	} how[] = {
		{ "raised in the allocator", arm_raise, 2 },
		{ "signalled inside the walk", arm_rule_signal, 1 },
	};
	for (unsigned c = 0; c < 2; c++) {
		struct step s[4];
		for (unsigned i = 0; i < 4; i++)
			s[i] = (struct step){ .kinds = "FNVCFN",
					      .walk_max = SIG_K,
					      .mode = RING_MEMO_ON,
					      .before = i == 1 ? how[c].arm
							       : NULL };
		unsigned series = 20 + c;
		log_reset();
		handler_truth(SIG_K, HANDLER_TAG + 1);
		run_steps(s, 4, series, true);
		env_sync();
		CHECK(steps_check(s, 4, series) == 0, "%s: addresses",
		      how[c].what);
		handler_right(how[c].what, HANDLER_TAG + 1, SIG_K);
		CHECK(s[1].d.walks == how[c].walks,
		      "%s: %llu walks with the memo, not %u", how[c].what,
		      (unsigned long long)s[1].d.walks, how[c].walks);
		CHECK(s[3].d.hits == 1 && s[3].d.reused == SIG_K - 1,
		      "%s: the memo used after (%llu, %llu)", how[c].what,
		      (unsigned long long)s[3].d.hits,
		      (unsigned long long)s[3].d.reused);
	}
	env.on_rule = selfrule_get;
	sigaction(SIGUSR1, &old, NULL);

	/* Busy above this walk's entry: a walk in progress further out,
	   left alone; below: left by a walk that never ended, taken over. */
	struct step s[5];
	for (unsigned i = 0; i < 5; i++)
		s[i] = (struct step){ .kinds = "VVNC", .walk_max = WALK_MAX,
				      .mode = RING_MEMO_ON };
	s[2].before = busy_high;
	s[3].before = busy_low;
	run_series(s, 5, 22);
	CHECK(steps_check(s, 5, 22) == 0, "busy by hand: addresses");
	unsigned n = step_len(22, 1);
	CHECK(s[1].d.hits == 1 && s[2].d.walks == 0,
	      "a memo busy further out is not used (%llu walks)",
	      (unsigned long long)s[2].d.walks);
	CHECK(s[3].d.walks == 1 && s[3].d.hits == 0,
	      "a memo left busy below is dropped and used (%llu, %llu)",
	      (unsigned long long)s[3].d.walks,
	      (unsigned long long)s[3].d.hits);
	CHECK(s[4].d.hits == 1 && s[4].d.reused == n - 1 && !my_memo()->busy,
	      "then used whole again (%llu)",
	      (unsigned long long)s[4].d.reused);
}

/* Round 1 of 4 jumps out of its walk (the handler, at a question inside
   it, siglongjmps back here); the others walk on from the same site. */
__attribute__((noinline)) static void
jump_rounds(const char *kinds, struct counts d[4], volatile int *jumped)
{
	KEEP_FRAME_POINTER();
	for (volatile int r = 0; r < 4; r++) {
		struct counts c = counts_now();
		if (r == 1) {
			arm_rule_signal();
			if (sigsetjmp(handler_jump, 1)) {
				*jumped = 1;
				d[r] = counts_since(c);
				continue;
			}
		}
		volatile unsigned max[2] = { SIG_K, TRUTH_MAX };
		volatile enum ring_memo_mode mode[2] = { RING_MEMO_ON,
							 RING_MEMO_OFF };
		for (volatile int twin = 0; twin < rounds; twin++)
			call_chain(kinds, max[twin], mode[twin],
				   tag_of(23, (unsigned)r, (unsigned)twin));
		d[r] = counts_since(c);
	}
}

static void
test_jump_out(void)
{
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigaction(SIGUSR1, &sa, &old);
	walking_thread = pthread_self();
	handler_what = H_JUMP;
	env.on_rule = rule_signalling;
	struct counts d[4];
	volatile int jumped = 0;
	log_reset();
	handler_truth(SIG_K, HANDLER_TAG + 1);
	jump_rounds("NFCV", d, &jumped);
	env_sync();
	env.on_rule = selfrule_get;
	sigaction(SIGUSR1, &old, NULL);
	CHECK(jumped, "the handler jumped out");
	handler_right("jumped out", HANDLER_TAG + 1, SIG_K);
	unsigned len, bad = 0;
	for (unsigned r = 0; r < 4; r++)
		if (r != 1)
			bad += !step_right(23, r, SIG_K, "NFCV", &len);
	CHECK(bad == 0, "jumped out: addresses");
	CHECK(!rec_find(tag_of(23, 1, 0)), "the abandoned call: no record");
	CHECK(d[1].walks == 0, "the abandoned walk: not counted");
	CHECK(d[2].walks == 1 && d[2].hits == 0,
	      "the next walk takes the abandoned memo over (%llu, %llu)",
	      (unsigned long long)d[2].walks, (unsigned long long)d[2].hits);
	CHECK(d[3].hits == 1 && d[3].reused == SIG_K - 1,
	      "then uses it (%llu, %llu)", (unsigned long long)d[3].hits,
	      (unsigned long long)d[3].reused);
}

/* ---- Signals at random points ---- */

/* SIGALRM every 50 us over random chains: wherever it lands (in a walk,
   in the memo's store, in the ring), its handler allocates through the
   trampoline; every call's record must still be its twin's, and each of
   the handler's must start with its chain's addresses. */
static void
test_alarm(void)
{
	enum { N = RANDOM_STEPS };
	/* Process-directed: the consumer thread must not take it (it has
	   no entry; its stub would ask itself). */
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	env_consumer_stop(true);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	env_consumer_start(0);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	struct sigaction sa = { .sa_handler = on_usr1 }, old;
	sigaction(SIGALRM, &sa, &old);
	handler_what = H_ALLOC;

	static struct step s[N];
	chains_make(N);
	for (unsigned i = 0; i < N; i++)
		s[i] = (struct step){ .kinds = chains[i], .walk_max = WALK_MAX,
				      .mode = RING_MEMO_ON };
	log_reset();
	handler_truth(TRUTH_MAX, HANDLER_TAG + 1);
	/* Every rule the handler's walks need (its signal frame's says to
	   copy) known before the timer runs: a handler that asks a question
	   while the code it interrupted holds a record reserved waits for a
	   consumer stopped at that record, and with signals coming faster
	   than RING_RULE_WAIT_NS the interrupted stub never commits it. */
	raise(SIGALRM);
	env_sync();
	uint64_t misses = env.h->stats.rule_misses;
	raise(SIGALRM);
	env_sync();
	CHECK(env.h->stats.rule_misses == misses,
	      "alarms: the handler's rules known before the timer");
	struct itimerval on = { .it_interval = { 0, 50 },
				.it_value = { 0, 50 } },
			 off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_REAL, &on, NULL);
	run_steps(s, N, 25, true);
	setitimer(ITIMER_REAL, &off, NULL);
	env_sync();
	sigaction(SIGALRM, &old, NULL);

	unsigned bad = steps_check(s, N, 25), handled = 0, hbad = 0;
	uint64_t hits = 0;
	for (unsigned i = 0; i < N; i++)
		hits += s[i].d.hits;
	const struct rec *t = rec_find(HANDLER_TAG + 1);
	/* The handler's chain: the allocator, the leaf, then two frames a
	   letter and walk_next's last. */
	unsigned inside = 3 + 2 * (unsigned)strlen(HANDLER_CHAIN);
	for (unsigned i = 0; t && i < log_n; i++) {
		const struct rec *g = &log_v[i];
		if (g->tag != HANDLER_TAG)
			continue;
		handled++;
		if (g->n < inside ||
		    memcmp(g->pcs, t->pcs, inside * sizeof(*g->pcs))) {
			if (!hbad++) {
				show("in the handler", g);
				show("plainly", t);
			}
		}
	}
	CHECK(!log_overflow && bad == 0, "alarms: %u calls wrong", bad);
	CHECK(t && handled > 0 && hbad == 0,
	      "alarms: %u of %u handler records wrong", hbad, handled);
	CHECK(hits > 0, "alarms: the memo used (%llu hits)",
	      (unsigned long long)hits);
	fprintf(stderr, "alarms: %u handler records, %llu hits\n", handled,
		(unsigned long long)hits);
}

/* ---- A handler on an alternate stack inside the thread's stack ----

   A sigaltstack that is an array of an outer frame lies inside the
   thread's stack bounds, above any walk in progress: a handler run there
   allocates from an entry rsp above the walk it interrupts, the very
   sign of a walk left half done (ring.h, BUSY). Here the handler comes
   while the walk waits for a rule, its memo (a walk that took nothing
   from an older one: every frame in the inner part) fresh. The walk
   must end right, and the memo must still be usable after. */

static void
rules_reset_memo_forget(void)
{
	env_rules_reset();
	my_memo()->n = 0;
}

__attribute__((noinline)) static void
altstack_case(void)
{
	struct step s[4] = {
		{ .kinds = "F", .before = rules_reset_memo_forget },
		{ .kinds = "N", .before = arm_rule_signal_only },
		{ .kinds = "N" },
		{ .kinds = "N" },
	};
	for (unsigned i = 0; i < 4; i++) {
		s[i].walk_max = WALK_MAX;
		s[i].mode = RING_MEMO_ON;
	}
	log_reset();
	run_steps(s, 4, 50, true);
	env_sync();
	CHECK(steps_check(s, 4, 50) == 0, "altstack: addresses");
	const struct rec *h = rec_find(HANDLER_TAG);
	CHECK(h != NULL, "altstack: the handler allocated");
	unsigned n = step_len(50, 3);
	CHECK(s[3].d.hits == 1 && s[3].d.reused == n - 1,
	      "altstack: the memo used after (%llu, %llu)",
	      (unsigned long long)s[3].d.hits,
	      (unsigned long long)s[3].d.reused);
}

static void
test_altstack(void)
{
	/* The alternate stack: an array of this frame, above the walks. */
	static const size_t alt_size = 256 * 1024;
	char alt[alt_size];
	stack_t ss = { .ss_sp = alt, .ss_size = alt_size }, old_ss;
	sigaltstack(&ss, &old_ss);
	struct sigaction sa = { .sa_handler = on_usr1, .sa_flags = SA_ONSTACK },
			 old;
	sigaction(SIGUSR1, &sa, &old);
	walking_thread = pthread_self();
	handler_what = H_ALLOC;
	env.on_rule = rule_signalling;
	altstack_case();
	env.on_rule = selfrule_get;
	sigaction(SIGUSR1, &old, NULL);
	sigaltstack(&old_ss, NULL);
}

/* ---- 7. Threads ---- */

enum { THREADS = 3, THREAD_STEPS = 300 };

struct walker {
	pthread_t th;
	unsigned series;
	bool has_memo;
	unsigned repeats;
	struct step s[THREAD_STEPS];
	char chains[THREAD_STEPS][CHAIN_MAX + 1];
};

static volatile int walkers_go;

static void *
walker_main(void *arg)
{
	struct walker *w = arg;
	env_thread_init();
	w->has_memo = my_memo() != NULL;
	while (!__atomic_load_n(&walkers_go, __ATOMIC_ACQUIRE))
		;
	run_steps(w->s, THREAD_STEPS, w->series, false);
	return NULL;
}

static void
test_threads(void)
{
	static struct walker w[THREADS];
	log_reset();
	/* Every walk checks, twins too: a twin is the full walk whatever its
	   memo gave (CHECK keeps the full walk), and the memo is every
	   call's. */
	tracer_ring_memo_set(env.r, RING_MEMO_CHECK);
	twin_mode = RING_MEMO_CHECK;
	twin_max = WALK_MAX;
	struct counts c = counts_now();
	walkers_go = 0;
	for (unsigned k = 0; k < THREADS; k++) {
		w[k].series = 30 + k;
		w[k].repeats = 0;
		chains_make(THREAD_STEPS);
		for (unsigned i = 0; i < THREAD_STEPS; i++) {
			memcpy(w[k].chains[i], chains[i], sizeof(chains[i]));
			w[k].s[i] = (struct step){ .kinds = w[k].chains[i],
						   .walk_max = WALK_MAX,
						   .mode = RING_MEMO_CHECK };
			w[k].repeats += i && !strcmp(chains[i], chains[i - 1]);
		}
		if (pthread_create(&w[k].th, NULL, walker_main, &w[k])) {
			fprintf(stderr, "pthread_create failed\n");
			exit(EXIT_HARNESS);
		}
	}
	__atomic_store_n(&walkers_go, 1, __ATOMIC_RELEASE);
	for (unsigned k = 0; k < THREADS; k++)
		pthread_join(w[k].th, NULL);
	env_sync();
	twin_mode = RING_MEMO_OFF;
	twin_max = TRUTH_MAX;
	struct counts d = counts_since(c);
	unsigned bad = 0, repeats = 0, memos = 0;
	for (unsigned k = 0; k < THREADS; k++) {
		bad += steps_check(w[k].s, THREAD_STEPS, w[k].series);
		repeats += w[k].has_memo ? w[k].repeats : 0;
		memos += w[k].has_memo;
	}
	CHECK(!log_overflow && bad == 0, "threads: %u wrong", bad);
	CHECK(d.differed == 0, "threads: %llu hits differed",
	      (unsigned long long)d.differed);
	CHECK(d.walks == 2u * THREAD_STEPS * memos && memos > 0,
	      "threads: %llu walks with a memo, of %u", (unsigned long long)d.walks,
	      2u * THREAD_STEPS * memos);
	CHECK(d.hits >= repeats && repeats > 0,
	      "threads: %llu hits, %u repeats", (unsigned long long)d.hits,
	      repeats);
	fprintf(stderr, "threads: %llu walks, %llu hits, %llu frames "
		"reused\n", (unsigned long long)d.walks,
		(unsigned long long)d.hits, (unsigned long long)d.reused);
}

/* ---- 8. Stacks deeper than the memo ---- */

static char deep[4][200];

/* A chain of LEN letters. */
static const char *
deep_chain(unsigned i, unsigned len)
{
	static const char kinds[] = "FNVC";
	for (unsigned k = 0; k < len; k++)
		deep[i][k] = kinds[(k * 7 + i) % 4];
	deep[i][len] = 0;
	return deep[i];
}

/* The largest memo seen between the steps, and whether its frames ever
   stood past its room. */
static unsigned room_seen;

static void
room_note(void)
{
	struct ring_memo *m = my_memo();
	if (m->n > room_seen)
		room_seen = m->n;
	if (m->outer > m->n && room_seen <= RING_MEMO_FRAMES)
		room_seen = RING_MEMO_FRAMES + 1;
}

static void
test_deep(void)
{
	enum { MAX = 200 };
	/* How many frames an empty chain has: each letter adds two. */
	struct step s0 = { .kinds = "", .walk_max = MAX, .mode = RING_MEMO_ON };
	run_series(&s0, 1, 40);
	unsigned base = step_len(40, 0);
	/* Walks of 127 or 128 frames, of 129 or 130, of over 160, deeper
	   than MAX; and walks capped at the memo's room and one past it. */
	const char *at_room = deep_chain(0, (RING_MEMO_FRAMES - base) / 2);
	const char *past_room =
		deep_chain(1, (RING_MEMO_FRAMES + 2 - base) / 2);
	const char *deeper = deep_chain(2, 80);
	const char *capped = deep_chain(3, 120);
	const struct {
		const char *kinds;
		unsigned max;
	} seq[] = {
		{ "FN", MAX },           { at_room, MAX },
		{ at_room, MAX },        { past_room, MAX },
		{ past_room, MAX },      { "FN", MAX },
		{ deeper, MAX },         { deeper, MAX },
		{ capped, MAX },         { capped, MAX },
		{ "FN", MAX },           { "FN", MAX },
		{ at_room, MAX },        { at_room, MAX },
		{ capped, RING_MEMO_FRAMES },
		{ capped, RING_MEMO_FRAMES },
		{ capped, RING_MEMO_FRAMES + 1 },
		{ capped, RING_MEMO_FRAMES + 1 },
		{ "FN", MAX },
	};
	enum { N = sizeof(seq) / sizeof(seq[0]) };
	struct step s[N];
	for (unsigned i = 0; i < N; i++)
		s[i] = (struct step){ .kinds = seq[i].kinds,
				      .walk_max = seq[i].max,
				      .mode = RING_MEMO_ON,
				      .before = room_note };
	struct ring_memo *m = my_memo();
	struct ring_memo *memos =
		(struct ring_memo *)((uint8_t *)env.h + env.h->memo_off);
	struct ring_memo *next =
		m && m + 1 < memos + env.h->memo_slots ? m + 1 : NULL;
	static struct ring_memo next_before;
	if (next)
		memcpy(&next_before, next, sizeof(next_before));
	room_seen = 0;
	run_series(s, N, 41);
	room_note();
	CHECK(steps_check(s, N, 41) == 0, "deep stacks: addresses");
	unsigned n_at = step_len(41, 1), n_past = step_len(41, 3);
	CHECK(n_at <= RING_MEMO_FRAMES && n_past > RING_MEMO_FRAMES,
	      "walks of %u and %u frames about the memo's %u", n_at, n_past,
	      RING_MEMO_FRAMES);
	CHECK(step_len(41, 8) == MAX, "capped at %u (%u)", MAX,
	      step_len(41, 8));
	CHECK(s[2].d.hits == 1 && s[2].d.reused == n_at - 1,
	      "a walk that fills the memo is kept whole (%llu)",
	      (unsigned long long)s[2].d.reused);
	/* Deeper walks are not kept: the one after takes no frame of
	   theirs (the "FN" memo's outer frames at most). */
	unsigned n_fn = step_len(41, 0);
	for (unsigned i = 4; i < 10; i += 1 + (i == 4))
		CHECK(s[i].d.reused < n_fn,
		      "step %u: %llu frames from a memo too small to hold "
		      "the last walk", i, (unsigned long long)s[i].d.reused);
	CHECK(s[11].d.hits == 1 && s[13].d.hits == 1,
	      "kept again once walks fit");
	/* Capped at the room: kept whole; one past: not kept. */
	CHECK(s[15].d.hits == 1 && s[15].d.reused == RING_MEMO_FRAMES - 1,
	      "a capped walk that fills the memo is kept (%llu)",
	      (unsigned long long)s[15].d.reused);
	CHECK(s[17].d.reused < RING_MEMO_FRAMES - 1,
	      "a capped walk past the room is not (%llu)",
	      (unsigned long long)s[17].d.reused);
	CHECK(room_seen == RING_MEMO_FRAMES,
	      "the memo filled its room, never more (%u frames)", room_seen);
	CHECK(!next || !memcmp(&next_before, next, sizeof(next_before)),
	      "the next memo untouched");
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
	log_v = calloc(LOG_CAP, sizeof(*log_v));
	if (!log_v)
		return EXIT_HARNESS;
	env_thread_init();
	env_fn(0, HT_FN_MALLOC, fake_malloc, 0, 0);
	env.on_rule = selfrule_get;
	env.on_item = log_item;
	env_consumer_start(0);

	/* inline-memo-altstack: that case alone (it crashed the stub). */
	if (getenv("TEST_MEMO_ALTSTACK")) {
		test_altstack();
	} else {
		test_random();
		test_word_changed();
		test_drops();
		test_capped();
		test_capped_guard();
		test_nested();
		test_jump_out();
		test_alarm();
		test_deep();
		test_threads();
	}

	env_consumer_stop(true);
	env_fini();
	free(log_v);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
