/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A hash map from 64-bit keys to 64-bit values (open addressing, linear
   probing, backward-shift deletion: no tombstones, so a map that sees
   millions of inserts and removals stays as small as its live contents). */
#ifndef HT_COMMON_U64MAP_H
#define HT_COMMON_U64MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap;   /* a power of two, or 0 */
	size_t count;
};

/* Make M an empty map. */
void u64map_init(struct u64map *m);
/* Free what M owns; M is empty afterwards. */
void u64map_fini(struct u64map *m);
/* Pointer to the value of KEY, or NULL when absent. Valid until the next
   insert or remove. */
uint64_t *u64map_get(const struct u64map *m, uint64_t key);
/* Set KEY to VAL, inserting it if absent. */
void u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Pointer to the value of KEY, inserted with value 0 if absent; *FRESH says
   which. Valid until the next insert or remove. */
uint64_t *u64map_slot(struct u64map *m, uint64_t key, bool *fresh);
/* Remove KEY. Returns true and stores its value in *VAL (if VAL) when it was
   present. */
bool u64map_remove(struct u64map *m, uint64_t key, uint64_t *val);
/* Make DST (uninitialised) an independent copy of SRC. */
void u64map_copy(struct u64map *dst, const struct u64map *src);

/* Iterate: for (size_t i = 0; u64map_next(m, &i, &k, &v); ) ... */
bool u64map_next(const struct u64map *m, size_t *pos, uint64_t *key, uint64_t *val);

#endif
