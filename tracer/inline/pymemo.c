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

static uint64_t
hash_words(uint64_t h, const uint64_t *w, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	return h;
}

static uint64_t
key_hash(const uint64_t *pcs, unsigned npcs, const uint64_t *words,
	 unsigned nwords)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ npcs ^ (uint64_t)nwords << 32;
	return hash_words(hash_words(h, pcs, npcs), words, nwords);
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
