/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Walking a captured stack into code addresses (unwind.c): the per-pc
   rules' walk, libdw's as its fallback. The session owns the unwinder and
   re-reads its modules when a walk meets code in none. Nothing outside
   symbols/ includes this. */
#ifndef HT_SYMBOLS_UNWIND_H
#define HT_SYMBOLS_UNWIND_H

#include <stdbool.h>
#include <stdint.h>
#include <elf.h>
#include <elfutils/libdwfl.h>

#include "rules.h"
#include "session.h"

#define SYM_PAGE_SIZE 4096

/* The state of the one walk under way: the capture, a page of process
   memory for words outside it (valid for this walk only, since the
   process runs between calls), and the addresses collected so far. */
struct sym_unwind_state {
	const struct sym_capture *cap;
	bool gone;          /* the process no longer exists: only the
			       capture can be read */
	uint64_t *pcs;
	unsigned n, max;
	uint64_t page_addr; /* address of PAGE; 1 (never aligned) when empty */
	uint8_t page[SYM_PAGE_SIZE];
};

/* What unwinds one process's captures. DWFL and STATS are the session's;
   the unwinder must not move once attached (libdw keeps its address). */
struct sym_unwinder {
	Dwfl *dwfl;
	pid_t pid;
	Elf64_Ehdr arch_ehdr;          /* the image ARCH_ELF reads */
	Elf *arch_elf;                 /* the machine, for dwfl_attach_state */
	struct sym_rules rules;        /* the fast walk's rule cache */
	bool libdw_only;               /* walk every event with libdw */
	struct sym_unwind_stats *stats;
	struct sym_unwind_state uw;
};

/* Make U (uninitialised) an unwinder counting into STATS, not yet attached
   to a process. */
void sym_unwinder_init(struct sym_unwinder *u,
		       struct sym_unwind_stats *stats);
/* Free what U owns; call after the Dwfl it was attached to has ended. */
void sym_unwinder_fini(struct sym_unwinder *u);
/* Give DWFL (process PID's, its modules reported) U's thread callbacks,
   once per Dwfl. Returns 0, or -HT_E_NOTIMPL when libdw has no unwinder
   for this machine. */
int sym_unwinder_attach(struct sym_unwinder *u, Dwfl *dwfl, pid_t pid);
/* Walk CAP into PCS (room for MAX >= 1), as sym_unwind describes; GONE:
   the process no longer exists. Returns the number of addresses (>= 1),
   and in *VERIFIED how many leading ones are known to lie in a module
   (the others may be in a library mapped since the modules were read). */
unsigned sym_unwinder_walk(struct sym_unwinder *u,
			   const struct sym_capture *cap, bool gone,
			   uint64_t *pcs, unsigned max, unsigned *verified);

#endif
