/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocations made after main has returned, in an atexit handler: their
   stacks hold no main, so Massif keeps them down to the innermost function
   below main, printed "(below main)". glibc registers the first handlers
   without allocating. Allocation sequence: see belowmain.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

static void *kept;

NOINLINE static void at_exit(void)
{
	void *late = malloc(300);

	free(kept);
	kept = late;
}

int main(void)
{
	atexit(at_exit);
	kept = malloc(200);
	return 0;
}
