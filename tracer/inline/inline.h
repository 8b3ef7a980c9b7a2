/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inline event path, as the rest of the tracer sees it: a ring and
   stubs set up in a process, allocator entries patched to record through
   them, the records drained into the sink, and all of it taken out again
   at a detach (docs/inline-backend.md). It reads and patches the target
   (target/), holds threads still (proc/) and stamps events (measure/);
   the records it does not interpret go up through struct inline_client. */
#ifndef HT_TRACER_INLINE_INLINE_H
#define HT_TRACER_INLINE_INLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "tracer/proc/proc.h"

/* ---- inline.c: setting up, patching, draining ---- */
/* What a ring carries that the inline path delivers but does not
   interpret: records whose meaning is a concern above it. The session
   sets it (tracer_init) before any ring is made. */
struct inline_client {
	/* A NOTIFY record: ld.so changed its link map, TID waiting in its
	   stub (loader_debug_state). */
	int (*debug_state)(struct tracer *t, struct tproc *p, pid_t tid,
			   bool stopped);
	/* A page call record: describe it as *EV, false for none
	   (pagecalls_describe_inline). */
	bool (*describe_page)(struct tproc *p, unsigned fn,
			      const uint64_t args[3], uint64_t rv,
			      struct ht_event *ev);
};
/* Give P a ring and the stub blob (near NEAR); TID stopped safely. */
int inline_setup(struct tracer *t, struct tproc *p, pid_t tid, uint64_t near);
/* One allocator entry for inline_patch. */
struct inline_target {
	uint64_t addr;
	size_t func_len;          /* its ELF size, 0 unknown */
	enum ht_alloc_fn fn;
	uint64_t lo, hi;          /* the object holding it */
	int hook;                 /* 0: an allocator; RING_CLASS_NOTIFY
				     (_dl_debug_state), RING_CLASS_EXIT
				     (_exit, --massif-compat=yes), or a page
				     call's class (RING_CLASS_PAGE...) */
	unsigned hook_fn;         /* a page call's enum ring_page_fn */
	int err;                  /* set: 0 patched, negative: keep an int3 */
};
/* Patch each of the N TARGETS of P to record through the ring (TID
   stopped safely), P's other threads stopped once around all the writes;
   each target's ERR says how it went. */
void inline_patch(struct tracer *t, struct tproc *p, pid_t tid,
		  struct inline_target *targets, size_t n);
/* True when P records through a ring. */
bool inline_active(const struct tproc *p);
/* Deliver P's committed records, waiting up to WAIT_NS for one being
   written. Returns how many. */
long inline_drain(struct tracer *t, struct tproc *p, uint64_t wait_ns);
/* inline_drain of every process, without waiting. */
long inline_drain_all(struct tracer *t);
/* Bytes recorded in every ring and not drained yet. */
uint64_t inline_pending_all(struct tracer *t);
/* TC is stopped (attach, its first stop, a fork child's first stop):
   give it its thread-table entry (thread pointer, tid, stack bounds) so
   that its stubs record from its first call without asking anyone.
   A no-op when its process has no ring. */
void inline_thread_known(struct tracer *t, struct tracee *tc);
/* Every stopped thread of P (but those whose first stop is to come) gets
   its thread-table entry, as inline_thread_known gives one. */
void inline_threads_known(struct tracer *t, struct tproc *p);
/* TC is exiting: drain, and forget its thread-table entry. */
void inline_thread_gone(struct tracer *t, struct tracee *tc);
/* CHILD, a fork of PARENT held at its first stop TID, gets PARENT's
   patched entries' original bytes back (it is let go untraced: its
   stubs would write into PARENT's ring). 0 or -errno. */
int inline_fork_child_unpatch(const struct tproc *parent, struct tproc *child,
			      pid_t tid);
/* Give CHILD, a fork of PARENT held at its first stop TID, a ring of its
   own at the same address. 0 or -errno. */
int inline_fork_child(struct tracer *t, struct tproc *parent,
		      struct tproc *child, pid_t tid);
/* TC (stopped at PTRACE_EVENT_VFORK) vforked CHILD, which runs in TC's
   process's memory until it execs or exits: it shares that ring, and its
   records there go to CHILD's profile, never to the parent's. */
void inline_vfork_child(struct tracee *tc, struct tproc *child);
/* TC runs again after its vfork (PTRACE_EVENT_VFORK_DONE): its records are
   its own again. */
void inline_vfork_done(struct tracee *tc);
/* Where P's ring is mapped in P: [*LO, *HI). False when it has none. */
bool inline_ring_extent(const struct tproc *p, uint64_t *lo, uint64_t *hi);
/* The doorbell of the ring P owns (ring.h), or NULL. */
uint32_t *inline_doorbell(struct tproc *p);
/* P's exit-time frees (P->freeres) are known: the _exit stub calls
   them (--massif-compat=yes). */
void inline_exit_frees(struct tproc *p);
/* P's code changed at some addresses (libraries mapped): the stubs' rules
   are asked for again. */
void inline_modules_changed(struct tproc *p);
/* Print P's inline counters (--stats=yes). */
void inline_report(struct tproc *p);
/* The set of sampled block addresses of the ring P uses (shift in
   *SHIFT: tracer/inline/sample.h), or NULL when P has no ring. */
struct sample_bucket *inline_sample_set(struct tproc *p, uint32_t *shift);
/* That ring's flags, whose RING_F_SET_FULL says "the set overflowed:
   every free is recorded", or NULL. */
uint32_t *inline_sample_full(struct tproc *p);
/* Free P's inline state (the target's copy goes with its image; a ring
   shared with vfork children lasts until the last of them is done). */
void inline_free(struct tproc *p);

/* ---- inline_detach.c: taking it out of a process that runs on ---- */
/* Detaching (detach.c), every thread of P stopped: drain P's ring, let
   the stubs pass every call straight through, take the patches out, and
   unmap what no thread can still reach (docs/inline-backend.md,
   "Detaching"). TID: a stopped thread to inject system calls from, 0 if
   none. */
void inline_detach(struct tracer *t, struct tproc *p, pid_t tid);
/* P's last thread is gone: deliver every record committed in its ring,
   past the records its threads were killed before writing. */
void inline_drain_final(struct tracer *t, struct tproc *p);

#endif
