/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a code address of a module is: the containing function's
   symbol-table name (demangled), and Massif's description lines, built from
   the line table and the DWARF inline tree, or read back from the module's
   cache on disk. The session asks once per address and keeps the record
   for its life, past the process's exit. */
#include "resolve.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "common/xalloc.h"
#include "demangle.h"
#include "module.h"

static const char unknown[] = "???";

/* RAW demangled (C++ and Rust names) as Massif prints it, else a copy:
   demangle.h. */
static char *
demangle(const char *raw)
{
	return sym_demangle(raw);
}

/* A source position: FILE as the line table records it (NULL: unknown). */
struct where {
	const char *file;
	int line;
};

/* One description line: "fn (file.c:12)", "fn (in /obj)", "??? (in /obj)".
   FILE is printed as the line table records it, directories and all
   ("library/alloc/src/alloc.rs"): Valgrind does not join it with its
   directory, nor cut it to its last component. */
static char *
format_line(const char *fn, struct where at, const char *object)
{
	if (!fn)
		fn = unknown;
	if (at.file)
		return ht_xasprintf("%s (%s:%d)", fn, at.file, at.line);
	return ht_xasprintf("%s (in %s)", fn, object ? object : unknown);
}

/* The name of file number IDX of a line table, as Valgrind 3.19 gives it:
   the table's own string, "???" for a number it has no name for. A call
   site's number 0 is "???" too, even in DWARF 5, where 0 names the
   unit's primary file: its inline reader takes numbers from 1. */
static const char *
table_file(const struct sym_srcfiles *sf, Dwarf_Word idx, bool call)
{
	if (idx >= sf->n || (call && idx == 0) || !sf->names[idx])
		return unknown;
	return sf->names[idx];
}

/* Whether the DIE ORIGIN lies inside the unit of DIE, as Valgrind 3.19's
   inline reader decides: from the unit's first byte to its length field's
   value (which leaves out the length field itself, so the last 4 bytes
   of a unit count as outside it). */
static bool
same_unit(Dwarf_Die *origin, Dwarf_Die *die)
{
	Dwarf_Die cudie;
	Dwarf_Half version;
	uint8_t type, asize, osize;
	Dwarf_Off cu_off, start, next;
	size_t hsize, want;

	if (origin->cu != die->cu)
		return false;
	if (dwarf_cu_info(die->cu, &version, &type, &cudie, NULL, NULL,
			  &asize, &osize) != 0)
		return true;
	/* The unit's header: length, version, abbreviation offset, address
	   size, and in DWARF 5 the unit type and what it implies. */
	want = (osize == 8 ? 12 : 4) + 2 + osize + 1;
	if (version >= 5) {
		want += 1;
		if (type == DW_UT_skeleton || type == DW_UT_split_compile)
			want += 8;
		else if (type == DW_UT_type || type == DW_UT_split_type)
			want += 8 + osize;
	}
	cu_off = dwarf_dieoffset(&cudie);
	if (cu_off < want)
		return true;
	start = cu_off - want;
	if (dwarf_next_unit(dwarf_cu_getdwarf(die->cu), start, &next, &hsize,
			    NULL, NULL, NULL, NULL, NULL, NULL) != 0 ||
	    start + hsize != cu_off)
		return true;
	return dwarf_dieoffset(origin) < next - (osize == 8 ? 12 : 4);
}

static const char unknown_inlined[] = "UnknownInlinedFun";

/* The name of the subprogram ORIGIN, abstract origin of an inlined
   instance in the unit of DIE, as Valgrind 3.19 names it: its own
   DW_AT_name, else that of its DW_AT_specification (followed the same
   way), else "AbsOriFnNameNotFound"; "UnknownInlinedFun" as soon as the
   way leads out of DIE's unit, which Valgrind's reader cannot read. */
static const char *
origin_name(Dwarf_Die *origin, Dwarf_Die *die, unsigned hops)
{
	Dwarf_Attribute attr;
	Dwarf_Die spec;
	const char *name;

	if (!same_unit(origin, die))
		return unknown_inlined;
	if (dwarf_attr(origin, DW_AT_name, &attr) &&
	    (name = dwarf_formstring(&attr)))
		return name;
	if (hops < 16 && dwarf_attr(origin, DW_AT_specification, &attr) &&
	    dwarf_formref_die(&attr, &spec))
		return origin_name(&spec, die, hops + 1);
	return "AbsOriFnNameNotFound";
}

/* The name Massif gives the function inlined at DIE. Valgrind prints the
   plain DWARF name (not the linkage name) for inlined code. */
static const char *
inlined_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	Dwarf_Die origin;

	if (!dwarf_attr(die, DW_AT_abstract_origin, &attr) ||
	    !dwarf_formref_die(&attr, &origin))
		return unknown_inlined;
	return origin_name(&origin, die, 0);
}

/* Where the inlined instance DIE was called from, named from SF, its
   unit's file table (NULL: unreadable, libdw's names are used). Valgrind
   knows a call site even without DW_AT_call_file or DW_AT_call_line:
   "???" and 0. */
static struct where
call_site(Dwarf_Die *cu, const struct sym_srcfiles *sf, Dwarf_Die *die)
{
	struct where at = { unknown, 0 };
	Dwarf_Attribute attr;
	Dwarf_Word file, line;
	Dwarf_Files *files;
	size_t nfiles;

	if (dwarf_attr(die, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &line) == 0)
		at.line = (int)line;
	if (!dwarf_attr(die, DW_AT_call_file, &attr) ||
	    dwarf_formudata(&attr, &file) != 0)
		return at;
	if (sf) {
		at.file = table_file(sf, file, true);
	} else if (file > 0 && dwarf_getsrcfiles(cu, &files, &nfiles) == 0 &&
		   file < nfiles) {
		const char *path = dwarf_filesrc(files, file, NULL, NULL);
		const char *base = path ? strrchr(path, '/') : NULL;

		at.file = base ? base + 1 : path ? path : unknown;
	}
	return at;
}

/* The inlined instances covering an address, with their depth in the
   DIE tree. */
struct inl_set {
	struct inl {
		Dwarf_Die die;
		int level;
	} *v;
	size_t n, cap;
};

/* Whether DIE says which code it covers. */
static bool
has_code(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) ||
	       dwarf_hasattr(die, DW_AT_ranges);
}

static void
add_inlined(struct inl_set *s, Dwarf_Die *die, int level)
{
	ht_xgrow((void **)&s->v, &s->cap, s->n + 1, sizeof(*s->v));
	s->v[s->n++] = (struct inl){ *die, level };
}

/* Add to S every DW_TAG_inlined_subroutine below PARENT (at depth LEVEL)
   covering ADDR, looking where Valgrind 3.19's inline reader looks
   (sym_fns_at): inside subprograms, lexical blocks and inlined instances,
   whatever their own ranges say; but not inside a subprogram whose code
   is elsewhere (nothing of it can cover ADDR). */
static void
collect_inlined(Dwarf_Die *parent, int level, Dwarf_Addr addr,
		struct inl_set *s)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&child, addr) > 0)
				add_inlined(s, &child, level + 1);
			break;
		case DW_TAG_subprogram:
			if (has_code(&child) && dwarf_haspc(&child, addr) <= 0)
				continue;
			break;
		case DW_TAG_namespace:
		case DW_TAG_lexical_block:
			break;
		default:
			continue;
		}
		if (dwarf_haschildren(&child))
			collect_inlined(&child, level + 1, addr, s);
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* The inline chain at ADDR in CU of MOD, innermost first, into *CHAIN
   (malloc'd); returns its length. As Valgrind walks it: the deepest
   instance covering ADDR, then the deepest one less deep than that, and
   so on. The instances are looked for inside the function at ADDR only,
   found by sym_fns_at: libdw's dwarf_getscopes, used before, never looks
   inside a namespace (it covers no address), where Rust puts every
   function, and so found no inlined instance at all in Rust code. None
   in a unit Valgrind's reader gave up before (sym_inline_readable). */
static size_t
inline_chain(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr,
	     Dwarf_Die **chain)
{
	struct inl_set s = { NULL, 0, 0 };
	struct sym_fn_at *fns;
	size_t nfns;
	int below = 1 << 30;
	size_t n = 0;

	*chain = NULL;
	if (!sym_inline_readable(mod, cu))
		return 0;
	nfns = sym_fns_at(mod, cu, addr, &fns);

	for (size_t i = 0; i < nfns; i++) {
		if (dwarf_tag(&fns[i].die) == DW_TAG_inlined_subroutine) {
			if (dwarf_haspc(&fns[i].die, addr) <= 0)
				continue;
			add_inlined(&s, &fns[i].die, fns[i].level);
		}
		if (dwarf_haschildren(&fns[i].die))
			collect_inlined(&fns[i].die, fns[i].level, addr, &s);
	}
	free(fns);
	*chain = s.n ? ht_xcalloc(s.n, sizeof(**chain)) : NULL;
	for (;;) {
		const struct inl *best = NULL;

		for (size_t i = 0; i < s.n; i++)
			if (s.v[i].level < below &&
			    (!best || s.v[i].level > best->level))
				best = &s.v[i];
		if (!best)
			break;
		(*chain)[n++] = best->die;
		below = best->level;
	}
	free(s.v);
	return n;
}

/* The line table row whose file Valgrind 3.19 names for the code of row
   LINE of CU. Valgrind stores each row's code as an entry, and adds an
   entry to the one before when both are of the same line number and meet,
   without comparing their files (unless the two would pass 4095 bytes):
   the file of a run of same-numbered rows is the run's first one's. Within
   a sequence, as here; across two (rarer still: a function's last line
   numbered as the next one's first) the merge is not followed. */
static Dwarf_Line *
merged_row(Dwarf_Die *cu, Dwarf_Line *line)
{
	Dwarf_Lines *lines;
	size_t n, lo = 0, hi, k, start;
	Dwarf_Addr addr, a, b;
	int lineno, l;
	bool end;
	uint64_t size;

	if (dwarf_getsrclines(cu, &lines, &n) != 0 ||
	    dwarf_lineaddr(line, &addr) != 0 || dwarf_lineno(line, &lineno) != 0)
		return line;
	/* LINE's index: the rows are sorted by address. */
	hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (dwarf_lineaddr(dwarf_onesrcline(lines, mid), &a) != 0)
			return line;
		if (a < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (k = lo; k < n && dwarf_onesrcline(lines, k) != line; k++)
		;
	if (k == n)
		return line;
	/* Back to the first row of the run: a row whose code is empty
	   (the next row starts at the same address) is no entry and does
	   not end the run. */
	for (start = k; start > 0; start--) {
		Dwarf_Line *prev = dwarf_onesrcline(lines, start - 1);

		if (dwarf_lineendsequence(prev, &end) != 0 || end ||
		    dwarf_lineaddr(prev, &a) != 0 ||
		    dwarf_lineaddr(dwarf_onesrcline(lines, start), &b) != 0)
			break;
		if (a != b && (dwarf_lineno(prev, &l) != 0 || l != lineno))
			break;
	}
	/* Forward to LINE, as the entries are added: a new one wherever the
	   merged size would pass Valgrind's limit. */
	size = 0;
	for (size_t j = start, first = start; j <= k; j++) {
		if (dwarf_lineaddr(dwarf_onesrcline(lines, j), &a) != 0 ||
		    j + 1 >= n ||
		    dwarf_lineaddr(dwarf_onesrcline(lines, j + 1), &b) != 0)
			return line;
		if (a == b)
			continue;
		if (size == 0 || size + (b - a) > 4095) {
			first = j;
			size = 0;
		}
		size += b - a;
		if (j == k)
			return dwarf_onesrcline(lines, first);
	}
	return line;
}

/* Fill F's lines for PC in MOD, whose function is F->name: the inline
   chain innermost first, each inlined function at the position inside it
   of the call to the next-inner one (the innermost at PC's own line), and
   the real function last. */
static void
describe_pc(struct sym_frame *f, Dwfl_Module *mod, uint64_t pc,
	    const char *object)
{
	struct where at = { NULL, 0 };
	const struct sym_srcfiles *sf = NULL;
	Dwarf_Die *chain = NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu = sym_module_cu(mod, pc, &bias);
	Dwarf_Line *line;
	Dwarf_Files *files;
	size_t idx, n = 0;

	if (cu) {
		sf = sym_module_srcfiles(mod, cu);
		if (sf && !sf->n)
			sf = NULL;
		line = dwarf_getsrc_die(cu, pc - bias);
		if (line && sf &&
		    dwarf_line_file(merged_row(cu, line), &files, &idx) == 0) {
			at.file = table_file(sf, idx, false);
			dwarf_lineno(line, &at.line);
		} else if (line && (at.file = dwarf_linesrc(line, NULL, NULL))) {
			const char *base = strrchr(at.file, '/');

			if (base)
				at.file = base + 1;
			dwarf_lineno(line, &at.line);
		}
		n = inline_chain(mod, cu, pc - bias, &chain);
	}
	for (size_t i = 0; i < n && f->n_lines < HT_MAX_INLINE - 1; i++) {
		f->lines[f->n_lines++] =
			format_line(inlined_name(&chain[i]), at, object);
		at = call_site(cu, sf, &chain[i]);
	}
	free(chain);
	f->lines[f->n_lines++] = format_line(f->name, at, object);
	if (f->name && ht_is_below_main(f->name))
		f->below_main = format_line("(below main)", at, object);
}

/* The frame's start: an offset into MOD's cache, and MOD's name. */
static uint64_t
module_offset(Dwfl_Module *mod, uint64_t pc, const char **object)
{
	Dwarf_Addr start = 0;

	*object = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL,
				   NULL);
	return pc - start;
}

/* Give F, the record of PC in MOD, its lines: from MOD's cache on disk,
   else from the debug information, then kept in the cache. */
static void
describe(struct sym_frame *f, Dwfl_Module *mod, uint64_t pc,
	 struct sym_unwind_stats *stats)
{
	struct sym_cache *c = sym_module_cache(mod);
	const char *object;
	uint64_t off = module_offset(mod, pc, &object);
	const struct sym_frame *kept = c ? sym_cache_frame(c, off) : NULL;

	stats->described++;
	if (kept && kept->lines) {
		sym_frame_copy_lines(f, kept);
		stats->cached_described++;
		return;
	}
	f->lines = ht_xcalloc(HT_MAX_INLINE, sizeof(*f->lines));
	describe_pc(f, mod, pc, object);
	f->lines = ht_xreallocarray(f->lines, f->n_lines, sizeof(*f->lines));
	if (c)
		sym_cache_put_frame(c, off, f);
}

/* F's one line when its pc is in no module. */
static void
describe_unknown(struct sym_frame *f)
{
	f->lines = ht_xcalloc(1, sizeof(*f->lines));
	f->lines[f->n_lines++] = ht_xstrdup(unknown);
}

struct sym_frame *
sym_frame_resolve(Dwfl_Module *mod, uint64_t pc,
		  struct sym_unwind_stats *stats)
{
	struct sym_frame *f = ht_xcalloc(1, sizeof(*f));
	struct sym_cache *c;
	const struct sym_frame *kept;
	const char *object, *raw;
	uint64_t off;

	stats->named++;
	if (!mod) {
		describe_unknown(f);
		return f;
	}
	c = sym_module_cache(mod);
	off = module_offset(mod, pc, &object);
	kept = c ? sym_cache_frame(c, off) : NULL;
	if (kept) {
		stats->cached_named++;
		f->name = kept->name ? ht_xstrdup(kept->name) : NULL;
		if (kept->lines) {
			sym_frame_copy_lines(f, kept);
			stats->described++;
			stats->cached_described++;
		}
		return f;
	}
	raw = sym_module_function(mod, pc);
	if (raw)
		f->name = demangle(raw);
	if (c)
		sym_cache_put_frame(c, off, f);
	return f;
}

void
sym_frame_describe(struct sym_frame *f, Dwfl_Module *mod, uint64_t pc,
		   struct sym_unwind_stats *stats)
{
	if (mod)
		describe(f, mod, pc, stats);
	else
		describe_unknown(f);
}
