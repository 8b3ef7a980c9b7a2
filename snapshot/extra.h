/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Extra-heap models: how many bytes beyond the request a block costs.
   Massif charges --heap-admin plus the slop of Valgrind's own allocator;
   a native profile charges what the real allocator spends. The engine asks
   a model at every allocation, free and realloc and keeps the model's
   per-block cookie in its block table, so models need no lookup of their own
   by the target's addresses. */
#ifndef HT_SNAPSHOT_EXTRA_H
#define HT_SNAPSHOT_EXTRA_H

#include <stdint.h>

#include "common/options.h"

enum snap_extra_kind {
	SNAP_EXTRA_VALGRIND, /* --massif-compat=yes: emulate Valgrind 3.19's
				client arena (heap-admin + its slop) */
	SNAP_EXTRA_GLIBC,    /* glibc's chunk size minus the request */
	SNAP_EXTRA_ESTIMATE, /* unknown allocator: heap-admin plus rounding
				to the alignment, Massif's rule of thumb */
};

struct snap_extra;

/* What a model decided for one block. */
struct snap_extra_block {
	uint64_t extra;  /* bytes charged beyond the request (admin + slop) */
	uint64_t cookie; /* the model's handle for the block; passed back on
			    free and realloc */
};

/* A new model of KIND configured from OPT (heap_admin, alignment). */
struct snap_extra *snap_extra_new(enum snap_extra_kind kind,
				  const struct ht_options *opt);
/* Free X; NULL is a no-op. */
void snap_extra_free(struct snap_extra *x);
/* An independent copy of X (for a forked process). */
struct snap_extra *snap_extra_clone(const struct snap_extra *x);
/* Short name of X's model ("valgrind", "glibc", "estimate"). */
const char *snap_extra_name(const struct snap_extra *x);

/* A block of REQ bytes was allocated with alignment ALIGN (already
   normalised by the engine: 0 for plain malloc-family calls, else a power of
   two >= 16). USABLE is the real chunk size when the event source read it,
   else 0. Returns 0 and fills *OUT, or -1 when the model's allocator would
   have failed the request (nothing is recorded then). */
int snap_extra_alloc(struct snap_extra *x, uint64_t req, uint64_t align,
		     uint64_t usable, struct snap_extra_block *out);
/* The block described by B (as returned for it) is freed. */
void snap_extra_release(struct snap_extra *x, const struct snap_extra_block *b);
/* The extra bytes of the live block of REQ bytes the model handed COOKIE
   (what alloc or realloc put in its snap_extra_block), so that a caller
   holding many blocks need keep only the cookie. */
uint64_t snap_extra_of(const struct snap_extra *x, uint64_t req,
		       uint64_t cookie);
/* The block B holding REQ_OLD bytes is resized to REQ_NEW bytes; USABLE as
   for snap_extra_alloc. Updates *B in place. Returns 0, or -1 when the
   model's allocator would have failed (B unchanged). */
int snap_extra_realloc(struct snap_extra *x, struct snap_extra_block *b,
		       uint64_t req_old, uint64_t req_new, uint64_t usable);

#endif
