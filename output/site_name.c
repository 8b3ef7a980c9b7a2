/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Site naming (output/site_name.h). A stack seen from outside the
   process often has file:line only in the C library (libc6-dbg is common,
   a program's debug info is not), so "the innermost frame with a
   file:line" names nearly every site after libc's start-up code; the
   frames worth reading are the program's, named by its symbols. */
#include "output/site_name.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/synthframe.h"
#include "common/xalloc.h"

/* Prefixes of the allocation shims of Rust's standard library: its
   global allocator's entry points and alloc::alloc's wrappers. */
static const char *const rust_shims[] = {
	"__rust_alloc", "__rust_realloc", "__rdl_alloc", "__rdl_realloc",
	"__rg_alloc", "__rg_realloc", "alloc::alloc::",
	"<alloc::alloc::Global as ",
};

/* Whether DESC holds the word --alloc-fn=FN. A name may hold blanks
   ("operator new(unsigned long)"), so it runs to the next " --" or the
   end of the line. */
static bool
desc_names_alloc_fn(const char *desc, const char *fn)
{
	static const char key[] = "--alloc-fn=";
	size_t fn_len = strlen(fn);
	for (const char *p = desc ? strstr(desc, key) : NULL; p;
	     p = strstr(p + 1, key)) {
		if (p != desc && p[-1] != ' ')
			continue;
		const char *name = p + sizeof(key) - 1;
		const char *end = strstr(name, " --");
		size_t len = end ? (size_t)(end - name) : strlen(name);
		if (len == fn_len && memcmp(name, fn, len) == 0)
			return true;
	}
	return false;
}

bool
site_is_allocator_function(const char *fn, const char *desc)
{
	if (sites_is_alloc_function(fn))
		return true;
	for (size_t i = 0; i < sizeof(rust_shims) / sizeof(rust_shims[0]); i++)
		if (strncmp(fn, rust_shims[i], strlen(rust_shims[i])) == 0)
			return true;
	return desc_names_alloc_fn(desc, fn);
}

/* File name prefixes of the C library's objects (glibc's and musl's,
   with their dynamic loaders) and of allocator libraries. */
static const char *const allocator_objects[] = {
	"libc.so", "libc-2.", "libc.musl-", "ld-linux", "ld-musl-",
	"ld64.so", "ld.so", "libpthread.so", "libpthread-2.", "libdl.so",
	"libdl-2.", "libjemalloc.so", "libtcmalloc", "libmimalloc",
	"libtbbmalloc",
};

bool
site_is_allocator_object(const char *object)
{
	if (!object)
		return false;
	const char *slash = strrchr(object, '/');
	const char *base = slash ? slash + 1 : object;
	for (size_t i = 0;
	     i < sizeof(allocator_objects) / sizeof(allocator_objects[0]); i++)
		if (strncmp(base, allocator_objects[i],
			    strlen(allocator_objects[i])) == 0)
			return true;
	return false;
}

/* Base name prefixes of C++'s standard libraries. */
static const char *const standard_objects[] = {
	"libstdc++.so", "libc++.so", "libc++abi.so",
};

/* Namespaces of C++'s and Rust's standard libraries, as a demangled
   name's qualified function starts ("<" for a Rust trait impl's
   "<alloc::vec::Vec<T> as ...>"). */
static const char *const standard_namespaces[] = {
	"std::", "__gnu_cxx::", "__cxxabiv1::", "alloc::", "core::",
	"<std::", "<alloc::", "<core::",
};

static bool
has_any_prefix(const char *s, const char *const *prefixes, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strncmp(s, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* FN's qualified name without a template function's return type ("void
   std::basic_string<...>::_M_construct<...>(...)"): what follows the
   last blank outside brackets before the parameter list. */
static const char *
qualified_name(const char *fn)
{
	const char *start = fn;
	int depth = 0;
	for (const char *p = fn; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (*p == '(' && !depth)
			break;
		else if (*p == ' ' && !depth)
			start = p + 1;
	}
	return start;
}

bool
site_is_standard_library(const char *fn, const char *object)
{
	const char *slash = object ? strrchr(object, '/') : NULL;
	const char *base = slash ? slash + 1 : object;
	if (base && has_any_prefix(base, standard_objects,
				   sizeof(standard_objects) /
					   sizeof(standard_objects[0])))
		return true;
	return has_any_prefix(qualified_name(fn), standard_namespaces,
			      sizeof(standard_namespaces) /
				      sizeof(standard_namespaces[0]));
}

/* What the naming rule needs to know of one frame. */
struct frame_kind {
	bool named;      /* a function name, not ??? nor (below main) */
	bool alloc_fn;   /* an allocator's entry point by its name */
	bool alloc_obj;  /* in the C library or an allocator library */
	bool stdlib;     /* a language's standard library */
	bool inner;      /* no frame outside those lies inward of it */
	bool startup;    /* outward of main: the C library's start-up */
};

static const char *
frame_object(const struct sites_file *sf, const struct sites_frame *fr)
{
	const struct sites_mapping *m = sf ? sites_mapping_of(sf, fr->addr) :
					     NULL;
	return m && m->file ? m->file : fr->object;
}

static int
name_cmp(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

bool
site_naming_is_alloc_fn(const struct site_naming *nm, const char *fn,
			bool with_wrappers)
{
	if (site_is_allocator_function(fn, nm->desc))
		return true;
	for (size_t i = 0; i < nm->n_alloc_fns; i++)
		if (strcmp(fn, nm->alloc_fns[i]) == 0)
			return true;
	return with_wrappers && nm->n_wrappers &&
	       bsearch(fn, nm->wrappers, nm->n_wrappers,
		       sizeof(*nm->wrappers), name_cmp);
}

size_t
site_alloc_depth(const struct site_naming *nm, const struct sites_site *s,
		 bool with_wrappers)
{
	size_t i = 0;
	while (i < s->n_frames &&
	       (site_naming_is_alloc_fn(nm, s->frames[i].function,
					with_wrappers) ||
		site_is_allocator_object(frame_object(nm->sf, &s->frames[i]))))
		i++;
	return i;
}

static struct frame_kind
frame_kind_of(const struct site_naming *nm, const struct sites_frame *fr)
{
	return (struct frame_kind){
		.named = strcmp(fr->function, "???") != 0 &&
			 strncmp(fr->function, "(below main)", 12) != 0,
		.alloc_fn = site_naming_is_alloc_fn(nm, fr->function, true),
		.alloc_obj = site_is_allocator_object(frame_object(nm->sf, fr)),
		.stdlib = site_is_standard_library(fr->function,
						   frame_object(nm->sf, fr)),
	};
}

/* The passes of the rule, best first. */
enum pass {
	PASS_PROGRAM_NAMED,  /* named, outside the allocator and the
				standard library */
	PASS_STDLIB_NAMED,   /* named, the standard library's */
	PASS_LIBC_NAMED,     /* named, libc's own caller of the allocator */
	PASS_PROGRAM,        /* outside the allocator, maybe unnamed */
	PASS_NAMED,          /* named at all */
	PASS_N,
};

static bool
pass_takes(enum pass p, struct frame_kind k)
{
	if (k.startup && p != PASS_NAMED)
		return false;
	switch (p) {
	case PASS_PROGRAM_NAMED:
		return k.named && !k.alloc_fn && !k.alloc_obj && !k.stdlib;
	case PASS_STDLIB_NAMED:
		return k.named && !k.alloc_fn && !k.alloc_obj;
	case PASS_LIBC_NAMED:
		/* not the start-up code outward of the program's frames */
		return k.named && !k.alloc_fn && k.inner;
	case PASS_PROGRAM:
		return !k.alloc_fn && !k.alloc_obj;
	case PASS_NAMED:
		return k.named;
	default:
		return false;
	}
}

/* The innermost Python frame of S that is no allocation function by
   NM, or NULL. A Python frame is the program's own code; the C frames
   inward of it are the interpreter's (or an extension's) working for
   the line it runs, so it names the site before any of them. */
static const struct sites_frame *
python_frame(const struct site_naming *nm, const struct sites_site *s)
{
	for (size_t i = 0; i < s->n_frames; i++)
		if (synth_frame_is(s->frames[i].addr) &&
		    !site_naming_is_alloc_fn(nm, s->frames[i].function, true))
			return &s->frames[i];
	return NULL;
}

const struct sites_frame *
site_name_frame(const struct site_naming *nm, const struct sites_site *s)
{
	if (!s->n_frames)
		return NULL;
	const struct sites_frame *py = python_frame(nm, s);
	if (py)
		return py;
	/* one look at each frame, then the best pass that takes one */
	const struct sites_frame *best[PASS_N] = { NULL };
	bool inner = true, startup = false;
	for (size_t i = 0; i < s->n_frames; i++) {
		const char *fn = s->frames[i].function;
		struct frame_kind k = frame_kind_of(nm, &s->frames[i]);
		inner = inner && k.alloc_obj;
		k.inner = inner;
		/* what lies below main is start-up code, which an old .sites
		   without mappings cannot tell from the program by its object */
		startup = startup || strncmp(fn, "(below main)", 12) == 0;
		k.startup = startup;
		startup = startup || strcmp(fn, "main") == 0;
		for (int p = 0; p < PASS_N; p++)
			if (!best[p] && pass_takes(p, k))
				best[p] = &s->frames[i];
		if (best[PASS_PROGRAM_NAMED])
			return best[PASS_PROGRAM_NAMED];
	}
	for (int p = 0; p < PASS_N; p++)
		if (best[p])
			return best[p];
	return &s->frames[0];
}

void
site_naming_free(struct site_naming *nm)
{
	free(nm->wrappers);
	*nm = (struct site_naming){ 0 };
}

char *
site_frame_text(const struct sites_frame *fr)
{
	char unknown[32];
	const char *fn = fr->function;
	if (strcmp(fn, "???") == 0) {
		snprintf(unknown, sizeof(unknown), "??? [0x%" PRIX64 "]",
			 fr->addr);
		fn = unknown;
	}
	if (fr->file)
		return ht_xasprintf("%s (%s:%lu)", fn, fr->file, fr->line);
	if (fr->object)
		return ht_xasprintf("%s (in %s)", fn, fr->object);
	return ht_xstrdup(fn);
}
