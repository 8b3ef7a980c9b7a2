/* SPDX-License-Identifier: GPL-2.0-or-later */
/* libdw's dlopen of libdebuginfod, refused when no debuginfod server is
   named (DEBUGINFOD_URLS unset or empty). libdw 0.188 loads it, and its
   30 libraries (curl, gnutls, krb5), at the first module without a local
   debug file, which most programs' own executable is: 1-3 ms of a run's
   CPU, and more at its end (debuginfod_end), to learn that no server
   answers, as the client says (-ENOSYS) when none is named. A dlopen
   defined in the program is the one every library's calls bind to (the
   executable comes first in the global scope); it is linked in because
   demangle.c calls dlopen. Any other name goes to the C library's. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

void *
dlopen(const char *file, int mode)
{
	static void *(*real)(const char *, int);
	const char *urls = getenv("DEBUGINFOD_URLS");

	if (file && strcmp(file, "libdebuginfod.so.1") == 0 &&
	    (!urls || !*urls))
		return NULL;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "dlopen");
	return real ? real(file, mode) : NULL;
}
