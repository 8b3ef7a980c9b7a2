/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the inline-stub tests share: the blob and its trampolines mapped
   executable in this very process (no ptrace), a stand-in for the tracer
   that fills thread entries, drains the ring and answers the stubs'
   questions (NOTIFY, THREAD, RULE records) as tracer/inline/inline.c does, a
   consumer thread to run it, a collector for drained records, and an
   assembly helper that calls through a trampoline with chosen
   callee-saved registers and stack contents.

   The stub never stops for the tracer (ring.h, "The stub never stops for
   the tracer"): a thread that asks a question or waits for room waits
   for another thread, the consumer's, so tests that make stubs wait run
   env_consumer_start; the others drain from the calling thread. */
#ifndef HT_TESTS_INLINE_STUBENV_H
#define HT_TESTS_INLINE_STUBENV_H

#include <stdbool.h>
#include <stdint.h>

#include "tracer/inline/consumer.h"

/* The test's stand-in for the tracer. */
struct env {
	struct tracer_ring *r;
	struct ring_header *h;
	uint8_t *code;          /* blob, then one trampoline per descriptor */
	uint64_t code_len;
	uint64_t tramp[RING_MAX_FNS];
	/* The tracer's rules (its sink's stub_rule): the rule for lookup pc
	   PC into *OUT (RING_RULE_COPY for a frame the stubs cannot follow),
	   or false when there is none. NULL: none, so RULE questions are
	   answered without one and copies teach nothing. Called by the
	   drainer, the tables' one writer. */
	bool (*on_rule)(uint64_t pc, struct ring_rule *out);
	/* Leave RULE questions unanswered, as a tracer too busy to answer
	   within RING_RULE_WAIT_NS: the stubs copy, and the copies teach
	   the rules all the same. */
	bool rules_silent;
	/* Leave NOTIFY and THREAD questions unanswered. */
	bool notify_silent;
	/* Answer NOTIFY and THREAD questions this late (the drain sleeps). */
	uint64_t answer_delay_ns;
	/* Each record goes here once the env has done its part; NULL: the
	   collector (coll). */
	tracer_ring_item_fn on_item;
	void *item_arg;
	/* What the env did, by the drainer. */
	uint64_t answered[RING_REC_RULE + 1]; /* questions, by record kind */
	uint64_t ahead_rules;   /* rules published answering RULE questions */
	uint64_t copy_rules;    /* rules published unwinding RULE copies */
};

extern struct env env;

/* This thread's identity as the tracer would read it from /proc. */
struct env_self {
	uint32_t tid;
	uint64_t tcb;
	uint64_t stack_lo, stack_hi;
};
extern __thread struct env_self env_self;

/* Map the blob for a ring of RING_SIZE bytes copying STACK_COPY stack
   bytes (walking off: see tracer_ring_walk_set) and size the collector
   for CAP records. The calling thread is the ring's consumer for the
   stubs (ring_recording) until env_fini. Returns 0, or -errno. */
int env_init(uint64_t ring_size, uint32_t stack_copy, uint64_t cap);

/* Undo env_init (the consumer thread must be stopped). */
void env_fini(void);

/* Make the calling thread known to the "tracer" and give it its entry,
   as the tracer does before a thread runs (attach, first stops). */
void env_thread_init(void);

/* Make it known only: it has no entry until a question of its (THREAD,
   or a NOTIFY, as after an exec) brings one. */
void env_thread_describe(void);

/* Set the calling thread's entry with stack bounds [LO, HI). */
void env_thread_set(uint64_t lo, uint64_t hi);

/* The calling thread's thread pointer (fs:0), the table's key. */
uint64_t env_tcb(void);

/* Empty the rule table, as the tables' one writer. */
void env_rules_reset(void);

/* Describe descriptor IDX: FN implemented by ORIG (also its entry), whose
   "object" is [LO, HI). */
void env_fn(unsigned idx, enum ht_alloc_fn fn, const void *orig, uint64_t lo,
	    uint64_t hi);

/* Describe hook IDX of class CLS (RING_CLASS_NOTIFY, RING_CLASS_EXIT)
   implemented by ORIG (also its entry). */
void env_hook(unsigned idx, enum ring_class cls, const void *orig);

/* A drained record, as far as the tests look. */
struct rec_copy {
	uint16_t kind, fn;
	uint32_t tid;
	uint32_t stack_len;
	uint8_t copied;         /* enum ring_copy; NONE: no REGS, no stack */
	uint16_t npcs;
	uint64_t sp;
	uint64_t args[3];
	uint64_t result;
	uint64_t regs[RING_NREGS];
	uint64_t stack_head[4]; /* first 32 stack bytes, 0-padded */
	bool has_event;
	struct ht_event ev;     /* pcs unset */
	uint64_t tsc;           /* as stamped; 0 unstamped */
	uint64_t time_ns;       /* the drain's time for it (tracer_ring_item) */
};

struct collector {
	struct rec_copy *v;
	uint64_t n, cap;
	uint64_t overflow;      /* records past CAP, dropped by the test */
};
extern struct collector coll;

/* Drain the ring from this thread (see tracer_ring_drain), answering
   questions; records go to env.on_item or the collector. */
long env_drain(uint64_t wait_ns);

/* Forget the collected records. */
void env_collect_reset(void);

/* Run the tracer's part on a thread of its own: drain, answer, then
   sleep DELAY_NS (0: wait for the stubs' doorbell, at most 1 ms) and
   again. */
void env_consumer_start(uint64_t delay_ns);

/* Stop that thread once everything reserved so far is consumed (when
   FINISH; a record a stub gave up is never committed), and join it. */
void env_consumer_stop(bool finish);

/* Wait until the consumer thread has delivered every record reserved
   so far. */
void env_sync(void);

/* CLOCK_MONOTONIC in ns. */
uint64_t env_now_ns(void);

/* call_with_regs() argument. */
struct callctx {
	uint64_t fn;       /* address to call */
	uint64_t a[3];     /* rdi, rsi, rdx */
	uint64_t in[6];    /* rbx rbp r12 r13 r14 r15 to call with */
	uint64_t out[6];   /* the same, after the call */
	uint64_t ret;      /* rax */
	uint64_t entry_rsp; /* rsp at the callee's entry */
	uint64_t pat[2];   /* at entry_rsp + 8 and + 16 */
};

/* Call C->fn with C's registers and stack words; the return address
   the callee sees is call_with_regs_ret. */
void call_with_regs(struct callctx *c);
extern const char call_with_regs_ret[];

static inline uint64_t
tramp1(unsigned idx, uint64_t a)
{
	return ((uint64_t (*)(uint64_t))env.tramp[idx])(a);
}

static inline uint64_t
tramp2(unsigned idx, uint64_t a, uint64_t b)
{
	return ((uint64_t (*)(uint64_t, uint64_t))env.tramp[idx])(a, b);
}

static inline uint64_t
tramp3(unsigned idx, uint64_t a, uint64_t b, uint64_t c)
{
	return ((uint64_t (*)(uint64_t, uint64_t, uint64_t))env.tramp[idx])(
		a, b, c);
}

#endif
