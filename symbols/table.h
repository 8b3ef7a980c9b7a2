/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A symbolizer that answers from a table filled by its owner: used to replay
   recorded or hand-written event sequences, where each code address's
   function name and printed description are known in advance. */
#ifndef HT_SYMBOLS_TABLE_H
#define HT_SYMBOLS_TABLE_H

#include <stdint.h>

#include "common/symbolizer.h"

struct sym_table;

/* An empty table. */
struct sym_table *sym_table_new(void);
/* Free T and its strings; NULL is a no-op. */
void sym_table_free(struct sym_table *t);
/* Record that PC lies in the function NAME (NULL: no symbol) and prints as
   the N_DESC lines DESC, innermost inlined first (N_DESC >= 1, at most
   HT_MAX_INLINE). Strings are copied. A later call for the same PC replaces
   the earlier one. */
void sym_table_add(struct sym_table *t, uint64_t pc, const char *name,
		   const char *const *desc, unsigned n_desc);
/* A symbolizer answering from T (borrowed: T must outlive it). A PC not in
   T has no function name and prints as "???". */
struct ht_symbolizer sym_table_symbolizer(struct sym_table *t);

#endif
