/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Open-addressing u64 map; see u64map.h. */
#include "u64map.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

static size_t
hash(uint64_t k)
{
	/* Addresses share low zero bits and high prefixes; mix them all. */
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (size_t)k;
}

void
u64map_init(struct u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void
u64map_fini(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static size_t
find(const struct u64map *m, uint64_t key, bool *found)
{
	size_t mask = m->cap - 1;
	size_t i = hash(key) & mask;
	while (m->used[i]) {
		if (m->keys[i] == key) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
	*found = false;
	return i;
}

static void
rehash(struct u64map *m, size_t cap)
{
	struct u64map n = {
		.keys = ht_xcalloc(cap, sizeof(uint64_t)),
		.vals = ht_xcalloc(cap, sizeof(uint64_t)),
		.used = ht_xcalloc(cap, 1),
		.cap = cap,
		.count = m->count,
	};
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		bool found;
		size_t j = find(&n, m->keys[i], &found);
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	free(m->used);
	*m = n;
}

uint64_t *
u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->count)
		return NULL;
	bool found;
	size_t i = find(m, key, &found);
	return found ? &m->vals[i] : NULL;
}

uint64_t *
u64map_slot(struct u64map *m, uint64_t key, bool *fresh)
{
	if ((m->count + 1) * 4 > m->cap * 3)
		rehash(m, m->cap ? m->cap * 2 : 16);
	bool found;
	size_t i = find(m, key, &found);
	if (!found) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->count++;
	}
	if (fresh)
		*fresh = !found;
	return &m->vals[i];
}

void
u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	*u64map_slot(m, key, NULL) = val;
}

bool
u64map_remove(struct u64map *m, uint64_t key, uint64_t *val)
{
	if (!m->count)
		return false;
	bool found;
	size_t i = find(m, key, &found);
	if (!found)
		return false;
	if (val)
		*val = m->vals[i];
	size_t mask = m->cap - 1;
	/* Backward-shift: pull later members of the probe run into the hole
	   when their home slot does not lie strictly between hole and them. */
	size_t hole = i;
	for (size_t j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = hash(m->keys[j]) & mask;
		bool movable = hole <= j ? (home <= hole || home > j)
					 : (home <= hole && home > j);
		if (movable) {
			m->keys[hole] = m->keys[j];
			m->vals[hole] = m->vals[j];
			hole = j;
		}
	}
	m->used[hole] = 0;
	m->count--;
	return true;
}

void
u64map_copy(struct u64map *dst, const struct u64map *src)
{
	u64map_init(dst);
	if (!src->cap)
		return;
	dst->cap = src->cap;
	dst->count = src->count;
	dst->keys = ht_xcalloc(src->cap, sizeof(uint64_t));
	dst->vals = ht_xcalloc(src->cap, sizeof(uint64_t));
	dst->used = ht_xcalloc(src->cap, 1);
	memcpy(dst->keys, src->keys, src->cap * sizeof(uint64_t));
	memcpy(dst->vals, src->vals, src->cap * sizeof(uint64_t));
	memcpy(dst->used, src->used, src->cap);
}

bool
u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val)
{
	for (size_t i = *pos; i < m->cap; i++) {
		if (m->used[i]) {
			*key = m->keys[i];
			*val = m->vals[i];
			*pos = i + 1;
			return true;
		}
	}
	return false;
}
