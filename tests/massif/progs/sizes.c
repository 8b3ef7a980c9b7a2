/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Request sizes around the allocators' rounding steps (0, 1, 24, 25, a
   zero-size calloc, 1000, 100000), kept until the end, for the extra-bytes
   models: Valgrind's arena (real Massif) and glibc's chunks (by hand).
   Allocation sequence: see sizes.events. */
#include <stdlib.h>

int main(void)
{
	void *p[7];

	p[0] = malloc(0);
	p[1] = malloc(1);
	p[2] = malloc(24);
	p[3] = malloc(25);
	p[4] = calloc(0, 8);
	p[5] = malloc(1000);
	p[6] = malloc(100000);
	for (int i = 0; i < 7; i++)
		free(p[i]);
	return 0;
}
