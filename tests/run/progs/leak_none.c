/* SPDX-License-Identifier: GPL-2.0-or-later */
/* No leak: blocks from malloc, calloc, realloc, aligned_alloc and strdup,
   all freed. memcheck prints "All heap blocks were freed -- no leaks are
   possible". argv[1]: the exit status (see leak_common.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* strdup */
#endif
#include <stdlib.h>
#include <string.h>

#include "leak_common.h"

NOINLINE static void use_and_free(void)
{
	char *a = malloc(100);
	int *b = calloc(10, sizeof(int));
	char *c = realloc(NULL, 50);
	void *d = aligned_alloc(64, 256);
	char *e = strdup("no leak here");

	if (!a || !b || !c || !d || !e)
		exit(1);
	c = realloc(c, 500);
	if (!c)
		exit(1);
	free(e);
	free(d);
	free(c);
	free(b);
	free(a);
}

int main(int argc, char **argv)
{
	use_and_free();
	return finish(argc, argv);
}
