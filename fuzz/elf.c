/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a program's ELF file, handled as heaptrace handles the
   objects of a program it profiles (a hostile binary reaches all of it):

   - the tracer's side (tracer/target/elfsym.c): the object opened, the
     allocator's symbols looked up by the names tracer/probes/loader.c
     asks for, the load bias worked out from a mapping, and the code at
     each symbol read and decoded as the probes and the inline path
     decode it before patching (tracer/arch: arch_displace,
     arch_relocate_prologue, arch_patch_range_is_safe,
     arch_find_syscall, arch_guess_call_returns);
   - the symbols' side (symbols/): the file reported to libdwfl as
     /proc/PID/maps would report it, and the addresses of its functions
     resolved to names and to Massif's descriptions (symbol table,
     DWARF units, line tables, inlined instances: module.c, resolve.c)
     and given their unwinding rules from .eh_frame or .debug_frame
     (rules.c).

   Separate debug files are not looked for: the input is the whole
   object, and what the machine has installed must not change a run. */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "symbols/frame.h"
#include "symbols/module.h"
#include "symbols/resolve.h"
#include "symbols/rules.h"
#include "tracer/arch/arch.h"
#include "tracer/target/elfsym.h"

/* Where a shared object or PIE is taken to be mapped. */
#define LOAD_BASE 0x7f0000000000ULL
/* At most this many functions of the symbol table are resolved. */
#define MAX_FUNCTIONS 32
/* At most this many bytes of a function are decoded. */
#define MAX_CODE 4096

/* A sample of the names loader.c looks up (C, C++, CPython, glibc's
   internal one). */
static const char *const alloc_names[] = {
	"malloc", "calloc", "realloc", "free", "posix_memalign",
	"_Znwm", "_ZdlPv", "PyObject_Malloc", "_int_malloc",
	"_dl_debug_state",
};

/* The probes' and the inline path's decoding of the code at VADDR. */
static void
decode_at(const struct elf_object *obj, const struct elf_symbol *sym,
	  uint64_t bias)
{
	static uint8_t code[MAX_CODE];
	static struct arch_relocated rel;
	struct arch_displaced d;
	size_t want = sym->size && sym->size < MAX_CODE ? sym->size : 64;
	uint64_t addr = sym->vaddr + bias, at, returns[64];
	char why[160];
	int n = elf_object_read(obj, sym->vaddr, code, want);

	if (n <= 0)
		return;
	(void)arch_displace(code, (size_t)n, addr, addr + 0x100000, &d, why,
			    sizeof(why));
	if (arch_relocate_prologue(code, (size_t)n, addr, ARCH_PATCH_JMP_LEN,
				   addr + 0x100000, &rel, why,
				   sizeof(why)) == 0 &&
	    sym->size)
		(void)arch_patch_range_is_safe(code, (size_t)n, addr,
					       rel.covered, why, sizeof(why));
	(void)arch_find_syscall(code, (size_t)n, addr, &at);
	(void)arch_guess_call_returns(code, (size_t)n, addr, returns, 64);
}

static void
tracer_side(const char *path)
{
	struct elf_object *obj = elf_object_open(path);
	struct elf_symbol sym;
	uint64_t bias = 0, off, vaddr;

	if (!obj)
		return;
	(void)elf_object_has_interp(obj);
	if (elf_object_is_dyn(obj) &&
	    elf_object_bias_from_mapping(obj, LOAD_BASE, 0, &bias) != 0)
		bias = LOAD_BASE - elf_object_first_vaddr(obj);
	(void)elf_object_vaddr_to_offset(obj, elf_object_entry(obj), &off);
	for (size_t i = 0; i < sizeof(alloc_names) / sizeof(*alloc_names);
	     i++) {
		if (elf_object_find(obj, alloc_names[i], &sym) == 0)
			decode_at(obj, &sym, bias);
		(void)elf_object_lookup(obj, alloc_names[i], &vaddr);
	}
	elf_object_close(obj);
}

static int
no_file(Dwfl_Module *mod, void **userdata, const char *modname,
	Dwarf_Addr base, const char *file_name, const char *debuglink_file,
	GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	(void)file_name, (void)debuglink_file, (void)debuglink_crc;
	*debuginfo_file_name = NULL;
	return -1;
}

static int
no_elf(Dwfl_Module *mod, void **userdata, const char *modname,
       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)modname, (void)base;
	*file_name = NULL;
	*elfp = NULL;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = no_elf,
	.find_debuginfo = no_file,
};

/* dwfl_getmodules callback: free the tables module.c hung on a module. */
static int
free_tables(Dwfl_Module *mod, void **userdata, const char *name,
	    Dwarf_Addr base, void *arg)
{
	(void)mod, (void)name, (void)base, (void)arg;
	sym_module_free(*userdata);
	*userdata = NULL;
	return DWARF_CB_OK;
}

/* Name, describe and find the rule of PC, as a stack through it would. */
static void
resolve_pc(Dwfl *dwfl, Dwfl_Module *mod, struct sym_rules *rc, uint64_t pc,
	   struct sym_unwind_stats *stats)
{
	struct sym_frame *f = sym_frame_resolve(mod, pc, stats);

	sym_frame_describe(f, mod, pc, stats);
	sym_frame_free(f);
	(void)sym_rules_get(rc, dwfl, pc, stats);
	(void)sym_rules_get(rc, dwfl, pc + 1, stats);
}

static void
symbols_side(const char *path)
{
	Dwfl *dwfl = dwfl_begin(&callbacks);
	struct sym_unwind_stats stats = { 0 };
	struct sym_rules rc;
	Dwfl_Module *mod;
	Dwarf_Addr lo = 0, hi = 0;
	int nsyms;

	if (!dwfl)
		return;
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "/fuzz/object", path, -1, LOAD_BASE,
			      false);
	dwfl_report_end(dwfl, NULL, NULL);
	if (!mod) {
		dwfl_end(dwfl);
		return;
	}
	sym_rules_init(&rc);
	dwfl_module_info(mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL);
	resolve_pc(dwfl, mod, &rc, lo, &stats);
	nsyms = dwfl_module_getsymtab(mod);
	for (int i = 1, n = 0; i < nsyms && n < MAX_FUNCTIONS; i++) {
		GElf_Sym sym;
		GElf_Addr addr;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL,
					     NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || addr < lo ||
		    addr >= hi)
			continue;
		n++;
		resolve_pc(dwfl, mod, &rc, addr, &stats);
		if (sym.st_size > 1 && addr + sym.st_size / 2 < hi)
			resolve_pc(dwfl, mod, &rc, addr + sym.st_size / 2,
				   &stats);
	}
	sym_rules_fini(&rc);
	dwfl_getmodules(dwfl, free_tables, NULL, 0);
	dwfl_end(dwfl);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);

	tracer_side(path);
	symbols_side(path);
	return 0;
}
