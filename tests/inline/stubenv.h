/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the inline-stub tests share: the blob and its trampolines mapped
   executable in this very process (no ptrace), a SIGTRAP handler playing
   the tracer's part at the stub's int3 points, a collector for drained
   records, and an assembly helper that calls through a trampoline with
   chosen callee-saved registers and stack contents. */
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
	/* At RING_TRAP_FULL: drain here into the collector (single-threaded
	   tests), or wait for a consumer thread to make room. */
	bool drain_inline;
	/* Called at the end of every RING_TRAP_FULL stop, when set. */
	void (*on_full)(void);
	/* At RING_TRAP_RULE: the rule for lookup pc PC into *OUT (its pc
	   set by the handler), or false for the stub to copy the stack.
	   NULL: always false. Called with the table's writer lock held. */
	bool (*on_rule)(uint64_t pc, struct ring_rule *out);
	uint64_t full_stops;    /* RING_TRAP_FULL stops handled */
	uint64_t miss_stops;    /* RING_TRAP_MISS stops handled */
	uint64_t rule_stops;    /* RING_TRAP_RULE stops handled */
};

extern struct env env;

/* Empty the rule table, as the one writer of the table (the RULE handlers
   of all threads take the same lock). */
void env_rules_reset(void);

/* This thread's identity as the tracer would read it from /proc. When
   KNOWN is false the MISS handler answers RING_RESUME_PASS. */
struct env_self {
	bool known;
	uint32_t tid;
	uint64_t stack_lo, stack_hi;
};
extern __thread struct env_self env_self;

/* Map the blob for a ring of RING_SIZE bytes copying STACK_COPY stack
   bytes (walking off: see tracer_ring_walk_set), install the SIGTRAP
   handler and size the collector for CAP records. Returns 0, or -errno. */
int env_init(uint64_t ring_size, uint32_t stack_copy, uint64_t cap);

/* Undo env_init. */
void env_fini(void);

/* Fill env_self for the calling thread (before any trampoline call). */
void env_thread_init(void);

/* The calling thread's thread pointer (fs:0), the table's key. */
uint64_t env_tcb(void);

/* Describe descriptor IDX: FN implemented by ORIG (also its entry), whose
   "object" is [LO, HI). */
void env_fn(unsigned idx, enum ht_alloc_fn fn, const void *orig, uint64_t lo,
	    uint64_t hi);

/* A drained record, as far as the tests look. */
struct rec_copy {
	uint16_t kind, fn;
	uint32_t tid;
	uint32_t stack_len;
	uint8_t copied;         /* enum ring_copy; NONE: no REGS, no stack */
	uint16_t npcs;
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

/* Drain the ring into the collector (see tracer_ring_drain). */
long env_drain(uint64_t wait_ns);

/* Forget the collected records. */
void env_collect_reset(void);

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
