/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A cycle lost as a whole: make_cycle links blocks of 48, 64 and 80
   bytes into a ring (48 -> 64 -> 80 -> 48) and drops it. memcheck takes
   the first block by address as the cycle's leader, definitely lost, and
   the others as indirectly lost: 48 bytes in 1 block and 144 in 2. Both
   allocators hand out a fresh heap in increasing addresses, so the leader
   is the 48-byte block under memcheck's allocator and glibc's. */
#include <stdlib.h>

#include "leak_common.h"

NOINLINE static void *block(size_t n)
{
	void **p = malloc(n);

	if (!p)
		exit(1);
	fill(p, n);
	return p;
}

NOINLINE static void make_cycle(void)
{
	void **a = block(48);
	void **b = block(64);
	void **c = block(80);

	a[0] = b;
	b[0] = c;
	c[0] = a;
}

int main(void)
{
	make_cycle();
	scrub_stack();
	return 0;
}
