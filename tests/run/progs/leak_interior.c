/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Interior pointers. make_inner allocates a 128-byte block whose only
   pointer, in a global, points 40 bytes into it (past what memcheck's
   length64 and stdstring heuristics look at), and a 48-byte block pointed
   at only from the start of the first: memcheck says both are possibly
   lost (176 bytes in 2 blocks), the second because it is reached from a
   possibly lost block alone. */
#include <stdlib.h>

#include "leak_common.h"

#define OUTER 128
#define INNER 48
#define OFFSET 40

char *inside; /* the block's start + OFFSET: no pointer to its start */

NOINLINE static void make_inner(void)
{
	char *outer = malloc(OUTER);
	char *inner = malloc(INNER);

	if (!outer || !inner)
		exit(1);
	fill(outer, OUTER);
	fill(inner, INNER);
	*(char **)outer = inner;
	inside = outer + OFFSET;
}

int main(void)
{
	make_inner();
	scrub_stack();
	return 0;
}
