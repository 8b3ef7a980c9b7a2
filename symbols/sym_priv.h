/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What session.c, unwind.c and resolve.c share: the session, the record one
   code address resolves to, and the helpers each file offers the others.
   Nothing outside symbols/ includes this. */
#ifndef HT_SYMBOLS_SYM_PRIV_H
#define HT_SYMBOLS_SYM_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <elf.h>
#include <elfutils/libdwfl.h>

#include "common/u64map.h"
#include "session.h"

struct sym_module;

/* What one pc resolves to. Made once, never changed or moved, so the
   strings handed out stay valid until the session is freed. */
struct sym_frame {
	char *name;       /* demangled symbol-table name; NULL: no symbol */
	char **lines;     /* Massif descriptions, innermost inlined first;
			     NULL until first asked for (the name alone
			     decides --alloc-fn and the like, and most
			     addresses are never printed) */
	unsigned n_lines; /* 1..HT_MAX_INLINE once LINES is set */
	/* The last line as "(below main) ..." when the function is one of the
	   C library's start functions, printed so unless --show-below-main;
	   NULL for other functions. */
	char *below_main;
};

#define SYM_PAGE_SIZE 4096

/* The state of the one sym_unwind call under way: the capture, a page of
   process memory for words outside it (valid for this call only, since the
   process runs between calls), and the addresses collected so far. */
struct sym_unwind_state {
	const struct sym_capture *cap;
	uint64_t *pcs;
	unsigned n, max;
	uint64_t page_addr; /* address of PAGE; 1 (never aligned) when empty */
	uint8_t page[SYM_PAGE_SIZE];
};

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

struct sym_session {
	pid_t pid;
	unsigned long long start_time; /* from /proc/PID/stat: tells reuse */
	bool gone;                     /* the process no longer exists */
	bool show_below_main;          /* describe by real names only */
	Dwfl *dwfl;
	Elf64_Ehdr arch_ehdr;          /* the image ARCH_ELF reads */
	Elf *arch_elf;                 /* the machine, for dwfl_attach_state */
	struct u64map frames;          /* pc -> struct sym_frame * (owned) */
	struct u64map refreshed;       /* pcs in no module that got a refresh */
	struct sym_unwind_state uw;
	struct sym_rules rules;        /* the fast unwinder's rule cache */
	bool libdw_only;               /* unwind every event with libdw */
	struct sym_unwind_stats stats;
};

/* Give SS's Dwfl the unwinder's thread callbacks (once per Dwfl). Returns 0,
   or -HT_E_NOTIMPL when libdw has no unwinder for this machine. */
int sym_unwind_attach(struct sym_session *ss);

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

/* The rule for lookup pc PC in SS's process, compiled from the CFI when
   first asked; NULL when PC is in no module (nothing is cached then, since
   a re-reading may find one). Valid until the next call. */
const struct sym_rule *sym_rules_get(struct sym_session *ss, uint64_t pc);
/* Forget the rules of lookup pcs in [LO, HI): their module is gone. */
void sym_rules_forget(struct sym_rules *rc, uint64_t lo, uint64_t hi);

/* The module of SS's process containing PC. When none does, re-read the
   modules once per such PC (a library dlopen'ed since the last reading) and
   look again. NULL when still none. */
Dwfl_Module *sym_session_module(struct sym_session *ss, uint64_t pc);

/* MOD's cache on disk (cache.h), opened when first asked; NULL when it
   has none. Written back and freed with the module's tables. */
struct sym_cache *sym_module_cache(Dwfl_Module *mod);
/* The raw symbol-table name of the function containing PC in MOD, or NULL.
   The name lives as long as MOD is reported. */
const char *sym_module_function(Dwfl_Module *mod, uint64_t pc);
/* The compilation unit DIE of MOD containing PC and its bias into *BIAS,
   or NULL; like dwfl_module_addrdie, but also for DWARF without
   .debug_aranges. */
Dwarf_Die *sym_module_cu(Dwfl_Module *mod, uint64_t pc, Dwarf_Addr *bias);
/* The file names of one line table, as its header records them: not
   joined with their directory, as Valgrind prints them. */
struct sym_srcfiles {
	Dwarf *dbg;         /* whose .debug_line holds the table */
	const char **names; /* by the DWARF file number; NULL: none (DWARF
			       2-4's number 0) or not a string Valgrind reads */
	size_t n;           /* 0: the header could not be read */
	unsigned version;   /* of the line table */
};

/* The file names of the line table of compilation unit CU of MOD, read
   when first asked, or NULL when CU has none. The names live as long as
   MOD is reported. */
const struct sym_srcfiles *sym_module_srcfiles(Dwfl_Module *mod,
					       Dwarf_Die *cu);
/* A DIE and its depth in its unit's tree (the unit's DIE is at 0). */
struct sym_fn_at {
	Dwarf_Die die;
	int level;
};

/* Where Valgrind 3.19's inline reader looks for inlined instances in a
   unit: inside namespaces, subprograms, lexical blocks and inlined
   instances, whatever their ranges say. The subprograms with code met
   that way (not looking inside them) are kept per unit, sorted by
   address, when CU of MOD is first asked about: returns those of them
   whose code covers ADDR (one, in sane DWARF), and any inlined instance
   met outside all of them, as a malloc'd array in *OUT (NULL if none). */
size_t sym_fns_at(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr,
		  struct sym_fn_at **out);
/* Whether Valgrind 3.19 reads the inlined instances of unit CU of MOD. Its
   DIE reader stops at the first unit (in section order) one of whose
   abbreviations has an attribute form it cannot size, and keeps what it
   read until then: the units from there on have no inline chains in
   Massif (Valgrind warns "Serious error when reading debug info"). */
bool sym_inline_readable(Dwfl_Module *mod, Dwarf_Die *cu);
/* Free what the session kept as a module's userdata; NULL is a no-op. */
void sym_module_free(struct sym_module *m);

/* The record for PC, resolved now when first asked, its lines possibly
   not yet. Never NULL. */
const struct sym_frame *sym_frame_get(struct sym_session *ss, uint64_t pc);
/* Give the records of SS's addresses in [LO, HI) that have none their
   lines now, from MOD, which is about to be dropped. */
void sym_frames_describe(struct sym_session *ss, Dwfl_Module *mod,
			 uint64_t lo, uint64_t hi);
/* An independent copy of F. */
struct sym_frame *sym_frame_copy(const struct sym_frame *f);
/* Free F and its strings; NULL is a no-op. */
void sym_frame_free(struct sym_frame *f);

#endif
