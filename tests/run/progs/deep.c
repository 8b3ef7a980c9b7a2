/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Deep recursion: blocks allocated 60 levels down (deeper than the default
   --depth=30), 10 levels down and directly in main, so the trees are cut
   at --depth. descend() is called through itself only, never as a tail
   call (the result is used after the call). */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *leaf(size_t n)
{
	void *p = malloc(n);

	return p;
}

NOINLINE static void *descend(unsigned levels, size_t n)
{
	void *p;

	if (levels == 0)
		return leaf(n);
	p = descend(levels - 1, n);
	/* Work after the call keeps this frame alive during it. */
	if (!p)
		abort();
	return p;
}

int main(void)
{
	void *a = descend(60, 3000);
	void *b = descend(60, 1000);
	void *c = descend(10, 2000);
	void *d = leaf(500);

	free(c);
	free(a);
	free(b);
	free(d);
	return 0;
}
