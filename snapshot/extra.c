/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The extra-heap model handle: picks the model's ops table, keeps the
   options every model reads, and checks requests once for all of them
   before dispatching. The models live in extra_valgrind.c, extra_glibc.c
   and extra_estimate.c. */
#include "snapshot/extra.h"

#include <stddef.h>
#include <stdlib.h>

#include "common/xalloc.h"
#include "snapshot/extra_priv.h"

static const struct extra_ops *const models[] = {
	[SNAP_EXTRA_VALGRIND] = &extra_valgrind_ops,
	[SNAP_EXTRA_GLIBC] = &extra_glibc_ops,
	[SNAP_EXTRA_ESTIMATE] = &extra_estimate_ops,
};

/* Options are validated upstream; still, a bad alignment here would break
   every mask computation of the models, so clamp it to what Valgrind
   accepts rather than trust it. */
static uint64_t
pow2_at_least_16(uint64_t a)
{
	uint64_t p = 16;

	while (p < a && p < ((uint64_t)1 << 63))
		p <<= 1;
	return p;
}

struct snap_extra *
snap_extra_new(enum snap_extra_kind kind, const struct ht_options *opt)
{
	struct snap_extra *x = ht_xcalloc(1, sizeof(*x));

	if ((size_t)kind >= sizeof(models) / sizeof(models[0]))
		kind = SNAP_EXTRA_ESTIMATE;
	x->ops = models[kind];
	/* Massif forces the admin bytes to 0 when pages are the heap. */
	x->admin = opt->pages_as_heap ? 0 : opt->heap_admin;
	x->alignment = pow2_at_least_16(opt->alignment);
	x->ops->init(x);
	return x;
}

void
snap_extra_free(struct snap_extra *x)
{
	if (!x)
		return;
	x->ops->fini(x);
	free(x);
}

struct snap_extra *
snap_extra_clone(const struct snap_extra *x)
{
	struct snap_extra *c = ht_xmalloc(sizeof(*c));

	*c = *x;
	c->state = NULL;
	x->ops->clone(c, x);
	return c;
}

const char *
snap_extra_name(const struct snap_extra *x)
{
	return x->ops->name;
}

int
snap_extra_alloc(struct snap_extra *x, uint64_t req, uint64_t align,
		 uint64_t usable, struct snap_extra_block *out)
{
	if (req > EXTRA_MAX_REQ)
		return -1;
	if (align)
		align = pow2_at_least_16(align);
	if (x->ops->alloc(x, req, align, usable, out) < 0)
		return -1;
	out->extra = x->ops->extra_of(x, req, out->cookie);
	return 0;
}

uint64_t
snap_extra_of(const struct snap_extra *x, uint64_t req, uint64_t cookie)
{
	return x->ops->extra_of(x, req, cookie);
}

void
snap_extra_release(struct snap_extra *x, const struct snap_extra_block *b)
{
	x->ops->release(x, b);
}

int
snap_extra_realloc(struct snap_extra *x, struct snap_extra_block *b,
		   uint64_t req_old, uint64_t req_new, uint64_t usable)
{
	if (req_new > EXTRA_MAX_REQ)
		return -1;
	if (x->ops->realloc(x, b, req_old, req_new, usable) < 0)
		return -1;
	b->extra = x->ops->extra_of(x, req_new, b->cookie);
	return 0;
}
