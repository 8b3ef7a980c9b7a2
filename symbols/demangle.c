/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Symbol-table names as Massif prints them. Valgrind 3.19 demangles every
   name that starts with "_Z" or "_R" with libiberty, Rust first (a legacy
   Rust name is also a valid Itanium C++ name, so the order matters), then
   C++, with DMGL_PARAMS | DMGL_ANSI. For Rust we call the same libiberty
   code, Debian's libiberty-dev (gcc's libiberty of January 2023; Valgrind
   3.19 carries that of February 2022, whose Rust demangler differs at most
   in recursion limits against hostile input; over 8,000 real and made-up
   names came out byte for byte as Massif printed them). So legacy names
   lose their hash and $..$ escapes and v0 names get libiberty's spelling
   ("{closure#0}", "<X as Y>", generic arguments). C++ names keep going
   through libstdc++'s __cxa_demangle, whose output the C++ parity tests
   hold equal to Massif's. */
#include "demangle.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "common/err.h"
#include "common/xalloc.h"

/* libstdc++'s demangler, the one g++'s own tools use: __cxa_demangle. */
typedef char *cxa_demangle_fn(const char *mangled, char *buf, size_t *len,
			      int *status);

/* __cxa_demangle, from libstdc++ loaded at the first C++ name, or NULL
   when it cannot be loaded. Not linked: libstdc++'s relocations and
   static constructors cost every start of heaptrace about a millisecond
   of CPU, and most programs profiled have no C++ name. */
static cxa_demangle_fn *
cxa_demangle(void)
{
	static bool tried;
	static cxa_demangle_fn *fn;
	if (tried)
		return fn;
	tried = true;
	void *lib = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		*(void **)&fn = dlsym(lib, "__cxa_demangle");
	if (!fn) {
		const char *why = dlerror();
		ht_warn("cannot load libstdc++.so.6 (%s): C++ names are left "
			"mangled", why ? why : "not found");
	}
	return fn;
}

/* NAME (no symbol version) demangled in a malloc'd string, or NULL. */
static char *
demangle_base(const char *name)
{
	char *plain;
	int status = -1;

	/* Returns NULL for anything that is not a well-formed Rust name,
	   including every C++ name (a legacy Rust name needs the
	   "17h<16 hex digits>E" hash as its last path element). */
	plain = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (plain || name[1] != 'Z')
		return plain;
	cxa_demangle_fn *cxa = cxa_demangle();
	if (!cxa)
		return NULL;
	plain = cxa(name, NULL, NULL, &status);
	if (status != 0) {
		free(plain);
		return NULL;
	}
	return plain;
}

char *
sym_demangle(const char *raw)
{
	const char *at;
	char *base, *plain, *out;

	if (raw[0] != '_' || (raw[1] != 'Z' && raw[1] != 'R'))
		return ht_xstrdup(raw);
	at = strchr(raw, '@');
	base = at ? ht_xasprintf("%.*s", (int)(at - raw), raw) : NULL;
	plain = demangle_base(base ? base : raw);
	free(base);
	if (!plain)
		return ht_xstrdup(raw);
	out = ht_xasprintf("%s%s", plain, at ? at : "");
	free(plain);
	return out;
}
