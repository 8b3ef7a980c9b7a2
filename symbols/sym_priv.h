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
	char **lines;     /* Massif descriptions, innermost inlined first */
	unsigned n_lines; /* 1..HT_MAX_INLINE */
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
};

/* Give SS's Dwfl the unwinder's thread callbacks (once per Dwfl). Returns 0,
   or -HT_E_NOTIMPL when libdw has no unwinder for this machine. */
int sym_unwind_attach(struct sym_session *ss);

/* The module of SS's process containing PC. When none does, re-read the
   modules once per such PC (a library dlopen'ed since the last reading) and
   look again. NULL when still none. */
Dwfl_Module *sym_session_module(struct sym_session *ss, uint64_t pc);

/* The raw symbol-table name of the function containing PC in MOD, or NULL.
   The name lives as long as MOD is reported. */
const char *sym_module_function(Dwfl_Module *mod, uint64_t pc);
/* The compilation unit DIE of MOD containing PC and its bias into *BIAS,
   or NULL; like dwfl_module_addrdie, but also for DWARF without
   .debug_aranges. */
Dwarf_Die *sym_module_cu(Dwfl_Module *mod, uint64_t pc, Dwarf_Addr *bias);
/* Free what the session kept as a module's userdata; NULL is a no-op. */
void sym_module_free(struct sym_module *m);

/* The record for PC, resolved now when first asked. Never NULL. */
const struct sym_frame *sym_frame_get(struct sym_session *ss, uint64_t pc);
/* An independent copy of F. */
struct sym_frame *sym_frame_copy(const struct sym_frame *f);
/* Free F and its strings; NULL is a no-op. */
void sym_frame_free(struct sym_frame *f);

#endif
