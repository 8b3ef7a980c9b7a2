/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A custom allocator wrapper, my_xmalloc (xmalloc.c), called from main,
   from two helper functions, and through my_xzalloc. Traced with
   --alloc-fn=my_xmalloc the my_xmalloc frames disappear from the trees and
   each block is charged to the wrapper's caller; without it, every block
   sits under one my_xmalloc node. */
#include <stdlib.h>

#include "xmalloc.h"

NOINLINE static void *make_name(void)
{
	void *p = my_xmalloc(300);

	return p;
}

NOINLINE static void *make_table(void)
{
	void *p = my_xzalloc(3000);

	return p;
}

int main(void)
{
	void *a = my_xmalloc(1000);
	void *b = make_name();
	void *c = make_table();
	void *d = malloc(2000);

	free(a);
	free(b);
	free(c);
	free(d);
	return 0;
}
