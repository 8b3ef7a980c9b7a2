/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the extra-heap models share: the model handle, the ops table each
   model file defines, and the few helpers they all need. Only extra*.c and
   the extra tests include this. */
#ifndef HT_SNAPSHOT_EXTRA_PRIV_H
#define HT_SNAPSHOT_EXTRA_PRIV_H

#include <stdint.h>

#include "snapshot/extra.h"

/* Requests above this fail in every model, as they do in Massif and glibc
   (both refuse sizes that do not fit in a signed word). */
#define EXTRA_MAX_REQ ((uint64_t)INT64_MAX)

struct snap_extra;

/* One model. Every member is mandatory. The dispatcher in extra.c has
   already rejected requests above EXTRA_MAX_REQ and normalised ALIGN to 0 or
   a power of two >= 16; the models see nothing else. */
struct extra_ops {
	const char *name;
	/* Allocate the model's private state into X->state (may leave it
	   NULL when the model keeps none). */
	void (*init)(struct snap_extra *x);
	/* Free X->state; called once, also when it is NULL. */
	void (*fini)(struct snap_extra *x);
	/* Make DST->state an independent copy of SRC->state. */
	void (*clone)(struct snap_extra *dst, const struct snap_extra *src);
	/* As snap_extra_alloc. */
	int (*alloc)(struct snap_extra *x, uint64_t req, uint64_t align,
		     uint64_t usable, struct snap_extra_block *out);
	/* As snap_extra_release. */
	void (*release)(struct snap_extra *x, const struct snap_extra_block *b);
	/* As snap_extra_realloc. */
	int (*realloc)(struct snap_extra *x, struct snap_extra_block *b,
		       uint64_t req_old, uint64_t req_new, uint64_t usable);
	/* As snap_extra_of. The extra bytes alloc and realloc return are
	   this function's, so the two cannot disagree. */
	uint64_t (*extra_of)(const struct snap_extra *x, uint64_t req,
			     uint64_t cookie);
};

struct snap_extra {
	const struct extra_ops *ops;
	uint64_t admin;     /* --heap-admin, 0 with --pages-as-heap */
	uint64_t alignment; /* --alignment, a power of two >= 16 */
	void *state;        /* owned by the model */
};

extern const struct extra_ops extra_valgrind_ops;
extern const struct extra_ops extra_glibc_ops;
extern const struct extra_ops extra_estimate_ops;

/* N rounded up to a multiple of A (a power of two); no overflow for the
   sizes the models see (N <= EXTRA_MAX_REQ, A <= 2^63). */
static inline uint64_t
extra_round_up(uint64_t n, uint64_t a)
{
	return (n + (a - 1)) & ~(a - 1);
}

/* For tests and debugging of the Valgrind model: the simulated payload
   address of the live block whose cookie is COOKIE, or 0 when it is not
   one. */
uint64_t extra_valgrind_payload(const struct snap_extra *x, uint64_t cookie);

/* For tests of the Valgrind model's footprint: how many block records
   (live, free or fragment) and superblocks it holds now. */
void extra_valgrind_footprint(const struct snap_extra *x, uint64_t *blocks,
			      uint64_t *superblocks);

#endif
