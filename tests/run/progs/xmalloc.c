/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocator wrappers for the allocfn program (xmalloc.h). */
#include <stdlib.h>
#include <string.h>

#include "xmalloc.h"

NOINLINE void *my_xmalloc(size_t n)
{
	void *p = malloc(n);

	if (!p)
		abort();
	return p;
}

NOINLINE void *my_xzalloc(size_t n)
{
	void *p = my_xmalloc(n);

	memset(p, 0, n);
	return p;
}
