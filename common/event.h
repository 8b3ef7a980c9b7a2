/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one thing every event source produces and the snapshot engine
   consumes: an allocator call that completed, with the stack it came from.
   Nothing downstream knows whether it came from breakpoints, a ring buffer,
   or a file replayed by a test. */
#ifndef HT_COMMON_EVENT_H
#define HT_COMMON_EVENT_H

#include <stdbool.h>
#include <stdint.h>

enum ht_event_kind {
	HT_EV_ALLOC,   /* a new block: ADDR, SIZE, ALIGN */
	HT_EV_FREE,    /* ADDR given back (never NULL: sources drop free(NULL)) */
	HT_EV_REALLOC, /* OLD_ADDR resized to SIZE bytes, now at ADDR; ADDR 0
			  with SIZE 0 is realloc(p, 0) freeing OLD_ADDR, ADDR 0
			  with SIZE > 0 a failure (OLD_ADDR unchanged) */
	/* Thread TID is about to realloc OLD_ADDR (never NULL). Sent at the
	   call's entry, before the allocator can release OLD_ADDR, by sources
	   that report calls from several threads in one stream; the same
	   thread's REALLOC of OLD_ADDR follows, possibly after other threads'
	   events, and is always sent, failed or not. A source that drops a
	   REALLOC must drop its BEGIN too. */
	HT_EV_REALLOC_BEGIN,
	/* Thread TID has ended; sent after its last event. A realloc it began
	   and never completed is settled (snap_engine_feed). */
	HT_EV_THREAD_EXIT,

	/* --pages-as-heap=yes: the program's own page-level calls, as they
	   completed (failed calls are not sent). Addresses and sizes as the
	   kernel took them; the engine applies Massif's page rules, so a
	   source reports calls, not page ranges. FN is unused. PCS[0] is the
	   syscall instruction's pc (kept: Massif keeps the wrapper's frame). */
	HT_EV_MMAP,    /* [ADDR, ADDR + SIZE) mapped (also shmat); a mapping
			  present at start: one frame, pc 0 */
	HT_EV_MUNMAP,  /* [ADDR, ADDR + SIZE) unmapped (also shmdt) */
	HT_EV_MREMAP,  /* [OLD_ADDR, + OLD_SIZE) now [ADDR, + SIZE) */
	HT_EV_BRK,     /* the break moved from OLD_ADDR to ADDR */

	/* --stacks=yes: thread TID's stack holds SIZE bytes now (its stack's
	   top minus its stack pointer), as sampled; the first sample of a
	   thread is its base line. */
	HT_EV_STACK,
};

/* The entry point that produced an event. The engine applies Massif's rules
   per entry point (realloc(NULL, n) is a malloc, realloc(p, 0) a free,
   memalign's alignment is normalised), so sources report calls as made. */
enum ht_alloc_fn {
	HT_FN_MALLOC,
	HT_FN_CALLOC,
	HT_FN_REALLOC,
	HT_FN_REALLOCARRAY,
	HT_FN_MEMALIGN,
	HT_FN_POSIX_MEMALIGN,
	HT_FN_ALIGNED_ALLOC,
	HT_FN_VALLOC,
	HT_FN_PVALLOC,
	HT_FN_NEW,               /* operator new(size[, nothrow]) */
	HT_FN_NEW_ARRAY,         /* operator new[](size[, nothrow]) */
	HT_FN_NEW_ALIGNED,       /* operator new(size, align[, nothrow]) */
	HT_FN_NEW_ARRAY_ALIGNED, /* operator new[](size, align[, nothrow]) */
	HT_FN_FREE,
	HT_FN_DELETE,            /* operator delete(ptr, ...): every variant */
	HT_FN_DELETE_ARRAY,      /* operator delete[](ptr, ...) */
	/* CPython's arena allocator (_PyObject_Arena's functions) where
	   pymalloc is inlined: each arena one block (docs/python.md). */
	HT_FN_PYARENA_ALLOC,     /* alloc(ctx, size) */
	HT_FN_PYARENA_FREE,      /* free(ctx, ptr, size) */
	HT_FN_COUNT
};

struct ht_event {
	enum ht_event_kind kind;
	enum ht_alloc_fn fn;
	uint64_t addr;     /* the block returned (ALLOC, REALLOC) or freed (FREE) */
	uint64_t old_addr; /* REALLOC: the pointer passed in (0 for NULL);
			      MREMAP, BRK: the old address, the old break */
	uint64_t old_size; /* MREMAP: the old length */
	uint64_t size;     /* requested bytes: calloc's nmemb*size, realloc's new size */
	uint64_t align;    /* requested alignment; 0 when the call takes none */
	uint64_t weight;   /* --sampling-interval: a sampled block (ALLOC,
			      REALLOC) stands for WEIGHT bytes; 0: exact,
			      the block itself */
	uint64_t usable;   /* the real allocator's chunk size for ADDR when the
			      source read it, else 0 (models then use rules) */
	uint64_t time;     /* clock in the session's unit (ms or instructions);
			      ignored with --time-unit=B */
	uint32_t tid;      /* thread that made the call */
	uint32_t npcs;     /* entries in PCS */
	const uint64_t *pcs; /* the stack, innermost first: PCS[0] is inside the
				allocation function, the rest are return
				addresses minus one. Borrowed for the call. */
};

/* Describe the completed allocating call FN(ARGS) that returned RESULT
   (for posix_memalign: the pointer it stored, 0 when it failed) as an
   ALLOC or REALLOC event in *EV (kind, fn, addr, old_addr, size, align;
   tid, time and stack left unset). Returns false when there is nothing to
   report: a failed allocation. A realloc of a non-NULL block is always
   reported, failed or not (ADDR 0 with SIZE > 0 means it failed), since
   its old block must be settled. */
bool ht_event_from_call(enum ht_alloc_fn fn, const uint64_t args[3],
			uint64_t result, struct ht_event *ev);

/* Which of free-like FN's arguments is the pointer it frees (0 but for
   the arena free). */
unsigned ht_alloc_fn_ptr_arg(enum ht_alloc_fn fn);

/* How many frames under allocating FN's own are always the same internal
   caller, not the code that needed the memory: 1 for the arena alloc
   (pymalloc's allocate_from_new_pool), else 0. */
unsigned ht_alloc_fn_internal_callers(enum ht_alloc_fn fn);

/* Name of FN as a C programmer writes it ("malloc", "operator new"). */
const char *ht_alloc_fn_name(enum ht_alloc_fn fn);

#endif
