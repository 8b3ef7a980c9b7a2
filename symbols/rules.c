/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fast unwinder's rules: for each lookup pc, what the CFI libdw finds
   there says about the caller's CFA, return address and registers, compiled
   once into a few base + offset reads (struct sym_rule) and cached by pc, so
   that a warm unwind costs one table look-up per frame instead of a CFI
   search and an expression interpreter. Each case keeps the meaning
   libdwfl's unwinder gives it, so both walks give the same frames; what
   cannot be written as base + offset is SYM_RULE_COMPLEX, left to libdw. */
#include "rules.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "common/xalloc.h"
#include "module.h"

void
sym_rules_init(struct sym_rules *rc)
{
	memset(rc, 0, sizeof(*rc));
	u64map_init(&rc->distinct);
}

void
sym_rules_fini(struct sym_rules *rc)
{
	free(rc->slots);
	free(rc->rules);
	u64map_fini(&rc->distinct);
	memset(rc, 0, sizeof(*rc));
}

void
sym_rules_copy(struct sym_rules *dst, const struct sym_rules *src)
{
	*dst = *src;
	dst->slots = src->cap ? ht_xmemdup_array(src->slots, src->cap,
						 src->cap, sizeof(*src->slots))
			      : NULL;
	dst->rules = src->rules_cap
		? ht_xmemdup_array(src->rules, src->n_rules, src->rules_cap,
				   sizeof(*src->rules))
		: NULL;
	u64map_copy(&dst->distinct, &src->distinct);
}

static void
slot_put(struct sym_rules *rc, uint64_t pc, uint32_t rule)
{
	size_t i = sym_rules_slot(pc, rc->cap);

	while (rc->slots[i].pc && rc->slots[i].pc != pc)
		i = (i + 1) & (rc->cap - 1);
	if (!rc->slots[i].pc)
		rc->count++;
	rc->slots[i] = (struct sym_rule_slot){ .pc = pc, .rule = rule };
}

/* Re-insert the slots of OLD (OLD_CAP of them) into RC's table of CAP free
   slots, leaving out those of lookup pcs in [LO, HI); an empty range
   keeps them all. */
static void
refill(struct sym_rules *rc, struct sym_rule_slot *old, size_t old_cap,
       size_t cap, uint64_t lo, uint64_t hi)
{
	rc->slots = ht_xcalloc(cap, sizeof(*rc->slots));
	rc->cap = cap;
	rc->count = 0;
	for (size_t i = 0; i < old_cap; i++) {
		uint64_t pc = old[i].pc;

		if (pc && (pc < lo || pc >= hi))
			slot_put(rc, pc, old[i].rule);
	}
	free(old);
}

void
sym_rules_forget(struct sym_rules *rc, uint64_t lo, uint64_t hi)
{
	/* Rebuilt rather than deleted from in place: linear probing would
	   need every following cluster moved, and modules go rarely. */
	if (rc->count)
		refill(rc, rc->slots, rc->cap, rc->cap, lo, hi);
}

/* The index of a rule equal to RU, added when new. Rules differ far less
   than pcs do (a few hundred in a large program), so each is kept once. */
static uint32_t
intern(struct sym_rules *rc, const struct sym_rule *ru)
{
	uint64_t h = 0xcbf29ce484222325ULL, *slot;
	const uint8_t *p = (const uint8_t *)ru;
	bool fresh;

	for (size_t i = 0; i < sizeof(*ru); i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	slot = u64map_slot(&rc->distinct, h, &fresh);
	if (!fresh && memcmp(&rc->rules[*slot], ru, sizeof(*ru)) == 0)
		return (uint32_t)*slot;
	ht_xgrow((void **)&rc->rules, &rc->rules_cap, rc->n_rules + 1,
		 sizeof(*rc->rules));
	rc->rules[rc->n_rules] = *ru;
	/* On a hash collision the rule met first keeps the entry: the other
	   is stored all the same, only not shared. */
	if (fresh)
		*slot = rc->n_rules;
	return (uint32_t)rc->n_rules++;
}

/* OFF plus the 64-bit operand N (taken modulo 2^64, as libdw adds), when
   the sum fits a struct sym_loc. */
static bool
add_offset(struct sym_loc *l, uint64_t n)
{
	int64_t sum = (int64_t)((uint64_t)(int64_t)l->off + n);

	if (sum < INT32_MIN || sum > INT32_MAX)
		return false;
	l->off = (int32_t)sum;
	return true;
}

/* Whether a value left below the result can make libdw's evaluation fail:
   a register read or a memory read can, the CFA is covered by NEEDS_CFA. */
static bool
may_fail(const struct sym_loc *l)
{
	return l->deref || (l->base != SYM_LOC_CFA && l->base != SYM_LOC_CONST);
}

/* The value one operation pushes, into *TOP. Returns 1, 0 when libdw's
   evaluation fails there, -1 for operations these rules do not model. */
static int
push_op(const Dwarf_Op *op, bool for_cfa, struct sym_loc *top)
{
	uint64_t reg = SYM_NREGS, off = 0;
	uint8_t a = op->atom;

	*top = (struct sym_loc){ .base = SYM_LOC_CONST };
	if (a == DW_OP_call_frame_cfa) {
		/* libdw evaluates the CFA's own expression without a CFA. */
		if (for_cfa)
			return 0;
		top->base = SYM_LOC_CFA;
		return 1;
	}
	if (a >= DW_OP_lit0 && a <= DW_OP_lit31)
		return add_offset(top, a - DW_OP_lit0) ? 1 : -1;
	if (a == DW_OP_constu || a == DW_OP_consts)
		return add_offset(top, op->number) ? 1 : -1;
	if (a >= DW_OP_breg0 && a <= DW_OP_breg31) {
		reg = a - DW_OP_breg0;
		off = op->number;
	} else if (a == DW_OP_bregx) {
		reg = op->number;
		off = op->number2;
	} else if (a >= DW_OP_reg0 && a <= DW_OP_reg31) {
		reg = a - DW_OP_reg0;
	} else if (a == DW_OP_regx) {
		reg = op->number;
	} else {
		return -1;
	}
	/* libdw's frames hold columns 0-16 only; others never read. */
	if (reg >= SYM_NREGS)
		return 0;
	top->base = (uint8_t)reg;
	return add_offset(top, off) ? 1 : -1;
}

/* Compile the expression OPS (NOPS operations, as dwarf_frame_cfa or
   dwarf_frame_register give them) into *OUT. FOR_CFA: the CFA's own.
   Returns 1, 0 when libdw's evaluation always fails (the value is unknown),
   -1 when it is beyond these rules. As in libdw, DW_OP_call_frame_cfa makes
   the result a location, read from memory at the end, and
   DW_OP_stack_value makes it a value again. */
static int
compile_ops(const Dwarf_Op *ops, size_t nops, bool for_cfa,
	    struct sym_loc *out)
{
	struct sym_loc top = { .base = SYM_LOC_CONST };
	bool have = false, location = false, needs_cfa = false;

	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		int ok;

		switch (op->atom) {
		case DW_OP_nop:
			continue;
		case DW_OP_stack_value:
			location = false;
			continue;
		case DW_OP_plus_uconst:
			if (!have)
				return 0;
			if (top.deref || !add_offset(&top, op->number))
				return -1;
			continue;
		case DW_OP_deref:
			if (!have)
				return 0;
			if (top.deref)
				return -1;
			top.deref = 1;
			continue;
		}
		if (have && may_fail(&top))
			return -1;
		ok = push_op(op, for_cfa, &top);
		if (ok <= 0)
			return ok;
		if (op->atom == DW_OP_call_frame_cfa) {
			needs_cfa = true;
			location = true;
		}
		have = true;
	}
	if (!have)
		return 0;
	if (location) {
		if (top.deref)
			return -1;
		top.deref = 1;
	}
	top.needs_cfa = needs_cfa || top.base == SYM_LOC_CFA;
	*out = top;
	return 1;
}

/* Column COL of FRAME into RU: kept, computed, or (undefined, or an
   expression that fails) left out, which unsets it in the caller. Returns
   false when the expression is beyond these rules. */
static bool
compile_column(Dwarf_Frame *frame, unsigned col, struct sym_rule *ru)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	struct sym_loc l;
	int ok;

	if (dwarf_frame_register(frame, (int)col, mem, &ops, &nops) != 0)
		return true;
	if (nops == 0) {
		/* No operations: undefined when OPS is MEM, same value when
		   NULL; libdw treats anything else as broken DWARF. */
		if (!ops)
			ru->same |= 1u << col;
		return true;
	}
	ok = compile_ops(ops, nops, false, &l);
	if (ok < 0)
		return false;
	if (ok > 0) {
		l.col = (uint8_t)col;
		ru->set[ru->n_set++] = l;
	}
	return true;
}

/* FRAME's rule into RU (zeroed). */
static void
compile_frame(Dwarf_Frame *frame, struct sym_rule *ru)
{
	bool signal = false;
	Dwarf_Op *ops;
	size_t nops;
	int ok = 0;

	ru->kind = SYM_RULE_COMPLEX;
	if (dwarf_frame_info(frame, NULL, NULL, &signal) != SYM_RA)
		return;
	ru->signal = signal;
	if (dwarf_frame_cfa(frame, &ops, &nops) == 0)
		ok = compile_ops(ops, nops, true, &ru->cfa);
	if (ok < 0)
		return;
	ru->cfa_ok = ok > 0;
	for (unsigned col = 0; col < SYM_NREGS; col++)
		if (!compile_column(frame, col, ru))
			return;
	ru->cfa_only = 1;
	for (unsigned i = 0; i < ru->n_set; i++)
		if (ru->set[i].base != SYM_LOC_CFA)
			ru->cfa_only = 0;
	ru->kind = SYM_RULE_CFI;
}

/* The rule at lookup pc PC of MOD into RU (zeroed): from the module's
   .eh_frame, else its .debug_frame, as libdw searches them; the
   frame-pointer walk when neither covers PC. */
static void
compile_rule(Dwfl_Module *mod, uint64_t pc, struct sym_rule *ru)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);

	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) {
		frame = NULL;
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			frame = NULL;
	}
	if (!frame) {
		ru->kind = SYM_RULE_FP;
		return;
	}
	compile_frame(frame, ru);
	free(frame);
}

/* The rule at lookup pc PC of MOD into RU (zeroed): from the module's
   cache on disk, else compiled now and added to it. Returns whether it
   came from the cache. */
static bool
rule_cached(Dwfl_Module *mod, uint64_t pc, struct sym_rule *ru)
{
	struct sym_cache *c = sym_module_cache(mod);
	Dwarf_Addr start = 0;

	dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	if (c && sym_cache_rule(c, pc - start, ru))
		return true;
	compile_rule(mod, pc, ru);
	if (c)
		sym_cache_put_rule(c, pc - start, ru);
	return false;
}

const struct sym_rule *
sym_rules_get(struct sym_rules *rc, Dwfl *dwfl, uint64_t pc,
	      struct sym_unwind_stats *stats)
{
	const struct sym_rule *cached;
	struct sym_rule ru;
	Dwfl_Module *mod;
	uint32_t idx;

	cached = sym_rules_find(rc, pc);
	if (cached)
		return cached;
	mod = dwfl_addrmodule(dwfl, pc);
	if (!mod)
		return NULL;
	/* Zeroed as a whole, padding included: rules are compared and
	   hashed bytewise. */
	memset(&ru, 0, sizeof(ru));
	if (!rule_cached(mod, pc, &ru))
		stats->rules++;
	else
		stats->cached_rules++;
	if (ru.kind == SYM_RULE_COMPLEX)
		stats->complex++;
	idx = intern(rc, &ru);
	/* Pc 0 marks a free slot: a lookup there (from a return address
	   of 1, garbage) is not cached. */
	if (pc == 0)
		return &rc->rules[idx];
	/* At most half full, so that a miss ends at a free slot soon. */
	if (2 * (rc->count + 1) > rc->cap)
		refill(rc, rc->slots, rc->cap, rc->cap ? 2 * rc->cap : 1024,
		       0, 0);
	slot_put(rc, pc, idx);
	return &rc->rules[idx];
}
