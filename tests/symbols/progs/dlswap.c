/* SPDX-License-Identifier: GPL-2.0-or-later */
/* argv[1] is "LIB1:LIB2". Loads LIB1, runs through it to a stop, unloads
   it, loads LIB2 (the dynamic linker puts it in the hole LIB1 left when it
   is no larger) and stops again: the unwinding rules kept for LIB1's
   addresses must not survive into LIB2's code. */
#include "mark.h"

#include <dlfcn.h>
#include <signal.h>
#include <string.h>

typedef void entry_fn(void (*)(void));

static NOINLINE void
leaf(void)
{
	CALL(raise(SIGSTOP));
}

/* Load LIB and run its dl_entry down to leaf; returns the handle. */
static void *
run(const char *lib)
{
	entry_fn *entry;
	void *h = dlopen(lib, RTLD_NOW);

	if (!h)
		return NULL;
	*(void **)&entry = dlsym(h, "dl_entry");
	if (!entry)
		return NULL;
	CALL(entry(leaf));
	return h;
}

int
main(int argc, char **argv)
{
	char *second;
	void *h;

	if (argc < 2 || !(second = strchr(argv[1], ':')))
		return 2;
	*second++ = '\0';
	h = run(argv[1]);
	if (!h)
		return 2;
	dlclose(h);
	if (!run(second))
		return 2;
	return 0;
}
