/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The memory the inline path shares between a target and heaptrace: one
   header region (counters, function descriptors, thread table), then a data
   area mapped twice back to back so that a record never wraps. Included
   byte for byte by the freestanding stub and by the tracer, so it uses
   nothing beyond <stdint.h> and compiler builtins. Design:
   docs/inline-backend.md. */
#ifndef HT_TRACER_INLINE_RING_H
#define HT_TRACER_INLINE_RING_H

#include <stdint.h>

#include "tracer/python/pyword.h"

#define RING_MAGIC 0x31474e4952544855ULL /* "UHTRING1" read as bytes */
#define RING_VERSION 9

/* RING_F_*: header flags, set by the tracer. */
#define RING_F_PASS 1u /* stubs call the originals and record nothing;
			  once set, a stub touches nothing of the ring but
			  its first page (a detach unmaps the rest) */
#define RING_F_TSC 2u  /* stubs stamp records with the TSC (ring_tsc) */
#define RING_F_SET_FULL 4u /* set by a stub (or the tracer) once the
			      sampled-address set had no room for a block:
			      every free is recorded from then on */

#define RING_MAX_FNS 48     /* descriptors; a trampoline's index is below */
/* The largest sampled-address set, the room a ring's file keeps for it:
   2^15 buckets (tracer/inline/sample.h); tracer_ring_sampling_set sizes
   the set by the interval within it (sample_set_shift_for). */
#define RING_SET_SHIFT_MIN 49
#define RING_HDR_FIXED 4096 /* bytes before the thread table */
/* Most segments of the thread table: segment S holds THREAD_CAP << S
   entries, so 24 of them hold more threads than a process can have. */
#define RING_THREAD_SEGS_MAX 24

/* What a descriptor's function does, which decides where its records are
   reserved (docs/inline-backend.md, "Ordering"). */
enum ring_class {
	RING_CLASS_ALLOC,          /* record at return, result = rax */
	RING_CLASS_FREE,           /* record at entry; none for free(NULL) */
	RING_CLASS_REALLOC,        /* REALLOC_BEGIN at entry (unless the block
				      is NULL), REALLOC at return */
	RING_CLASS_POSIX_MEMALIGN, /* at return, result = *memptr if rax == 0 */
	RING_CLASS_NOTIFY,         /* ld.so's _dl_debug_state: a NOTIFY record
				      at entry, then a wait for the tracer's
				      answer (NOTIFY_ACK) before the original
				      runs; never more than NOTIFY_WAIT_NS */
	RING_CLASS_PAGE,           /* a page call (mmap, mremap, brk, shmat):
				      a PAGE record at return, with stack */
	RING_CLASS_PAGE_ENTRY,     /* one that unmaps (munmap, shmdt): a PAGE
				      record at entry, before the pages can
				      be mapped again, no stack */
	RING_CLASS_EXIT,           /* libc's _exit: call FREERES[0], FREERES[1]
				      (those not 0) first, then the original;
				      no record */
};

/* ring_fn.fn of the page classes: which call (the record's FN). */
enum ring_page_fn {
	RING_PAGE_MMAP,
	RING_PAGE_MUNMAP,
	RING_PAGE_MREMAP,
	RING_PAGE_BRK,   /* glibc's brk(addr): 0 when the break moved there */
	RING_PAGE_SHMAT,
	RING_PAGE_SHMDT,
	RING_PAGE_N
};

/* One patched function. Written by the tracer before its patch goes in,
   read-only for the stub. */
struct ring_fn {
	uint64_t orig;   /* the relocated original: F's displaced first
			    instructions, then a jump to the rest of F */
	uint64_t entry;  /* F itself: the rip recorded for unwinding */
	uint64_t obj_lo; /* [obj_lo, obj_hi): F's object's code; a call made */
	uint64_t obj_hi; /* from there while F runs is internal */
	uint16_t fn;     /* enum ht_alloc_fn, copied into records */
	uint16_t cls;    /* enum ring_class */
	uint8_t size_arg; /* sampling: the argument holding the size */
	uint8_t size_mul; /* and the one it is multiplied by (calloc,
			     reallocarray), RING_NO_ARG: none */
	uint8_t ptr_arg;  /* a free: the argument holding the pointer */
	uint8_t pad;
	uint64_t sample_interval; /* the header's, copied here (0 for
				     hooks and pymalloc's arena calls,
				     recorded whole), with SET_HOMED_OFF and
				     SET_HOME_MASK: what a sampling call
				     reads is on its descriptor's line */
	uint64_t set_homed_off;
	uint64_t set_home_mask; /* sample_set_mask(the header's set_shift) */
};

#define RING_NO_ARG 0xffu

/* Tombstone: the entry's thread is gone; lookups go past it. */
#define RING_TCB_DEAD 1ULL

/* One thread, keyed by its thread pointer (fs:0, the TCB's self-pointer in
   glibc and musl; equal to the fs_base register). The thread table is a
   chain of segments, each an open-addressed table with linear probing
   from ring_thread_hash(), at most half full, twice as large as the one
   before it and laid out right after it: the tracer starts a segment when
   those before it are half full, so the table grows with the process
   without moving an entry (the stubs read it while it grows). Every
   segment the process can ever need has its place in the ring's file
   from the start; a page of it takes memory once an entry is written
   there. The tracer owns TCB, STACK_LO,
   STACK_HI and TID, and writes TCB last (release) when inserting; the
   OUTER_* fields, INTERNAL and the sampler's SAMPLE_LEFT and SAMPLE_RNG
   belong to the stub of that thread (the tracer sets the sampler's up
   before it publishes TCB). Two cache lines each, so threads' stub writes
   do not share lines. */
struct ring_thread {
	uint64_t tcb;       /* 0 empty, RING_TCB_DEAD, else the key */
	uint64_t stack_lo;  /* the stack is copied only when */
	uint64_t stack_hi;  /* stack_lo <= rsp < stack_hi, up to stack_hi */
	uint32_t tid;       /* copied into records */
	uint32_t pad;
	uint64_t outer_rsp; /* entry rsp of the call in progress, 0 if none */
	uint64_t outer_lo;  /* its descriptor's obj_lo, obj_hi */
	uint64_t outer_hi;
	uint64_t internal;  /* internal calls seen (not recorded) */
	int64_t sample_left; /* --sampling-interval: bytes to the next
				sample point (tracer/inline/sample.h) */
	uint64_t sample_rng; /* the thread's PRNG state */
	uint64_t sample_calls; /* calls the sampler passed over */
	uint64_t pad2[5];
};

/* Counters the stubs bump with a locked add; rare events only. */
struct ring_stats {
	uint64_t miss_pass;  /* calls made unrecorded: thread unknown */
	uint64_t full_waits; /* waits for room */
	uint64_t no_stack;   /* rsp outside the thread's stack bounds */
	uint64_t rule_misses; /* rule-table misses (the stack is copied) */
	uint64_t notify_timeouts; /* NOTIFY waits that gave up */
	uint64_t set_full;   /* sampled blocks the address set had no room
				for (from then on every free is recorded) */
	uint64_t pad[2];
};

/* The header region. The tracer fills everything but HEAD and STATS
   before any patch goes in; the stubs then only touch HEAD, STATS and
   their thread's OUTER_* and INTERNAL. HEAD and TAIL have lines of their
   own: producers hammer one, the consumer the other. The rule table's
   entries and RULE_GEN change while stubs run (see struct ring_rule). */
struct ring_header {
	uint64_t magic;         /* RING_MAGIC */
	uint32_t version;       /* RING_VERSION */
	uint32_t flags;         /* RING_F_* */
	uint64_t size;          /* data bytes, a power of two, >= 4096 */
	uint64_t data_off;      /* offset of the data area from the header */
	uint64_t stack_copy;    /* most stack bytes copied per record,
				   at most RING_MAX_STACK_COPY */
	uint32_t thread_cap;    /* entries of the thread table's first
				   segment, a power of two */
	uint32_t thread_shift;  /* 64 - log2(thread_cap) */
	uint32_t consumer;      /* a robust futex word: the consumer's tid
				   while it lives; the kernel sets
				   RING_CONSUMER_DIED when it dies, however
				   it dies (ring_consumer_alive) */
	uint32_t thread_segs;   /* thread-table segments in use (stored with
				   release once the tracer starts one) */
	uint64_t consumer_node; /* the consumer's robust-list link for
				   CONSUMER (the tracer's addresses; the
				   stubs never touch it) */
	uint64_t head;          /* bytes reserved since the start (lock xadd) */
	uint64_t pad1[7];
	uint64_t tail;          /* bytes consumed, published by the tracer */
	uint32_t drained;       /* futex word: bumped (and woken) by the
				   tracer after it publishes TAIL while
				   SLEEPERS is not 0 */
	uint32_t sleepers;      /* stubs waiting for room (lock add) */
	uint32_t doorbell;      /* futex word: bumped and woken by a stub
				   that waits for an answer, so that an
				   idle tracer drains at once */
	uint32_t pad2a;
	uint64_t pad2[5];
	struct ring_stats stats;
	struct ring_fn fns[RING_MAX_FNS];
	uint64_t rule_off;      /* offset of the rule table from the header */
	uint32_t rule_cap;      /* rule-table entries, a power of two */
	uint32_t rule_shift;    /* 64 - log2(rule_cap) */
	uint32_t walk_max;      /* most addresses a stub records per stack;
				   0: stubs copy stacks instead of walking */
	uint32_t walk_memo;     /* enum ring_memo_mode */
	uint64_t rule_gen;      /* even; odd while the tracer empties the
				   rule table, bumped before and after */
	uint32_t notify_seq;    /* questions asked (NOTIFY, THREAD, RULE
				   records): a count, for tests and stats */
	uint32_t notify_ack;    /* futex word: bumped at every answer */
	uint64_t freeres[2];    /* RING_CLASS_EXIT's calls, 0: none */
	uint64_t answered;      /* ring position of the last question
				   answered, plus one; questions are
				   answered in ring order, so every question
				   before it is answered too */
	uint64_t sample_interval; /* --sampling-interval; 0: every call */
	uint64_t set_off;       /* offset of the sampled-address set */
	uint32_t set_shift;     /* 64 - log2(its buckets), at least
				   RING_SET_SHIFT_MIN */
	uint32_t pad4;
	uint64_t set_homed_off; /* offset of the set's counts (sample.h) */
	uint64_t memo_off;      /* offset of the walk memos (struct
				   ring_memo), one per thread-table entry
				   below MEMO_SLOTS */
	uint32_t memo_slots;
	uint32_t pad5;
	/* How a stub reads the allocating thread's Python frames (pyword.h),
	   written by the tracer once it knows the process's interpreter:
	   every field, then MAX_FRAMES (release). Zero: no Python frames.
	   A line of its own, read by every recording stub. */
	struct py_walk_params python __attribute__((aligned(64)));
	/* struct ring_thread threads[thread_cap] at RING_HDR_FIXED, then
	   struct ring_rule rules[rule_cap] at RULE_OFF, then
	   struct sample_bucket set[] at SET_OFF, then
	   struct ring_memo memos[memo_slots] at MEMO_OFF */
};

_Static_assert(__builtin_offsetof(struct ring_header, head) == 64,
	       "head has its own cache line");
_Static_assert(__builtin_offsetof(struct ring_header, tail) == 128,
	       "tail has its own cache line");
_Static_assert(__builtin_offsetof(struct ring_header, stats) == 192,
	       "stats follow tail");
_Static_assert(__builtin_offsetof(struct ring_header, fns) == 256,
	       "descriptors follow stats");
_Static_assert(__builtin_offsetof(struct ring_header, python) % 64 == 0,
	       "the Python parameters have their own cache line");
_Static_assert(sizeof(struct ring_fn) == 64, "one line per descriptor");
_Static_assert(sizeof(struct ring_thread) == 128, "two lines per thread");
_Static_assert(sizeof(struct ring_header) <= RING_HDR_FIXED,
	       "header fits before the thread table");

/* How a frame's caller finds its rsp, rbp or return address: the rules
   the stubs follow. CFA is the frame's canonical frame address. */
enum ring_loc {
	RING_LOC_UNDEF,  /* unknown in the caller */
	RING_LOC_SAME,   /* the frame's own value (and whether it is known) */
	RING_LOC_CFA,    /* CFA + off */
	RING_LOC_AT_CFA, /* the word at CFA + off */
};

/* ring_rule.kind */
enum ring_rule_kind {
	RING_RULE_COPY, /* the stub cannot follow this frame: it copies the
			   stack instead, for the tracer to unwind */
	RING_RULE_CFI,  /* CFA = CFA_REG + CFA_OFF, then RSP, RBP, RA */
	RING_RULE_FP,   /* no CFI: the frame-pointer step (rbp chain) */
};

/* The unwinding rule of one lookup pc (a frame's pc for the innermost
   frame, return address - 1 for the others), compiled by the tracer from
   the CFI on the stub's RING_TRAP_RULE. Open addressing with linear probing
   from ring_rule_hash(); the tracer writes an entry's fields, then PC
   (release), and entries are only ever added, except when the tracer
   empties the whole table: it makes RULE_GEN odd, zeroes the entries and
   makes RULE_GEN even again, so a stub that saw RULE_GEN change during a
   walk (or odd) does not trust it. Every field is read with bounds in
   mind: a rule torn by a reset may send a walk anywhere, but its reads
   stay inside the thread's stack and its result is thrown away. */
struct ring_rule {
	uint64_t pc;       /* 0: empty */
	int32_t cfa_off;
	int32_t rsp_off;   /* for RSP when RING_LOC_CFA or RING_LOC_AT_CFA */
	int32_t rbp_off;
	int32_t ra_off;
	uint8_t kind;      /* enum ring_rule_kind */
	uint8_t cfa_reg;   /* RING_REG_RSP or RING_REG_RBP */
	uint8_t rsp;       /* enum ring_loc: the caller's rsp, */
	uint8_t rbp;       /* rbp */
	uint8_t ra;        /* and return address (its pc) */
	uint8_t pad[3];
};

_Static_assert(sizeof(struct ring_rule) == 32, "two rules per line");

/* Most addresses a record holds: --depth's maximum (200) plus the
   tracer's margin fits. */
#define RING_MAX_PCS 256
/* Most words a record's PCS holds: the addresses and the Python words. */
#define RING_MAX_WORDS (RING_MAX_PCS + PY_MAX_FRAMES)

/* ring_record.kind */
enum ring_rec_kind {
	RING_REC_ALLOC = 1,     /* an allocating call returned (ALLOC and
				   POSIX_MEMALIGN classes) */
	RING_REC_FREE,          /* a free-like call was entered */
	RING_REC_REALLOC_BEGIN, /* a realloc-like call was entered; no stack */
	RING_REC_REALLOC,       /* a realloc-like call returned */
	RING_REC_NOTIFY,        /* _dl_debug_state was entered: args[0] is
				   the record's own ring position (its
				   number: the order the tracer answers in),
				   args[1] the thread pointer (0: not set
				   up yet), args[2] the entry rsp; the
				   tracer answers by raising ANSWERED past
				   it, then bumping and waking NOTIFY_ACK */
	RING_REC_THREAD,        /* a thread not in the thread table asks
				   for its entry: as NOTIFY */
	RING_REC_PAGE,          /* a page call (fn: enum ring_page_fn)
				   returned (RING_CLASS_PAGE: result = rax)
				   or was entered (RING_CLASS_PAGE_ENTRY) */
	RING_REC_RULE,          /* a walk found no rule for lookup pc
				   args[1]: the tracer publishes it (and
				   those of the frames above), then answers
				   as for NOTIFY. args[2] = that frame's
				   rsp, result = its rbp, then 3 pcs: its
				   return-address column, which of rsp, rbp
				   and it are known (RING_WALK_*), and the
				   thread's stack top */
};

/* A record a stub waits on an answer to (args[0]: its ring position). */
static inline int
ring_rec_is_question(uint32_t kind)
{
	return kind == RING_REC_NOTIFY || kind == RING_REC_THREAD ||
	       kind == RING_REC_RULE;
}

/* ring_record.regs: F's registers at its entry, what CFI rules need. */
enum ring_reg {
	RING_REG_RIP, /* = the descriptor's entry */
	RING_REG_RSP, /* points at the caller's return address */
	RING_REG_RBP,
	RING_REG_RBX,
	RING_REG_R12,
	RING_REG_R13,
	RING_REG_R14,
	RING_REG_R15,
	RING_NREGS
};

/* ring_record.copied: why an ALLOC or REALLOC record holds a copy of the
   stack rather than its addresses. */
enum ring_copy {
	RING_COPY_NONE,     /* not copied: NPCS addresses (or no stack wanted,
			       in FREE, REALLOC_BEGIN and entry PAGE
			       records) */
	RING_COPY_OFF,      /* walking is off (walk_max 0) */
	RING_COPY_NO_STACK, /* rsp outside the thread's stack: no bytes */
	RING_COPY_RULE,     /* a frame's rule is RING_RULE_COPY, or the
			       tracer had none for it */
	RING_COPY_BOUNDS,   /* a rule read outside [rsp, stack_hi) */
	RING_COPY_RESET,    /* the rule table was emptied during the walk */
	RING_COPY_N
};

/* One record in the data area, at (position mod size), 8-byte aligned,
   ring_rec_size() bytes: this header, then what the record carries, each
   part 8-byte aligned:
     regs[RING_NREGS]   F's entry registers (enum ring_reg), in records
                        that copied the stack (COPIED != RING_COPY_NONE)
     stack[STACK_LEN]   the copy, from regs[RING_REG_RSP] upward
     pcs[NPCS]          the addresses walked, then the thread's Python
                        frames (pyword.h: words with bit 63 set, which
                        no native address has), innermost first; in a
                        copied record only the Python words
   Records carry no more than the tracer needs: entry records (FREE,
   REALLOC_BEGIN) the header alone, walked ones their addresses. */
struct ring_record {
	uint32_t commit;    /* 0 until complete; then the record's size,
			       stored last with release semantics */
	uint8_t kind;       /* enum ring_rec_kind */
	uint8_t copied;     /* enum ring_copy */
	uint8_t fn;         /* enum ht_alloc_fn */
	uint8_t sample;     /* sampling: what the sampler decided (ALLOC,
			       REALLOC; tracer/inline/sample.h) */
	uint32_t tid;       /* the thread-table entry's TID */
	uint16_t stack_len; /* bytes in the stack copy (stack_copy fits) */
	uint16_t npcs;      /* F's entry, then the return addresses of the
			       frames above it, as the tracer's unwinder
			       finds them (none when the stack was
			       copied), then the Python words */
	uint64_t tsc;       /* ring_tsc() just after the record's position
			       was reserved, so in ring order but for the
			       skew between CPUs; 0 without RING_F_TSC */
	uint64_t sp;        /* rsp at F's entry (--stacks=yes samples it) */
	uint64_t args[3];   /* rdi, rsi, rdx at entry */
	uint64_t result;    /* rax at return; for posix_memalign *memptr when
			       it returned 0, else 0; 0 at entry records */
	uint64_t data[];    /* regs, stack, pcs, as above */
};

_Static_assert(sizeof(struct ring_record) == 64, "record header size");

/* Most stack bytes a record can copy (STACK_LEN is 16 bits wide). */
#define RING_MAX_STACK_COPY 65535u

/* The time stamp counter. Not ordered with the instructions around it:
   a stamp read just after a reservation may be a few cycles early, which
   the consumer's clamp absorbs. */
static inline uint64_t
ring_tsc(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* The size of a record with the registers when REGS, STACK_LEN stack bytes
   and NPCS addresses. */
static inline uint32_t
ring_rec_size(int regs, uint32_t stack_len, uint32_t npcs)
{
	return (uint32_t)sizeof(struct ring_record) +
	       (regs ? RING_NREGS * 8u : 0) + ((stack_len + 7) & ~7u) +
	       npcs * 8u;
}

/* REC's registers (copied records only), stack copy and addresses. */
static inline uint64_t *
ring_record_regs(struct ring_record *rec)
{
	return rec->data;
}

static inline uint8_t *
ring_record_stack(struct ring_record *rec)
{
	return (uint8_t *)(void *)(rec->data +
				   (rec->copied ? RING_NREGS : 0));
}

static inline uint64_t *
ring_record_pcs(struct ring_record *rec)
{
	return (uint64_t *)(void *)(ring_record_stack(rec) +
				    ((rec->stack_len + 7) & ~7u));
}

/* The stub never stops for the tracer: nothing in the target depends on
   a tracer being there to answer (heaptrace may be killed at any moment,
   and the target must run on). Its slow cases:

   - thread-table miss: the tracer fills the entry of every thread before
     it runs (attach, a new thread's first stop, a fork child's) when its
     thread pointer is set; one that was not (the main thread of a static
     program, at exec) asks once with a THREAD record, answered like a
     NOTIFY; still without an entry, the call is made unrecorded
     (stats.miss_pass).
   - rule-table miss: the stub asks for the rule with a RULE record and
     waits for the answer, at most RING_RULE_WAIT_NS; without one, the
     record copies the stack (RING_COPY_RULE), and the tracer, unwinding
     the copy, publishes the rules of its frames all the same.
   - full ring: the stub waits on the futex word DRAINED (SLEEPERS counts
     it), RING_FULL_WAIT_NS at a time, until the tracer frees the room,
     giving up the record when the consumer is gone.
   - NOTIFY, THREAD and RULE: a question the stub waits for the answer
     to on NOTIFY_ACK the same way, at most RING_NOTIFY_WAIT_NS
     (stats.notify_timeouts), after ringing DOORBELL.

   The consumer is gone when CONSUMER says so: the tracer registers that
   word in its robust futex list (set_robust_list), so the kernel marks it
   RING_CONSUMER_DIED when the tracer dies, SIGKILL included; a tracer that
   ends normally stores RING_CONSUMER_DIED itself. From then on every stub
   passes every call straight through. */
#define RING_CONSUMER_DIED 0x40000000u /* FUTEX_OWNER_DIED */
#define RING_CONSUMER_TID 0x3fffffffu  /* FUTEX_TID_MASK */
#define RING_FULL_WAIT_NS 1000000ULL   /* one wait for room: 1 ms */
#define RING_NOTIFY_WAIT_NS 2000000000ULL /* a NOTIFY's whole wait: 2 s */
#define RING_RULE_WAIT_NS 100000000ULL /* a RULE's: 0.1 s, then copy */

/* True while the consumer lives and has not asked the stubs to pass. */
static inline int
ring_recording(const struct ring_header *h)
{
	uint32_t c = __atomic_load_n(&h->consumer, __ATOMIC_RELAXED);
	uint32_t f = __atomic_load_n(&h->flags, __ATOMIC_RELAXED);
	return !(f & RING_F_PASS) && (c & RING_CONSUMER_TID) &&
	       !(c & RING_CONSUMER_DIED);
}

/* The first entry of the thread table's segment SEG (entries THREAD_CAP
   << SEG), right after the segments before it. */
static inline struct ring_thread *
ring_thread_seg(struct ring_header *h, uint32_t seg)
{
	uint64_t before = (uint64_t)h->thread_cap * ((1ULL << seg) - 1);
	return (struct ring_thread *)((uint8_t *)h + RING_HDR_FIXED) + before;
}

/* The first segment, the whole table of a process with few threads. */
static inline struct ring_thread *
ring_threads(struct ring_header *h)
{
	return ring_thread_seg(h, 0);
}

/* TCB's home in segment SEG. */
static inline uint32_t
ring_thread_hash(const struct ring_header *h, uint64_t tcb, uint32_t seg)
{
	return (uint32_t)((tcb * 0x9e3779b97f4a7c15ULL) >>
			  (h->thread_shift - seg));
}

/* The live entry for TCB, or 0. Safe while the tracer inserts or kills
   other entries, or starts a segment: a key is published last and never
   rewritten to another live key while its thread may run, and a segment
   is counted in THREAD_SEGS before any key is written to it. */
static inline struct ring_thread *
ring_thread_lookup(struct ring_header *h, uint64_t tcb)
{
	uint32_t segs = __atomic_load_n(&h->thread_segs, __ATOMIC_ACQUIRE);
	for (uint32_t seg = 0; seg < segs && seg < RING_THREAD_SEGS_MAX;
	     seg++) {
		struct ring_thread *t = ring_thread_seg(h, seg);
		uint32_t cap = h->thread_cap << seg, mask = cap - 1;
		uint32_t i = ring_thread_hash(h, tcb, seg);
		for (uint32_t n = 0; n < cap; n++, i = (i + 1) & mask) {
			uint64_t key = __atomic_load_n(&t[i].tcb,
						       __ATOMIC_ACQUIRE);
			if (key == tcb)
				return &t[i];
			if (key == 0)
				break;
		}
	}
	return 0;
}

static inline struct ring_rule *
ring_rules(struct ring_header *h)
{
	return (struct ring_rule *)((uint8_t *)h + h->rule_off);
}

static inline uint32_t
ring_rule_hash(const struct ring_header *h, uint64_t pc)
{
	return (uint32_t)((pc * 0x9e3779b97f4a7c15ULL) >> h->rule_shift);
}

/* The entry for lookup pc PC, or 0. Safe while the tracer adds entries;
   while it empties the table the entry found may be torn (RULE_GEN tells). */
static inline const struct ring_rule *
ring_rule_lookup(struct ring_header *h, uint64_t pc)
{
	const struct ring_rule *r = ring_rules(h);
	uint32_t mask = h->rule_cap - 1;
	uint32_t i = ring_rule_hash(h, pc);
	for (uint32_t n = 0; n < h->rule_cap; n++, i = (i + 1) & mask) {
		uint64_t key = __atomic_load_n(&r[i].pc, __ATOMIC_ACQUIRE);
		if (key == pc)
			return &r[i];
		if (key == 0)
			break;
	}
	return 0;
}

/* ---- One step of a stack walk by the rules (the stub's, and the
   tracer's look-ahead at RING_TRAP_RULE) ---- */

/* What a walk knows of the frame it is in: the registers the rules use,
   which of them are known (RING_WALK_*; an unknown one is lost for good,
   as in the tracer's unwinder), and where the words it may read are: from
   LO to HI, at LO + BIAS in this address space (the stub reads the stack
   in place, BIAS 0; the tracer a copy of it). */
struct ring_memo_frame;

struct ring_walk {
	uint64_t rsp, rbp;
	uint64_t ra;       /* the return-address column: the caller's pc */
	uint32_t known;
	uint32_t rec_bad;  /* a read REC could not hold was made */
	uint64_t lo, hi;
	uint64_t bias;
	struct ring_memo_frame *rec; /* not 0: every word read is noted
					there (the stub's walk memo) */
};

#define RING_WALK_RSP 1u
#define RING_WALK_RBP 2u
#define RING_WALK_RA 4u

/* ---- The walk memo (docs/inline-backend.md, "The walk memo") ----

   A thread's last walk, kept so that the next one can stop walking where
   the two stacks meet: a walk is a function of the frame it starts from
   (its pc, registers and which of them are known), the rule table and
   the words it reads, so a new walk that reaches a frame in the very
   state of one of the memo's frames, and finds every word the memo's
   walk read from there on still holding the value it read, would walk
   the memo's frames again: it takes them instead. The check reads those
   words independently of each other, where the walk reads one frame's
   only after the last frame's. Anything else (another rule-table
   generation, another stack top, a word changed) and the walk goes on as
   if there were no memo: the stack is always the full walk's.

   The memo's frames are in two parts, so that a walk that shares the
   memo's outer frames copies nothing: the outer part in F, outermost
   first, then the inner part in INNER[CUR], innermost first (a walk
   notes its frames in INNER[!CUR] as it goes; taking the memo's frames
   from F[J] out, it keeps F[0..J] and makes its own the inner part).
   Only a match inside the inner part moves frames: those from the match
   out go to F, once. Only the stub of the
   thread whose table entry it belongs to touches a memo, so no atomics;
   but a signal handler that allocates may interrupt a walk that uses
   it: BUSY (that walk's entry rsp) tells the nested walk, deeper on the
   same stack, to walk without it. A BUSY at or below a new walk's own
   entry rsp was left by a walk that never finished (a handler that
   longjmp'ed out of it), or belongs to a walk interrupted by a handler
   running on a stack above it (an alternate stack inside the thread's
   stack bounds): the memo is taken all the same, its frames dropped, and
   SEQ bumped, which tells the interrupted walk, if it lives, to walk
   again without the memo. A walk indexes the memo by its own copy of N,
   OUTER and CUR, so whatever changed under it, it reads inside the memo.
   The tracer empties a memo when a new thread takes the entry, and sums
   its counters. */
#define RING_MEMO_FRAMES 128
#define RING_MEMO_SLOTS_MAX 4096u
#define RING_MEMO_INNERMOST 0x80u /* ring_memo_frame.known: frame 0 (its
				     rules are looked up at its pc, not at
				     pc - 1) */

enum ring_memo_mode {
	RING_MEMO_OFF,   /* every walk walks every frame */
	RING_MEMO_ON,
	RING_MEMO_CHECK, /* a walk that took the memo's frames walks them
			    again, keeps those, and counts a difference */
};

/* One frame of a walk and the words its step to the caller read. */
struct ring_memo_frame {
	uint64_t pc;     /* the address recorded for the frame */
	uint64_t rsp, rbp;
	uint64_t val[3]; /* the words read, at RSP + OFF */
	int32_t off[3];
	uint8_t known;   /* RING_WALK_* of the frame, RING_MEMO_INNERMOST */
	uint8_t nreads;
	uint8_t pad[2];
};

struct ring_memo {
	uint64_t gen;     /* the rule_gen F was walked under */
	uint64_t hi;      /* the stack top it was walked under */
	uint64_t busy;    /* entry rsp of the walk using the memo, 0: none */
	uint32_t n;       /* frames in all, 0: none */
	uint16_t outer;   /* of which in F */
	uint8_t cur;      /* INNER[CUR] holds the others */
	uint8_t capped;   /* the walk stopped at walk_max: its outermost
			     frame made no step, what lies past it is not
			     known */
	uint64_t walks;   /* walks that looked at the memo */
	uint64_t hits;    /* ... and took frames from it */
	uint64_t reused;  /* frames taken */
	uint64_t differed; /* RING_MEMO_CHECK: hits the full walk did not
			      agree with */
	uint64_t walked;  /* frames the walks recorded, taken ones too */
	uint64_t seq;     /* bumped by every walk that takes the memo: a
			     walk that finds it changed at its end was
			     interrupted by one (a handler on a stack above
			     it) and trusts nothing it took or noted */
	uint64_t pad2[6];
	struct ring_memo_frame f[RING_MEMO_FRAMES];           /* outermost
								 first */
	struct ring_memo_frame inner[2][RING_MEMO_FRAMES];    /* innermost
								 first */
};

_Static_assert(sizeof(struct ring_memo_frame) == 64, "a line a frame");
_Static_assert(sizeof(struct ring_memo) % 64 == 0, "memos line up");

/* Thread-table entry T's memo, or 0 when it has none. */
static inline struct ring_memo *
ring_memo(struct ring_header *h, const struct ring_thread *t)
{
	uint64_t i = (uint64_t)(t - ring_threads(h));
	if (i >= h->memo_slots)
		return 0;
	return (struct ring_memo *)((uint8_t *)h + h->memo_off) + i;
}

/* Note the word VAL read at ADDR in W's memo frame. */
static inline void
ring_memo_note(struct ring_walk *w, uint64_t addr, uint64_t val)
{
	struct ring_memo_frame *r = w->rec;
	int64_t off = (int64_t)(addr - r->rsp);
	if (r->nreads >= 3 || off != (int32_t)off) {
		w->rec_bad = 1;
		return;
	}
	r->off[r->nreads] = (int32_t)off;
	r->val[r->nreads++] = val;
}

/* The word at ADDR into *OUT when it lies inside W's bounds (for the stub
   everything from F's entry rsp to the top of the mapping holding it is
   mapped, so such a read cannot fault). Returns 0 otherwise. */
static inline int
ring_walk_read(struct ring_walk *w, uint64_t addr, uint64_t *out)
{
	if (addr < w->lo || w->hi - w->lo < 8 || addr > w->hi - 8)
		return 0;
	*out = *(const volatile uint64_t *)(uintptr_t)(addr + w->bias);
	if (w->rec)
		ring_memo_note(w, addr, *out);
	return 1;
}

/* The caller's value of the register BIT, whose value in this frame is
   *VAL, by the rule LOC, OFF: into *VAL, and BIT into *KNOWN when it is
   known. Returns 0 for a read out of bounds. */
static inline int
ring_walk_value(struct ring_walk *w, uint8_t loc, int32_t off,
		uint64_t cfa, int cfa_ok, uint32_t bit, uint64_t *val,
		uint32_t *known)
{
	uint64_t at = cfa + (uint64_t)(int64_t)off;
	switch (loc) {
	case RING_LOC_SAME:
		*known |= w->known & bit;
		return 1;
	case RING_LOC_CFA:
		if (cfa_ok) {
			*val = at;
			*known |= bit;
		}
		return 1;
	case RING_LOC_AT_CFA:
		if (!cfa_ok)
			return 1;
		if (!ring_walk_read(w, at, val))
			return 0;
		*known |= bit;
		return 1;
	default:
		return 1;
	}
}

/* Make W its caller's frame by the CFI rule RU. Every value comes from
   this frame's registers, so none is stored before all are computed. */
static inline int
ring_walk_cfi(struct ring_walk *w, const struct ring_rule *ru)
{
	int by_rbp = ru->cfa_reg == RING_REG_RBP;
	uint64_t cfa = (by_rbp ? w->rbp : w->rsp) +
		       (uint64_t)(int64_t)ru->cfa_off;
	int cfa_ok =
		(w->known & (by_rbp ? RING_WALK_RBP : RING_WALK_RSP)) != 0;
	uint64_t rsp = w->rsp, rbp = w->rbp, ra = w->ra;
	uint32_t known = 0;
	if (!ring_walk_value(w, ru->rsp, ru->rsp_off, cfa, cfa_ok,
			     RING_WALK_RSP, &rsp, &known) ||
	    !ring_walk_value(w, ru->rbp, ru->rbp_off, cfa, cfa_ok,
			     RING_WALK_RBP, &rbp, &known) ||
	    !ring_walk_value(w, ru->ra, ru->ra_off, cfa, cfa_ok, RING_WALK_RA,
			     &ra, &known))
		return -1;
	w->rsp = rsp;
	w->rbp = rbp;
	w->ra = ra;
	w->known = known;
	return (known & RING_WALK_RA) != 0;
}

/* Make W its caller's frame by the frame-pointer chain, libdw's x86-64
   step: rbp points at the saved rbp, the return address above it; the
   caller knows only rsp and rbp (its pc goes to W->ra all the same). */
static inline int
ring_walk_fp(struct ring_walk *w)
{
	uint64_t fp = w->rbp, sp = 0, saved, ret;
	if (!(w->known & RING_WALK_RBP) || fp == 0)
		return 0;
	if (w->known & RING_WALK_RSP)
		sp = w->rsp;
	/* A chain that does not lead up the stack is no frame chain. */
	if (sp >= fp + 16)
		return 0;
	if (!ring_walk_read(w, fp, &saved) || !ring_walk_read(w, fp + 8, &ret))
		return -1;
	w->rbp = saved;
	w->rsp = fp + 16;
	w->ra = ret;
	w->known = RING_WALK_RSP | RING_WALK_RBP;
	return 1;
}

/* Make W its caller's frame by RU (RING_RULE_CFI or RING_RULE_FP; any
   other kind is not to be followed). Returns 1, with the caller's pc in
   W->ra; 0 where the walk ends (the return address unknown there, or the
   frame-pointer chain broken); -1 for a read out of bounds. */
static inline int
ring_walk_step(struct ring_walk *w, const struct ring_rule *ru)
{
	return ru->kind == RING_RULE_FP ? ring_walk_fp(w) : ring_walk_cfi(w, ru);
}

/* Claim LEN bytes; returns their position. Every thread's reservations
   form one total order, the ring's. */
static inline uint64_t
ring_reserve(struct ring_header *h, uint32_t len)
{
	return __atomic_fetch_add(&h->head, len, __ATOMIC_ACQ_REL);
}

/* True once the consumer has freed the room for LEN bytes at POS. */
static inline int
ring_has_room(struct ring_header *h, uint64_t pos, uint32_t len)
{
	return pos + len - __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE) <=
	       h->size;
}

/* The record at position POS: contiguous for any length up to the size,
   thanks to the second mapping. */
static inline struct ring_record *
ring_record_at(struct ring_header *h, uint64_t pos)
{
	return (struct ring_record *)((uint8_t *)h + h->data_off +
				      (pos & (h->size - 1)));
}

/* Publish REC, LEN bytes, every other field written. */
static inline void
ring_commit(struct ring_record *rec, uint32_t len)
{
	__atomic_store_n(&rec->commit, len, __ATOMIC_RELEASE);
}

/* Consumer: the record at the tail when it is committed, else 0. *LEN gets
   its committed size. */
static inline struct ring_record *
ring_peek(struct ring_header *h, uint64_t tail, uint32_t *len)
{
	struct ring_record *rec = ring_record_at(h, tail);
	*len = __atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE);
	return *len ? rec : 0;
}

/* Consumer: zero the LEN bytes consumed at TAIL, so that each commit word
   of the next lap reads 0 until written. The tail is published apart
   (ring_publish_tail), in batches. */
static inline void
ring_zero(struct ring_header *h, uint64_t tail, uint32_t len)
{
	uint64_t *w = (uint64_t *)ring_record_at(h, tail);
	for (uint32_t i = 0; i < len / 8; i++)
		w[i] = 0;
}

/* Consumer: hand the bytes before TAIL, zeroed, back to the producers.
   Every store moves the tail's cache line away from the producers, which
   read it at each reservation: hence batches rather than every record. */
static inline void
ring_publish_tail(struct ring_header *h, uint64_t tail)
{
	__atomic_store_n(&h->tail, tail, __ATOMIC_RELEASE);
}

#endif
