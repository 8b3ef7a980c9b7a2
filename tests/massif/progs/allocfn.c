/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation wrappers for --alloc-fn: xmalloc -> my_alloc -> malloc, and
   xmalloc's large-request path through big_alloc, a function that is not an
   alloc-fn, so the xmalloc frame below it must stay in the tree.
   Allocation sequence: see allocfn.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *my_alloc(size_t n) { return malloc(n); }
NOINLINE void *big_alloc(size_t n) { return my_alloc(n); }

NOINLINE void *xmalloc(size_t n)
{
	if (n > 4096)
		return big_alloc(n);
	return my_alloc(n);
}

NOINLINE void *make_node(void) { return xmalloc(48); }

int main(void)
{
	void *node[3];
	void *a = xmalloc(100);
	void *b = xmalloc(10000);
	void *c = my_alloc(200);

	for (int i = 0; i < 3; i++)
		node[i] = make_node();
	void *e = big_alloc(5000);
	void *f = malloc(300);
	free(a);
	free(node[1]);
	free(b);
	free(c);
	free(e);
	free(f);
	free(node[0]);
	free(node[2]);
	return 0;
}
