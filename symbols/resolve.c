/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a code address is, once per address: the containing function's
   symbol-table name (demangled), and Massif's description lines, built from
   the line table and the DWARF inline tree. Results are kept for the life
   of the session, past the process's exit. */
#include "session.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "sym_priv.h"

/* libstdc++'s demangler, the one g++'s own tools use. Declared here so that
   C code needs no <cxxabi.h>. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
		     int *status);

static const char unknown[] = "???";

/* RAW demangled when it is a C++ name, else a copy. A symbol version
   ("@@GLIBCXX_3.4") is not part of the mangling: it is cut off before
   demangling and appended again, as Massif prints it. */
static char *
demangle(const char *raw)
{
	const char *at;
	char *base, *plain, *out;
	int status = -1;

	if (strncmp(raw, "_Z", 2) != 0)
		return ht_xstrdup(raw);
	at = strchr(raw, '@');
	base = at ? ht_xasprintf("%.*s", (int)(at - raw), raw) : NULL;
	plain = __cxa_demangle(base ? base : raw, NULL, NULL, &status);
	free(base);
	if (status != 0 || !plain) {
		free(plain);
		return ht_xstrdup(raw);
	}
	out = ht_xasprintf("%s%s", plain, at ? at : "");
	free(plain);
	return out;
}

/* A source position: FILE as the line table records it (NULL: unknown). */
struct where {
	const char *file;
	int line;
};

/* One description line: "fn (file.c:12)", "fn (in /obj)", "??? (in /obj)". */
static char *
format_line(const char *fn, struct where at, const char *object)
{
	const char *base;

	if (!fn)
		fn = unknown;
	if (at.file) {
		base = strrchr(at.file, '/');
		return ht_xasprintf("%s (%s:%d)", fn, base ? base + 1 : at.file,
				    at.line);
	}
	return ht_xasprintf("%s (in %s)", fn, object ? object : unknown);
}

/* DIE's name, looking through DW_AT_abstract_origin and
   DW_AT_specification: an inlined instance carries none of its own. Valgrind
   prints this plain DWARF name (not the linkage name) for inlined code. */
static const char *
die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *name = NULL;

	if (dwarf_attr_integrate(die, DW_AT_name, &attr))
		name = dwarf_formstring(&attr);
	return name ? name : unknown;
}

/* Where the inlined instance DIE was called from, in CU's file table. */
static struct where
call_site(Dwarf_Die *cu, Dwarf_Die *die)
{
	struct where at = { NULL, 0 };
	Dwarf_Attribute attr;
	Dwarf_Word file, line;
	Dwarf_Files *files;
	size_t nfiles;

	if (!dwarf_attr(die, DW_AT_call_file, &attr) ||
	    dwarf_formudata(&attr, &file) != 0 ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || file >= nfiles)
		return at;
	at.file = dwarf_filesrc(files, file, NULL, NULL);
	if (at.file && dwarf_attr(die, DW_AT_call_line, &attr) &&
	    dwarf_formudata(&attr, &line) == 0)
		at.line = (int)line;
	return at;
}

/* The concrete scopes containing ADDR, innermost first, as far out as the
   CU. dwarf_getscopes stops at the innermost inlined instance (continuing
   with its abstract definition's scopes, which say nothing about this
   address), so the rest is asked for by that instance's DIE. Returns the
   count and a malloc'd array in *SCOPES, or 0. */
static int
concrete_scopes(Dwarf_Die *cu, Dwarf_Addr addr, Dwarf_Die **scopes)
{
	Dwarf_Die *first = NULL;
	int n = dwarf_getscopes(cu, addr, &first);
	int m;

	for (int i = 0; i < n; i++) {
		if (dwarf_tag(&first[i]) != DW_TAG_inlined_subroutine)
			continue;
		m = dwarf_getscopes_die(&first[i], scopes);
		free(first);
		return m > 0 ? m : 0;
	}
	/* No inlined instance: the scopes found are the concrete ones. */
	*scopes = first;
	return n > 0 ? n : 0;
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
	Dwarf_Die *scopes = NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu = sym_module_cu(mod, pc, &bias);
	Dwarf_Line *line;
	int n = 0;

	if (cu) {
		line = dwarf_getsrc_die(cu, pc - bias);
		if (line && (at.file = dwarf_linesrc(line, NULL, NULL)))
			dwarf_lineno(line, &at.line);
		n = concrete_scopes(cu, pc - bias, &scopes);
	}
	for (int i = 0; i < n && f->n_lines < HT_MAX_INLINE - 1; i++) {
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		f->lines[f->n_lines++] =
			format_line(die_name(&scopes[i]), at, object);
		at = call_site(cu, &scopes[i]);
	}
	free(scopes);
	f->lines[f->n_lines++] = format_line(f->name, at, object);
	if (f->name && ht_is_below_main(f->name))
		f->below_main = format_line("(below main)", at, object);
}

/* Everything about PC, looked up now. */
static struct sym_frame *
resolve(struct sym_session *ss, uint64_t pc)
{
	struct sym_frame *f = ht_xcalloc(1, sizeof(*f));
	Dwfl_Module *mod = sym_session_module(ss, pc);
	const char *object, *raw;

	f->lines = ht_xcalloc(HT_MAX_INLINE, sizeof(*f->lines));
	if (!mod) {
		f->lines[f->n_lines++] = ht_xstrdup(unknown);
		return f;
	}
	object = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL,
				  NULL);
	raw = sym_module_function(mod, pc);
	if (raw)
		f->name = demangle(raw);
	describe_pc(f, mod, pc, object);
	f->lines = ht_xreallocarray(f->lines, f->n_lines, sizeof(*f->lines));
	return f;
}

const struct sym_frame *
sym_frame_get(struct sym_session *ss, uint64_t pc)
{
	uint64_t *val = u64map_get(&ss->frames, pc);
	struct sym_frame *f;

	if (val)
		return (const struct sym_frame *)(uintptr_t)*val;
	f = resolve(ss, pc);
	u64map_put(&ss->frames, pc, (uint64_t)(uintptr_t)f);
	return f;
}

struct sym_frame *
sym_frame_copy(const struct sym_frame *f)
{
	struct sym_frame *c = ht_xcalloc(1, sizeof(*c));

	c->name = f->name ? ht_xstrdup(f->name) : NULL;
	c->below_main = f->below_main ? ht_xstrdup(f->below_main) : NULL;
	c->n_lines = f->n_lines;
	c->lines = ht_xcalloc(f->n_lines, sizeof(*c->lines));
	for (unsigned i = 0; i < f->n_lines; i++)
		c->lines[i] = ht_xstrdup(f->lines[i]);
	return c;
}

void
sym_frame_free(struct sym_frame *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->below_main);
	for (unsigned i = 0; i < f->n_lines; i++)
		free(f->lines[i]);
	free(f->lines);
	free(f);
}

static const char *
session_function_name(void *ctx, uint64_t pc)
{
	return sym_frame_get(ctx, pc)->name;
}

static unsigned
session_describe(void *ctx, uint64_t pc, const char **lines, unsigned max)
{
	const struct sym_session *ss = ctx;
	const struct sym_frame *f = sym_frame_get(ctx, pc);
	unsigned n = f->n_lines < max ? f->n_lines : max;

	for (unsigned i = 0; i < n; i++)
		lines[i] = f->lines[i];
	/* The real function is the last line, when MAX leaves room for it. */
	if (n == f->n_lines && f->below_main && !ss->show_below_main)
		lines[n - 1] = f->below_main;
	return n;
}

void
sym_session_show_below_main(struct sym_session *ss, bool show)
{
	ss->show_below_main = show;
}

struct ht_symbolizer
sym_session_symbolizer(struct sym_session *ss)
{
	return (struct ht_symbolizer){
		.ctx = ss,
		.function_name = session_function_name,
		.describe = session_describe,
	};
}
