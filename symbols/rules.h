/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fast unwinder's rules (rules.c): the compiled form of the CFI at one
   lookup pc, and the table that keeps them by pc. The cache on disk stores
   rules as they are; the walk (unwind.c) and the inline stubs' rules
   (stub_rule.c) read them. Nothing outside symbols/ includes this. */
#ifndef HT_SYMBOLS_RULES_H
#define HT_SYMBOLS_RULES_H

#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "common/u64map.h"
#include "session.h"

/* x86-64's DWARF columns: rax rdx rcx rbx rsi rdi rbp rsp, r8..r15, then
   the return address (16), which holds the pc. */
#define SYM_NREGS 17
#define SYM_RA 16
#define SYM_RSP 7
#define SYM_RBP 6

/* A value a compiled rule computes: BASE plus OFF, read from memory at that
   address when DEREF. NEEDS_CFA: the expression it comes from asks for the
   CFA, so it fails when the CFA does even if it does not use it. */
struct sym_loc {
	int32_t off;
	uint8_t base;      /* a column, SYM_LOC_CFA or SYM_LOC_CONST */
	uint8_t deref;
	uint8_t needs_cfa;
	uint8_t col;       /* the column it sets (register entries only) */
};

#define SYM_LOC_CFA 0xfe
#define SYM_LOC_CONST 0xff

enum sym_rule_kind {
	SYM_RULE_CFI,     /* CFA, return address and registers below */
	SYM_RULE_FP,      /* no CFI: libdw's frame-pointer walk */
	SYM_RULE_COMPLEX, /* CFI these rules cannot express: ask libdw */
};

/* How to recover the caller's registers at one lookup pc, compiled once from
   the CFI libdw finds there, with libdw's meaning for every case (a column
   whose expression fails is unset in the caller, as is one whose rule is
   undefined; a failed CFA fails every column that asks for it). */
struct sym_rule {
	uint8_t kind;      /* enum sym_rule_kind */
	uint8_t signal;    /* a signal trampoline's: the caller was interrupted,
			      so it is looked up at its pc, not pc - 1 */
	uint8_t cfa_ok;    /* CFA holds a rule; else the CFA is unknown */
	uint8_t n_set;
	uint8_t cfa_only;  /* every column in SET is CFA-based */
	uint8_t pad[3];    /* zero, as all of a rule: compared bytewise */
	uint32_t same;     /* columns keeping their value, one bit each */
	struct sym_loc cfa;
	struct sym_loc set[SYM_NREGS]; /* columns computed, N_SET of them */
};

struct sym_rule_slot {
	uint64_t pc;   /* 0: free */
	uint32_t rule; /* index into the rules array */
};

/* The rules of the lookup pcs met so far, in an open-addressed table keyed
   by pc. Identical rules are stored once. A rule holds for as long as the
   module at its pc stays reported: a re-reading that drops the module
   forgets the rules of its address range. */
struct sym_rules {
	struct sym_rule_slot *slots; /* CAP slots, pc 0 marks a free one */
	size_t cap, count;
	struct sym_rule *rules;      /* N_RULES distinct rules */
	size_t n_rules, rules_cap;
	struct u64map distinct;      /* hash of a rule -> its index */
};

/* Make RC empty. */
void sym_rules_init(struct sym_rules *rc);
/* Free what RC owns; RC is empty afterwards. */
void sym_rules_fini(struct sym_rules *rc);
/* Make DST (uninitialised) an independent copy of SRC. */
void sym_rules_copy(struct sym_rules *dst, const struct sym_rules *src);

/* RC's slot for PC when its table has CAP slots (a power of two).
   Fibonacci hashing: code addresses differ mostly in their low bits, which
   the multiplication spreads over the bits taken. */
static inline size_t
sym_rules_slot(uint64_t pc, size_t cap)
{
	return (size_t)((pc * 0x9e3779b97f4a7c15ULL) >> 32) & (cap - 1);
}

/* The rule cached for lookup pc PC, or NULL. A warm walk's one look-up per
   frame, so it is inline. Valid until the next sym_rules_get. */
static inline const struct sym_rule *
sym_rules_find(const struct sym_rules *rc, uint64_t pc)
{
	size_t i;

	if (!rc->cap)
		return NULL;
	for (i = sym_rules_slot(pc, rc->cap); rc->slots[i].pc;
	     i = (i + 1) & (rc->cap - 1))
		if (rc->slots[i].pc == pc)
			return &rc->rules[rc->slots[i].rule];
	return NULL;
}

/* The rule for lookup pc PC among DWFL's modules, from RC, else from the
   module's cache on disk, else compiled from the CFI, and kept in RC;
   counted in STATS. NULL when PC is in no module (nothing is kept then,
   since a re-reading may find one). Valid until the next call. */
const struct sym_rule *sym_rules_get(struct sym_rules *rc, Dwfl *dwfl,
				     uint64_t pc,
				     struct sym_unwind_stats *stats);
/* Forget the rules of lookup pcs in [LO, HI): their module is gone. */
void sym_rules_forget(struct sym_rules *rc, uint64_t lo, uint64_t hi);

#endif
