/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Blocks larger than Valgrind's 4 MiB superblocks (each gets a mapping of
   its own), one just small enough to share one, a huge calloc, and a small
   block grown by realloc into a huge one. Allocation sequence: huge.events. */
#include <stdlib.h>

#define MIB (1024 * 1024)

int main(void)
{
	void *a = malloc(5 * MIB);
	void *b = malloc(100);
	void *c = malloc(4 * MIB - 100);
	void *d = calloc(1, 8 * MIB);
	free(a);
	void *e = malloc(3 * MIB);
	b = realloc(b, 6 * MIB + 1);
	void *f = malloc(64 * MIB);
	free(c);
	free(d);
	free(e);
	free(b);
	free(f);
	return 0;
}
