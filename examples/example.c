/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The example program of Massif's manual: a few allocations through two
   levels of helper functions, so the profile shows a tree, a peak and the
   order of siblings. */
#include <stdlib.h>

void *g(size_t n) { return malloc(n); }
void *f(size_t n) { return g(n); }

int main(void)
{
	void *a[10];
	for (int i = 0; i < 10; i++)
		a[i] = malloc(1000);
	void *b = f(4000);
	void *c = g(4000);
	void *s = malloc(10);
	free(a[0]);
	void *d = calloc(1, 123);
	free(b);
	free(c);
	free(d);
	free(s);
	for (int i = 1; i < 10; i++)
		free(a[i]);
	return 0;
}
