/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Freed memory is no root: hide_in_freed stores the only pointer to a
   96-byte block 24 bytes into a 64-byte block, then frees that block.
   glibc's free overwrites the first 16 bytes of a small freed block (its
   tcache link and key) and leaves the pointer where it was, in memory an
   outside scanner can still read; memcheck makes the freed block
   inaccessible. The 96 bytes are definitely lost (1 block). */
#include <stdlib.h>

#include "leak_common.h"

#define HOLDER 64
#define TARGET 96

NOINLINE static void hide_in_freed(void)
{
	void **holder = malloc(HOLDER);
	void *target = malloc(TARGET);

	if (!holder || !target)
		exit(1);
	fill(holder, HOLDER);
	fill(target, TARGET);
	holder[3] = target;
	free(holder);
}

int main(void)
{
	hide_in_freed();
	scrub_stack();
	return 0;
}
