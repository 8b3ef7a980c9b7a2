/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table symbolizer: code addresses whose function name and printed
   description lines were given up front (by a test's event file), kept in a
   map from pc to an owned record. */
#include "table.h"

#include "synth.h"

#include <stdlib.h>

#include "common/synthframe.h"
#include "common/u64map.h"
#include "common/xalloc.h"

/* What one pc resolves to. Records are never moved once made, so the strings
   handed out stay valid until the table is freed or the pc is replaced. */
struct sym_entry {
	char *name; /* NULL: no symbol covers the pc */
	char **desc;
	unsigned n_desc;
};

struct sym_table {
	struct u64map by_pc; /* pc -> struct sym_entry * */
};

static const char *const unknown_desc = "???";

struct sym_table *
sym_table_new(void)
{
	struct sym_table *t = ht_xmalloc(sizeof(*t));

	u64map_init(&t->by_pc);
	return t;
}

static void
entry_free(struct sym_entry *e)
{
	if (!e)
		return;
	free(e->name);
	for (unsigned i = 0; i < e->n_desc; i++)
		free(e->desc[i]);
	free(e->desc);
	free(e);
}

void
sym_table_free(struct sym_table *t)
{
	uint64_t pc, val;

	if (!t)
		return;
	for (size_t pos = 0; u64map_next(&t->by_pc, &pos, &pc, &val);)
		entry_free((struct sym_entry *)(uintptr_t)val);
	u64map_fini(&t->by_pc);
	free(t);
}

void
sym_table_add(struct sym_table *t, uint64_t pc, const char *name,
	      const char *const *desc, unsigned n_desc)
{
	struct sym_entry *e = ht_xmalloc(sizeof(*e));
	uint64_t *slot;
	bool fresh;

	/* The header promises 1..HT_MAX_INLINE lines; clamp rather than
	   overrun a caller's array when the promise is broken. */
	if (n_desc > HT_MAX_INLINE)
		n_desc = HT_MAX_INLINE;
	e->name = name ? ht_xstrdup(name) : NULL;
	e->n_desc = n_desc;
	e->desc = ht_xcalloc(n_desc ? n_desc : 1, sizeof(*e->desc));
	for (unsigned i = 0; i < n_desc; i++)
		e->desc[i] = ht_xstrdup(desc[i]);

	slot = u64map_slot(&t->by_pc, pc, &fresh);
	if (!fresh)
		entry_free((struct sym_entry *)(uintptr_t)*slot);
	*slot = (uint64_t)(uintptr_t)e;
}

/* PC's entry; a synthetic PC not in the table gets one the first time,
   named as the live symbolizer names it, so replayed stacks may mix
   table-named native frames with interned Python frames. */
static const struct sym_entry *
lookup(void *ctx, uint64_t pc)
{
	struct sym_table *t = ctx;
	uint64_t *val = u64map_get(&t->by_pc, pc);

	if (!val && synth_frame_is(pc)) {
		char *desc = sym_synth_describe(pc);

		sym_table_add(t, pc, sym_synth_name(pc),
			      (const char *const *)&desc, 1);
		free(desc);
		val = u64map_get(&t->by_pc, pc);
	}
	return val ? (const struct sym_entry *)(uintptr_t)*val : NULL;
}

static const char *
table_function_name(void *ctx, uint64_t pc)
{
	const struct sym_entry *e = lookup(ctx, pc);

	return e ? e->name : NULL;
}

static unsigned
table_describe(void *ctx, uint64_t pc, const char **lines, unsigned max)
{
	const struct sym_entry *e = lookup(ctx, pc);
	unsigned n;

	if (!max)
		return 0;
	/* An unknown pc, or one recorded without lines, prints as Massif
	   prints an address nothing is known about. */
	if (!e || !e->n_desc) {
		lines[0] = unknown_desc;
		return 1;
	}
	n = e->n_desc < max ? e->n_desc : max;
	for (unsigned i = 0; i < n; i++)
		lines[i] = e->desc[i];
	return n;
}

struct ht_symbolizer
sym_table_symbolizer(struct sym_table *t)
{
	return (struct ht_symbolizer){
		.ctx = t,
		.function_name = table_function_name,
		.describe = table_describe,
	};
}
