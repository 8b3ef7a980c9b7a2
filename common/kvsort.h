/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sorting many (key, value) pairs by key, as the leak check does with a
   million blocks: a radix sort, where qsort's comparisons through a
   function pointer and its copies of wide records took 40% of the
   check's time. */
#ifndef HT_COMMON_KVSORT_H
#define HT_COMMON_KVSORT_H

#include <stddef.h>
#include <stdint.h>

struct ht_kv {
	uint64_t key;
	uint64_t val;
};

/* Sorts V[0..N) by key, stably (equal keys keep their order). */
void ht_kv_sort(struct ht_kv *v, size_t n);

#endif
