/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A direct-mapped table of spliced stacks (pymemo.h). Each slot keeps
   its whole key, compared word for word: a hash collision costs a
   splice, never a wrong stack. */
#include "tracer/inline/pymemo.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "tracer/python/pyword.h"

#define MEMO_SLOTS 64 /* stacks remembered: a loop's few, a drain's few */

struct memo_slot {
	uint64_t hash;
	uint64_t gen;  /* the memo's generation it was put in; 0: empty */
	unsigned npcs, nwords, n;
};

struct py_memo {
	unsigned max_pcs;
	uint64_t gen;
	struct memo_slot slots[MEMO_SLOTS];
	uint64_t *keys; /* MEMO_SLOTS keys of max_pcs + PY_MAX_FRAMES */
	uint64_t *outs; /* MEMO_SLOTS stacks of max_pcs */
};

struct py_memo *
py_memo_new(unsigned max_pcs)
{
	struct py_memo *m = ht_xcalloc(1, sizeof(*m));
	m->max_pcs = max_pcs;
	m->gen = 1;
	m->keys = ht_xcalloc((size_t)MEMO_SLOTS * (max_pcs + PY_MAX_FRAMES),
			     sizeof(*m->keys));
	m->outs = ht_xcalloc((size_t)MEMO_SLOTS * max_pcs, sizeof(*m->outs));
	return m;
}

void
py_memo_free(struct py_memo *m)
{
	if (!m)
		return;
	free(m->keys);
	free(m->outs);
	free(m);
}

void
py_memo_clear(struct py_memo *m)
{
	m->gen++;
}

/* A key's hash from its counts, its innermost words of each kind (where
   stacks differ most) and its outermost: keys alike in those share a
   slot, compared in full, which costs a splice at worst. Hashing every
   word of a 60-deep Python stack at each record cost more than the
   compare. The products overlap, where a multiply-and-mix chain would
   wait on each. */
#define HASH_HEAD 8

static uint64_t
hash_words(uint64_t h, const uint64_t *w, unsigned n)
{
	unsigned head = n < HASH_HEAD ? n : HASH_HEAD;
	for (unsigned i = 0; i < head; i++)
		h += (w[i] ^ i) * 0x9e3779b97f4a7c15ULL;
	if (n > head)
		h += w[n - 1] * 0xc2b2ae3d27d4eb4fULL;
	return h;
}

static uint64_t
key_hash(const uint64_t *pcs, unsigned npcs, const uint64_t *words,
	 unsigned nwords)
{
	uint64_t h = hash_words(npcs ^ (uint64_t)nwords << 32, pcs, npcs);
	h = hash_words(h * 0xbf58476d1ce4e5b9ULL, words, nwords);
	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	return h ^ h >> 29;
}

static uint64_t *
slot_key(struct py_memo *m, const struct memo_slot *s)
{
	return m->keys + (size_t)(s - m->slots) * (m->max_pcs + PY_MAX_FRAMES);
}

static uint64_t *
slot_out(struct py_memo *m, const struct memo_slot *s)
{
	return m->outs + (size_t)(s - m->slots) * m->max_pcs;
}

static bool
fits(const struct py_memo *m, unsigned npcs, unsigned nwords)
{
	return npcs <= m->max_pcs && nwords <= PY_MAX_FRAMES;
}

const uint64_t *
py_memo_get(struct py_memo *m, const uint64_t *pcs, unsigned npcs,
	    const uint64_t *words, unsigned nwords, unsigned *n)
{
	if (!fits(m, npcs, nwords))
		return NULL;
	uint64_t h = key_hash(pcs, npcs, words, nwords);
	struct memo_slot *s = &m->slots[h % MEMO_SLOTS];
	if (s->gen != m->gen || s->hash != h || s->npcs != npcs ||
	    s->nwords != nwords)
		return NULL;
	const uint64_t *k = slot_key(m, s);
	if (memcmp(k, pcs, npcs * sizeof(*pcs)) ||
	    memcmp(k + npcs, words, nwords * sizeof(*words)))
		return NULL;
	*n = s->n;
	return slot_out(m, s);
}

void
py_memo_put(struct py_memo *m, const uint64_t *pcs, unsigned npcs,
	    const uint64_t *words, unsigned nwords, const uint64_t *out,
	    unsigned n)
{
	if (!fits(m, npcs, nwords) || n > m->max_pcs)
		return;
	uint64_t h = key_hash(pcs, npcs, words, nwords);
	struct memo_slot *s = &m->slots[h % MEMO_SLOTS];
	uint64_t *k = slot_key(m, s);
	memcpy(k, pcs, npcs * sizeof(*pcs));
	memcpy(k + npcs, words, nwords * sizeof(*words));
	memcpy(slot_out(m, s), out, n * sizeof(*out));
	*s = (struct memo_slot){
		.hash = h, .gen = m->gen, .npcs = npcs, .nwords = nwords,
		.n = n,
	};
}
