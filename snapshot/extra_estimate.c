/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SNAP_EXTRA_ESTIMATE: Massif's rule of thumb for an allocator we know
   nothing about: --heap-admin bytes of header per block plus the rounding of
   the request up to the alignment (at least 16). Stateless. */
#include "snapshot/extra.h"

#include "snapshot/extra_priv.h"

static void
estimate_init(struct snap_extra *x)
{
	x->state = NULL;
}

static void
estimate_fini(struct snap_extra *x)
{
	(void)x;
}

static void
estimate_clone(struct snap_extra *dst, const struct snap_extra *src)
{
	(void)src;
	dst->state = NULL;
}

/* ALIGN is 0 for plain calls, which get --alignment as under Massif. */
static uint64_t
estimate(const struct snap_extra *x, uint64_t req, uint64_t align)
{
	uint64_t a = align ? align : x->alignment;

	return x->admin + (extra_round_up(req, a) - req);
}

static int
estimate_alloc(struct snap_extra *x, uint64_t req, uint64_t align,
	       uint64_t usable, struct snap_extra_block *out)
{
	(void)usable;
	out->cookie = estimate(x, req, align); /* nothing else to remember */
	return 0;
}

static void
estimate_release(struct snap_extra *x, const struct snap_extra_block *b)
{
	(void)x;
	(void)b;
}

/* The original alignment is not kept: realloc never preserves it in C
   either, so the new size is rounded to --alignment. */
static int
estimate_realloc(struct snap_extra *x, struct snap_extra_block *b,
		 uint64_t req_old, uint64_t req_new, uint64_t usable)
{
	(void)req_old;
	(void)usable;
	b->cookie = estimate(x, req_new, 0);
	return 0;
}

static uint64_t
estimate_extra_of(const struct snap_extra *x, uint64_t req, uint64_t cookie)
{
	(void)x;
	(void)req;
	return cookie;
}

const struct extra_ops extra_estimate_ops = {
	.name = "estimate",
	.init = estimate_init,
	.fini = estimate_fini,
	.clone = estimate_clone,
	.alloc = estimate_alloc,
	.release = estimate_release,
	.realloc = estimate_realloc,
	.extra_of = estimate_extra_of,
};
