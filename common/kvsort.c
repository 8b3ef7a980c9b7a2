/* SPDX-License-Identifier: GPL-2.0-or-later */
/* LSD radix sort, a byte per pass. One first pass counts every byte of
   every key, so the passes whose byte is the same in all keys (the high
   bytes of addresses, of small ranks) are skipped without a look. */
#include "kvsort.h"

#include <stdlib.h>
#include <string.h>

#include "xalloc.h"

#define DIGITS 8
#define RADIX 256

/* Below this, insertion sort: the counting would cost more. */
#define SMALL 32

static void
insertion_sort(struct ht_kv *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct ht_kv x = v[i];
		size_t j = i;
		while (j > 0 && v[j - 1].key > x.key) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
}

void
ht_kv_sort(struct ht_kv *v, size_t n)
{
	if (n < SMALL) {
		insertion_sort(v, n);
		return;
	}
	size_t (*count)[RADIX] = ht_xcalloc(DIGITS, sizeof(*count));
	for (size_t i = 0; i < n; i++)
		for (unsigned d = 0; d < DIGITS; d++)
			count[d][(v[i].key >> (8 * d)) & 0xff]++;
	struct ht_kv *tmp = ht_xcalloc(n, sizeof(*tmp));
	struct ht_kv *src = v, *dst = tmp;
	for (unsigned d = 0; d < DIGITS; d++) {
		size_t *c = count[d];
		if (c[(src[0].key >> (8 * d)) & 0xff] == n)
			continue; /* every key has this byte */
		size_t pos = 0;
		for (unsigned b = 0; b < RADIX; b++) {
			size_t k = c[b];
			c[b] = pos;
			pos += k;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * d)) & 0xff]++] = src[i];
		struct ht_kv *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	free(count);
}
