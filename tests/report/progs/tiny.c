/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program for real Massif to profile (tests/report massif-real): a few
   blocks from two functions, one of them still live at exit. */
#include <stdlib.h>
#include <string.h>

static void *keep[8];

__attribute__((noinline)) static void *
grow(size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void
fill(void)
{
	for (int i = 0; i < 8; i++)
		keep[i] = grow(4000);
}

int
main(void)
{
	fill();
	char *big = grow(40000);
	free(big);
	for (int i = 1; i < 8; i++)
		free(keep[i]);
	return keep[0] == NULL;
}
