/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the session keeps per module (module.c), as the module's libdwfl
   userdata: its symbol table, compilation units, line tables' file names,
   subprograms and symbol cache, each built when first asked for. Nothing
   outside symbols/ includes this. */
#ifndef HT_SYMBOLS_MODULE_H
#define HT_SYMBOLS_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct sym_cache;
struct sym_module;

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

#endif
