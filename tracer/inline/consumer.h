/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer's side of the inline ring (ring.h): creating the shared
   memory, describing patched functions and threads to the stubs, and
   draining records in ring order. One ring per traced process; one
   consumer thread per ring. */
#ifndef HT_TRACER_INLINE_CONSUMER_H
#define HT_TRACER_INLINE_CONSUMER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "tracer/inline/ring.h"
#include "tracer/inline/sample.h"
#include "tracer/tracer.h"

struct tracer_ring;

/* Consumer-side counters (the stubs' own are in the header's stats). */
struct tracer_ring_stats {
	uint64_t records;  /* delivered */
	uint64_t bytes;    /* consumed, record sizes summed */
	uint64_t waits;    /* times the tail record was found uncommitted */
	uint64_t sleeps;   /* short sleeps while waiting for one */
	uint64_t max_fill; /* most bytes seen between tail and head */
	uint64_t internal; /* internal calls of removed threads (live ones
			      are in their table entries) */
	uint64_t walked;   /* allocation records with addresses */
	uint64_t copied[RING_COPY_N]; /* ... with a stack copy instead, by
					 reason (enum ring_copy; NONE: 0) */
	uint64_t sample_skipped; /* allocations the sampler passed over
				    (--sampling-interval) */
	uint64_t rules;    /* rule-table entries added */
	uint64_t resets;   /* times the rule table was emptied */
	uint64_t memo_walks;    /* walks that looked at their walk memo */
	uint64_t memo_hits;     /* ... and took frames from it */
	uint64_t memo_reused;   /* frames taken */
	uint64_t memo_walked;   /* frames the walks recorded in all */
	uint64_t memo_differed; /* RING_MEMO_CHECK: hits unlike the full
				   walk */
};

/* Create a ring of SIZE data bytes (a power of two, at least a page), a
   thread table whose first segment has THREAD_CAP entries and whose
   segments hold THREAD_MAX threads in all (ring.h), a rule table of
   RULE_CAP entries (both caps powers of two, at least 8) and STACK_COPY
   stack bytes per copied stack
   (at most SIZE / 4 and RING_MAX_STACK_COPY), backed by a memfd and mapped
   (and populated) here as the target will map it; its consumer is this
   thread, until tracer_ring_free or its death. Stubs copy stacks until
   tracer_ring_walk_set, and stamp nothing until tracer_ring_stamp.
   Returns 0 and *OUT, or -EINVAL, or -errno. */
int tracer_ring_new(uint64_t size, uint32_t thread_cap, uint32_t thread_max,
		    uint32_t rule_cap, uint32_t stack_copy,
		    struct tracer_ring **out);
/* tracer_ring_new on FD, an empty memfd (made in the target, so that the
   target needs no way into heaptrace's files), which R owns from now on,
   failure included. */
int tracer_ring_new_on(int fd, uint64_t size, uint32_t thread_cap,
		       uint32_t thread_max, uint32_t rule_cap,
		       uint32_t stack_copy, struct tracer_ring **out);

/* Unmap and close R. NULL is a no-op. */
void tracer_ring_free(struct tracer_ring *r);

/* The memfd, owned by R. */
int tracer_ring_fd(const struct tracer_ring *r);

/* How the target maps R: reserve MAP_LEN bytes at some A, then map the
   memfd at A for FILE_LEN bytes from offset 0, and again at A + FILE_LEN
   for SIZE bytes from offset DATA_OFF (both MAP_SHARED|MAP_FIXED, RW). */
struct tracer_ring_layout {
	uint64_t map_len;
	uint64_t file_len;
	uint64_t data_off;
	uint64_t size;
};
void tracer_ring_layout(const struct tracer_ring *r,
			struct tracer_ring_layout *out);

/* R's header as mapped in the tracer; valid until tracer_ring_free. */
struct ring_header *tracer_ring_header(struct tracer_ring *r);

/* The class of records an entry point produces. */
enum ring_class tracer_ring_fn_class(enum ht_alloc_fn fn);

/* Describe patched function IDX (below RING_MAX_FNS) to the stubs: FN's
   entry ENTRY, its relocated original ORIG, its object's code [LO, HI).
   Must precede the patch that makes the trampoline reachable. Returns 0 or
   -EINVAL. */
int tracer_ring_fn_set(struct tracer_ring *r, unsigned idx,
		       enum ht_alloc_fn fn, uint64_t entry, uint64_t orig,
		       uint64_t lo, uint64_t hi);

/* Have stubs sample allocations every INTERVAL bytes on average (0: record
   every call), each thread drawing from its own stream of SEED for
   process ordinal PROC (tracer/inline/sample.h), the sampled-address set
   sized for INTERVAL (sample_set_shift_for). Before any thread entry or
   descriptor is made. Returns 0 or -EINVAL. */
int tracer_ring_sampling_set(struct tracer_ring *r, uint64_t interval,
			     uint64_t seed, uint32_t proc);

/* R's set of sampled block addresses, in the tracer's mapping, and its
   shift (2^(64 - *SHIFT) buckets): the ptrace path keeps it too. */
struct sample_bucket *tracer_ring_sample_set(struct tracer_ring *r,
					     uint32_t *shift);

/* Copy SRC's sampled-address set into DST's (a fork child's ring: its
   blocks are its parent's). */
void tracer_ring_sample_set_copy(struct tracer_ring *dst,
				 struct tracer_ring *src);

/* Describe hook IDX (below RING_MAX_FNS): ENTRY, whose relocated
   original is ORIG, in the object [LO, HI), is RING_CLASS_NOTIFY
   (_dl_debug_state), RING_CLASS_EXIT (_exit), or a page call's class
   (RING_CLASS_PAGE, RING_CLASS_PAGE_ENTRY) for FN, an enum ring_page_fn
   (0 for the others). Before its patch goes in. Returns 0 or -EINVAL. */
int tracer_ring_hook_set(struct tracer_ring *r, unsigned idx,
			 enum ring_class cls, unsigned fn, uint64_t entry,
			 uint64_t orig, uint64_t lo, uint64_t hi);

/* The exit-time frees RING_CLASS_EXIT calls first (C++'s, then libc's;
   0: none). */
void tracer_ring_freeres_set(struct tracer_ring *r, uint64_t cxx,
			     uint64_t libc);

/* Answer the question at ring position POS (its args[0]) and every one
   before it: their stubs go on. */
void tracer_ring_notify_ack(struct tracer_ring *r, uint64_t pos);

/* Insert or update the thread whose thread pointer is TCB: TID, and the
   stack [STACK_LO, STACK_HI). Only while that thread is stopped or not yet
   running (attach, its first stop); others may run.
   Async-signal-safe. Returns 0, -EINVAL for a reserved TCB, or -ENOSPC
   when the table is full. */
int tracer_ring_thread_set(struct tracer_ring *r, uint64_t tcb, uint32_t tid,
			   uint64_t stack_lo, uint64_t stack_hi);

/* Have the records made on the thread pointer TCB carry TID from now on:
   another thread runs on it (a vfork child runs on its parent's thread
   pointer and stack). Only while nothing runs on it. Returns 0, or
   -ENOENT when TCB has no entry. */
int tracer_ring_thread_retag(struct tracer_ring *r, uint64_t tcb,
			     uint32_t tid);

/* Forget the thread whose thread pointer is TCB (it exited). A no-op when
   it is not there. */
void tracer_ring_thread_remove(struct tracer_ring *r, uint64_t tcb);

/* Have stubs walk stacks, recording at most MAX addresses each (at most
   RING_MAX_PCS, and a record of that many and PY_MAX_FRAMES Python
   words must fit in a quarter of the ring), or copy them (MAX 0).
   Before any patch goes in. Returns 0 or -EINVAL. */
int tracer_ring_walk_set(struct tracer_ring *r, uint32_t max);
/* How stubs use their walk memos (ring.h; RING_MEMO_ON from the start).
   Before any patch goes in. */
void tracer_ring_memo_set(struct tracer_ring *r, enum ring_memo_mode mode);

/* Have stubs record the Python frames of the allocating thread as PP
   says (tracer/python/pyword.h), from their next record on; NULL (or
   PP's MAX_FRAMES 0): no more. While stubs run: they see either no
   parameters or all of them. */
void tracer_ring_python_set(struct tracer_ring *r,
			    const struct py_walk_params *pp);

/* Have stubs stamp each record with the TSC, and the drain give each
   record's time on CLOCK_MONOTONIC (tracer_ring_item.time_ns), calibrated
   from pairs read now and at each drain. Only where tsc_usable() (tsc.h);
   before any patch goes in. */
void tracer_ring_stamp(struct tracer_ring *r);

/* Add the rule for lookup pc PC (not 0), RULE's other fields, to the rule
   table; a no-op when PC has one. While stubs run, like the thread table;
   one writer at a time. Returns 0, -EINVAL, or -ENOSPC when the table is
   as full as it may get (tracer_ring_rules_reset, then add again). */
int tracer_ring_rule_set(struct tracer_ring *r, uint64_t pc,
			 const struct ring_rule *rule);

/* Empty the rule table (the code at some addresses may have changed), so
   that stubs ask again. Stubs in the middle of a walk see the change and
   copy their stack instead. */
void tracer_ring_rules_reset(struct tracer_ring *r);

/* One consumed record, as the drain callback sees it. Everything is
   borrowed until the callback returns. */
struct tracer_ring_item {
	const struct ring_record *rec; /* as the stub wrote it */
	bool has_event;        /* EV is to be reported; false for a failed
				  allocation and REALLOC_BEGIN of NULL */
	struct ht_event ev;    /* tid, kind, fn, sizes; time and pcs unset */
	struct tracer_capture cap; /* when COPIED: regs at F's entry (rip,
				      rsp, rbp, rbx, r12-r15; the rest 0)
				      and the stack; else all 0 */
	const uint64_t *pcs;   /* the record's addresses: F's entry, then
				  return addresses (not minus one) */
	unsigned npcs;         /* 0: unwind CAP instead */
	const uint64_t *pywords; /* then the thread's Python frames
				    (pyword.h), innermost first */
	unsigned npywords;
	enum ring_copy copied; /* why CAP holds a copy; RING_COPY_NONE: it
				  does not */
	uint64_t time_ns;      /* CLOCK_MONOTONIC when the call was made,
				  never before the previous record's; 0
				  unless tracer_ring_stamp */
};

/* Called for each record in ring order. A nonzero return stops the drain
   before the record is consumed and is returned by it. */
typedef int (*tracer_ring_item_fn)(void *arg,
				   const struct tracer_ring_item *it);

/* Deliver R's records to FN in ring order, consuming each, up to the head
   as read on entry. A record not yet committed is waited for with a short
   spin, then 20 µs sleeps, for at most WAIT_NS in all (0: do not wait).
   Async-signal-safe when FN is. Returns the number of records delivered,
   FN's nonzero return, or -HT_E_FORMAT for a record the stub cannot have
   written (the target corrupted the ring; R is then unusable). */
long tracer_ring_drain(struct tracer_ring *r, uint64_t wait_ns,
		       tracer_ring_item_fn fn, void *arg);

/* Bytes reserved by producers and not yet consumed. */
uint64_t tracer_ring_pending(struct tracer_ring *r);

/* Convert REC into EV (tid, kind, fn, addr, old_addr, size, align) as
   common/event.h defines them for a multi-threaded stream: REALLOC_BEGIN
   records become HT_EV_REALLOC_BEGIN, and a realloc of a non-NULL block is
   reported failed or not. Returns false when there is no event: a failed
   allocation (realloc(NULL, n) included), or a BEGIN for NULL. */
bool tracer_ring_record_event(const struct ring_record *rec,
			      struct ht_event *ev);

/* R's consumer counters, with the internal calls of live threads added. */
void tracer_ring_stats(struct tracer_ring *r, struct tracer_ring_stats *out);

#endif
