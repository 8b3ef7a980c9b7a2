/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fast unwinder's rules (rules.c) restated for heaptrace's inline
   stubs, which walk stacks inside the target from rsp, rbp and the return
   address alone: a rule is passed on only when following it that way
   gives the very frames unwind.c's walk gives; every other frame makes the
   stub copy the stack for sym_unwind instead. */
#include "session_priv.h"

#include <errno.h>
#include <stdlib.h>

#include "cache.h"
#include "common/xalloc.h"
#include "module.h"
#include "rules.h"

/* Column COL of RU into *OUT. False when it is computed from anything but
   the CFA, which the stub does not track. */
static bool
stub_column(const struct sym_rule *ru, unsigned col, struct ht_unwind_loc *out)
{
	*out = (struct ht_unwind_loc){ .how = HT_LOC_UNDEF };
	if (ru->same & (1u << col)) {
		out->how = HT_LOC_SAME;
		return true;
	}
	for (unsigned i = 0; i < ru->n_set; i++) {
		const struct sym_loc *l = &ru->set[i];

		if (l->col != col)
			continue;
		if (l->base != SYM_LOC_CFA)
			return false;
		out->how = l->deref ? HT_LOC_AT_CFA : HT_LOC_CFA;
		out->off = l->off;
		return true;
	}
	/* Neither kept nor computed: undefined (the end of the stack, for
	   the return address). */
	return true;
}

int
sym_stub_rule_get(struct sym_session *ss, uint64_t lookup_pc,
		  struct ht_unwind_rule *out)
{
	const struct sym_rule *ru;

	*out = (struct ht_unwind_rule){ .fp = false };
	if (ss->unwinder.libdw_only || !sym_session_module(ss, lookup_pc))
		return -ENOTSUP;
	ru = sym_rules_get(&ss->unwinder.rules, ss->dwfl, lookup_pc,
			   &ss->stats);
	if (!ru)
		return -ENOTSUP;
	if (ru->kind == SYM_RULE_FP) {
		out->fp = true;
		return 0;
	}
	/* A signal frame's caller is looked up at its pc, not pc - 1, and
	   its CFA comes from memory: the stub copies. */
	if (ru->kind != SYM_RULE_CFI || ru->signal || !ru->cfa_ok ||
	    ru->cfa.deref ||
	    (ru->cfa.base != SYM_RSP && ru->cfa.base != SYM_RBP))
		return -ENOTSUP;
	out->cfa_rbp = ru->cfa.base == SYM_RBP;
	out->cfa_off = ru->cfa.off;
	if (!stub_column(ru, SYM_RSP, &out->rsp) ||
	    !stub_column(ru, SYM_RBP, &out->rbp) ||
	    !stub_column(ru, SYM_RA, &out->ra))
		return -ENOTSUP;
	return 0;
}

/* The pcs collected by sym_session_cached_rule_pcs. */
struct pc_list {
	uint64_t *v;
	size_t n, cap;
	uint64_t start, end; /* of the module being walked */
};

/* A pc the module no longer covers (mapped smaller this time) is left
   out: a pc in no module makes sym_stub_rule_get re-read the maps. */
static void
add_offset(void *ctx, uint64_t off)
{
	struct pc_list *l = ctx;

	if (off >= l->end - l->start)
		return;
	ht_xgrow((void **)&l->v, &l->cap, l->n + 1, sizeof(*l->v));
	l->v[l->n++] = l->start + off;
}

/* dwfl_getmodules callback: the cached rules' pcs of one module. */
static int
module_rule_pcs(Dwfl_Module *mod, void **userdata, const char *name,
		Dwarf_Addr start, void *arg)
{
	struct pc_list *l = arg;
	struct sym_cache *c = sym_module_cache(mod);

	(void)userdata;
	(void)name;
	if (c) {
		l->start = start;
		dwfl_module_info(mod, NULL, NULL, &l->end, NULL, NULL, NULL,
				 NULL);
		sym_cache_rule_offsets(c, add_offset, l);
	}
	return DWARF_CB_OK;
}

size_t
sym_session_cached_rule_pcs(struct sym_session *ss, uint64_t **out)
{
	struct pc_list l = { NULL, 0, 0, 0, 0 };

	if (!ss->unwinder.libdw_only)
		dwfl_getmodules(ss->dwfl, module_rule_pcs, &l, 0);
	*out = l.v;
	return l.n;
}
