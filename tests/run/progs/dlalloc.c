/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The shared library dlopen.c loads: allocates through its own functions,
   so the trees hold frames of an object that is unloaded before exit. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *kept;

NOINLINE static void *lib_leaf(size_t n)
{
	void *p = malloc(n);

	return p;
}

/* Allocate 1500 + 2500 bytes, free the 1500, keep the 2500 until
   dl_release(). Returns the number of bytes kept. */
NOINLINE int dl_work(void)
{
	void *tmp = lib_leaf(1500);

	kept = lib_leaf(2500);
	free(tmp);
	return 2500;
}

NOINLINE void dl_release(void)
{
	free(kept);
	kept = NULL;
}
