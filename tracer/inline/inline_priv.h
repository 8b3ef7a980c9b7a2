/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inline path's per-process state, shared by inline.c (setting up,
   patching, draining) and inline_detach.c (taking it out of a process
   that runs on). Only those two include this. */
#ifndef HT_TRACER_INLINE_PRIV_H
#define HT_TRACER_INLINE_PRIV_H

#include "tracer/inline/consumer.h"
#include "tracer/inline/inline.h"

struct inline_patch {
	uint64_t addr;
	size_t covered;
	uint8_t orig[ARCH_RELOC_MAX_COVERED];
	uint64_t orig_code; /* relocated prologue in the target */
	uint64_t tramp;
	enum ht_alloc_fn fn;
	int hook;           /* 0, or the class of a hook (inline_target) */
	unsigned hook_fn;   /* a page call's enum ring_page_fn */
	uint64_t syscall_pc; /* a page call's syscall instruction: its
				records' innermost frame, as at a syscall
				stop; 0 unknown */
	uint64_t obj_lo, obj_hi;
};

/* A vfork child of the ring's process, which runs in its memory: records
   tagged with its TID are its own (inline_vfork_child). PROC NULL: it has
   left, and its records still in the ring (before position GONE_HEAD)
   are dropped. */
struct vfork_route {
	uint32_t tid;
	struct tproc *proc;
	uint64_t gone_head;
};

struct inline_proc {
	struct tracer_ring *ring;
	uint64_t ring_addr;   /* where the header is mapped in the target */
	uint64_t blob;        /* the stub blob in the target */
	struct inline_patch patches[RING_MAX_FNS];
	unsigned n_patches;
	bool broken;          /* the ring was corrupted: events are lost */
	bool drain_time;      /* --time-unit=ms without a usable TSC: records
				 are timed when drained */
	struct tproc *owner;  /* the process whose memory holds the ring;
				 NULL once gone (a vfork child outlived it) */
	unsigned refs;        /* the owner and its vfork children */
	struct vfork_route *vforks;
	size_t n_vforks, cap_vforks;
	uint32_t rules;       /* rules published since the rule table was
				 last emptied (inline.c) */
	bool entries_given;   /* every thread there was got its thread-table
				 entry at the first patching (an attach's
				 threads); later ones get theirs at their
				 first stop */
	bool python_published; /* the ring has the owner's interpreter's
				  walk parameters (inline.c) */
	struct py_memo *py_memo; /* stacks spliced this drain (pymemo.h),
				    made at the first splice */
};

#endif
