/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --sampling-interval on the ptrace path: the same sampler the inline
   stub runs (tracer/inline/sample.h), run here at an allocator's entry
   stop before any stack is unwound, each thread with its own counter and
   stream; and the set of sampled block addresses, the ring's when the
   process has one (a block allocated here may be freed through a stub,
   and the other way round), else one of the tracer's own. */
#include "tracer/probes/probes.h"

#include <stdlib.h>

#include "common/xalloc.h"
#include "tracer/inline/inline.h"
#include "tracer/inline/ring.h"
#include "tracer/inline/sample.h"

/* Streams of the ptrace path are drawn apart from the stubs' (a thread
   whose calls go both ways has one of each). */
#define PTRACE_STREAM 0x70747261636531ULL

/* P's set, its shift in *SHIFT, and the word of its overflow flag
   (RING_F_SET_FULL) in *FULL; one the tracer keeps itself is sized for
   T's interval as a ring's is. */
static struct sample_bucket *
set_of(const struct tracer *t, struct tproc *p, uint32_t *shift,
       uint32_t **full)
{
	struct sample_bucket *b = inline_sample_set(p, shift);
	if (b) {
		*full = inline_sample_full(p);
		return b;
	}
	if (!p->sampled) {
		p->sampled_shift =
			sample_set_shift_for(t->opt->sampling_interval);
		p->sampled = ht_xcalloc(1, sample_set_bytes(p->sampled_shift));
	}
	*shift = p->sampled_shift;
	*full = &p->sampled_full;
	return p->sampled;
}

uint64_t
sampled_call_size(enum ht_alloc_fn fn, const uint64_t args[3])
{
	uint64_t s;
	switch (fn) {
	case HT_FN_CALLOC:
		return __builtin_mul_overflow(args[0], args[1], &s) ? ~0ULL : s;
	case HT_FN_REALLOCARRAY:
		return __builtin_mul_overflow(args[1], args[2], &s) ? ~0ULL : s;
	case HT_FN_REALLOC:
	case HT_FN_MEMALIGN:
	case HT_FN_ALIGNED_ALLOC:
		return args[1];
	case HT_FN_POSIX_MEMALIGN:
		return args[2];
	default:
		return args[0];
	}
}

uint32_t
sampled_take(struct tracer *t, struct tracee *tc, uint64_t size)
{
	uint64_t interval = t->opt->sampling_interval;
	if (!tc->sample_ready) {
		tc->sample_rng = sample_stream(t->opt->sampling_seed ^
						       PTRACE_STREAM,
					       tc->proc->ordinal,
					       tc->proc->n_threads_seen++);
		tc->sample_left = (int64_t)sample_gap(&tc->sample_rng, interval);
		tc->sample_ready = true;
	}
	return sample_take(&tc->sample_left, &tc->sample_rng, interval, size);
}

void
sampled_insert(const struct tracer *t, struct tproc *p, uint64_t addr)
{
	uint32_t shift, *full;
	struct sample_bucket *b = set_of(t, p, &shift, &full);
	if (addr && sample_set_insert(b, shift, addr) < 0)
		__atomic_fetch_or(full, RING_F_SET_FULL, __ATOMIC_RELAXED);
}

bool
sampled_forget(const struct tracer *t, struct tproc *p, uint64_t addr)
{
	uint32_t shift, *full;
	struct sample_bucket *b = set_of(t, p, &shift, &full);
	return sample_set_remove(b, shift, addr) ||
	       (__atomic_load_n(full, __ATOMIC_RELAXED) & RING_F_SET_FULL);
}

uint64_t
sampled_weight(const struct tracer *t, uint32_t k, uint64_t size)
{
	return sample_weight(k, t->opt->sampling_interval, size);
}
