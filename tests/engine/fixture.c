/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The engine tests' fake program and engine set-up (fixture.h). */
#include "tests/engine/fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


const struct stack S1 = { 4, { PC_MALLOC, PC_F, PC_MAIN_A, PC_LIBC_START } };
const struct stack S2 = { 3, { PC_MALLOC, PC_MAIN_B, PC_LIBC_START } };
const struct stack S3 = { 5, { PC_MALLOC, PC_G, PC_F, PC_MAIN_C,
			       PC_LIBC_START } };
/* realloc's own stacks */
const struct stack R1 = { 4, { PC_REALLOC, PC_G, PC_MAIN_B, PC_LIBC_START } };
const struct stack R2 = { 3, { PC_REALLOC, PC_MAIN_C, PC_LIBC_START } };
/* ignored with --ignore-fn=ign */
const struct stack SIGN = { 4, { PC_MALLOC, PC_IGN, PC_MAIN_A,
				 PC_LIBC_START } };
/* only the allocation function: ignored by the tree */
const struct stack SONLY = { 1, { PC_MALLOC } };

static void
add_sym(struct sym_table *t, uint64_t pc, const char *name)
{
	const char *desc[1] = { name };
	sym_table_add(t, pc, name, desc, 1);
}

static void
apply_option(struct ht_options *opt, const char *o)
{
	char err[256];
	if (ht_options_apply(opt, o, err, sizeof(err)) != 0) {
		fprintf(stderr, "bad test option %s: %s\n", o, err);
		exit(99);	/* meson: a harness error */
	}
}

void
fixture_init(struct fixture *fx, const char *opts[], enum snap_extra_kind kind)
{
	static const struct { uint64_t pc; const char *name; } names[] = {
		{ PC_MALLOC, "malloc" }, { PC_CALLOC, "calloc" },
		{ PC_REALLOC, "realloc" }, { PC_XMALLOC, "xmalloc" },
		{ PC_F, "f" }, { PC_G, "g" }, { PC_H, "h" },
		{ PC_MAIN_A, "main" }, { PC_MAIN_B, "main" },
		{ PC_MAIN_C, "main" }, { PC_MAIN_D, "main" },
		{ PC_IGN, "ign" },
		{ PC_LIBC_START, "__libc_start_call_main" },
	};
	char err[256];
	memset(fx, 0, sizeof(*fx));
	ht_options_init(&fx->opt);
	apply_option(&fx->opt, "--time-unit=B");
	apply_option(&fx->opt, "--heap-admin=0");
	for (const char **o = opts; o && *o; o++)
		apply_option(&fx->opt, *o);
	if (ht_options_finish(&fx->opt, err, sizeof(err)) != 0) {
		fprintf(stderr, "bad test options: %s\n", err);
		exit(99);	/* meson: a harness error */
	}
	fx->table = sym_table_new();
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		add_sym(fx->table, names[i].pc, names[i].name);
	fx->sym = sym_table_symbolizer(fx->table);
	fx->eng = snap_engine_new(&fx->opt, &fx->sym,
				  snap_extra_new(kind, &fx->opt));
	fx->next_addr = 0x100000;
	snap_engine_start(fx->eng, 0);
}

void
fixture_fini(struct fixture *fx)
{
	snap_engine_free(fx->eng);
	sym_table_free(fx->table);
	ht_options_fini(&fx->opt);
}

void
fixture_event(struct fixture *fx, enum ht_event_kind kind, uint32_t tid,
	      uint64_t addr, uint64_t old, uint64_t size,
	      const struct stack *st)
{
	struct ht_event e = {
		.kind = kind,
		.fn = kind == HT_EV_ALLOC ? HT_FN_MALLOC
		      : kind == HT_EV_FREE ? HT_FN_FREE : HT_FN_REALLOC,
		.addr = addr, .old_addr = old, .size = size, .tid = tid,
		.pcs = st ? st->pcs : NULL, .npcs = st ? st->n : 0,
	};
	snap_engine_feed(fx->eng, &e);
}

void
fixture_alloc(struct fixture *fx, uint64_t addr, uint64_t size,
	      const struct stack *st)
{
	fixture_event(fx, HT_EV_ALLOC, 1, addr, 0, size, st);
}

void
fixture_release(struct fixture *fx, uint64_t addr)
{
	fixture_event(fx, HT_EV_FREE, 1, addr, 0, 0, &S2);
}

void
fixture_resize(struct fixture *fx, uint64_t old, uint64_t addr, uint64_t size,
	       const struct stack *st)
{
	fixture_event(fx, HT_EV_REALLOC, 1, addr, old, size, st);
}
