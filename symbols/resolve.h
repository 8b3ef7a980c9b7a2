/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Resolving one code address of one module into its record (resolve.c):
   the function's name, and Massif's description lines. The caller finds
   the module and keeps the records. Nothing outside symbols/ includes
   this. */
#ifndef HT_SYMBOLS_RESOLVE_H
#define HT_SYMBOLS_RESOLVE_H

#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "frame.h"
#include "session.h"

/* A new record for PC, which lies in MOD (NULL: in no module), with its
   name: from MOD's cache on disk, else from its symbol table, then kept in
   the cache. Its lines wait for sym_frame_describe unless the cache has
   them, or PC is in no module ("???"). Counted in STATS. */
struct sym_frame *sym_frame_resolve(Dwfl_Module *mod, uint64_t pc,
				    struct sym_unwind_stats *stats);
/* Give F, the record of PC (without lines yet), its lines: from MOD's cache
   on disk, else from the debug information, then kept in the cache; "???"
   when MOD is NULL. Counted in STATS. */
void sym_frame_describe(struct sym_frame *f, Dwfl_Module *mod, uint64_t pc,
			struct sym_unwind_stats *stats);

#endif
