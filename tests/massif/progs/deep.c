/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Deep stacks for --depth: the same leaf reached through 0, 3, 6 and 40
   levels of recursion (40 is deeper than the default depth of 30), so the
   trees are cut at different levels. Allocation sequence: see deep.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *leaf(size_t n) { return malloc(n); }

NOINLINE void *rec(unsigned d, size_t n)
{
	if (d == 0)
		return leaf(n);
	return rec(d - 1, n);
}

int main(void)
{
	void *a = rec(0, 100);
	void *b = rec(3, 200);
	void *c = rec(6, 400);
	void *d = rec(40, 800);
	void *e = leaf(1600);
	free(b);
	free(d);
	free(a);
	free(c);
	free(e);
	return 0;
}
