/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Loads the library named by argv[1], runs through it to a stop, unloads
   it and stops again: the session must find the library when it meets its
   code, and drop it when re-reading the modules, keeping what it resolved. */
#include "mark.h"

#include <dlfcn.h>
#include <signal.h>

typedef void entry_fn(void (*)(void));

static NOINLINE void
leaf(void)
{
	CALL(raise(SIGSTOP));
}

int
main(int argc, char **argv)
{
	entry_fn *entry;
	void *h;

	if (argc < 2 || !(h = dlopen(argv[1], RTLD_NOW)))
		return 2;
	*(void **)&entry = dlsym(h, "dl_entry");
	if (!entry)
		return 2;
	CALL(entry(leaf));
	dlclose(h);
	CALL(raise(SIGSTOP));
	return 0;
}
