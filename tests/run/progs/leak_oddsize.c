/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lost blocks whose sizes reach into glibc's next chunk header (a size
   of 16k + 1 to 16k + 8 bytes uses the next chunk's prev_size field): a
   pointer glibc keeps to that header, in its arena in libc's data, is an
   interior pointer of the lost block to an outside scanner. memcheck has
   its own allocator, to which these are plain lost blocks. lose_before_bin
   loses 24 bytes followed by a 1104-byte block that it frees, past
   tcache's sizes: that chunk goes to the unsorted bin, whose links in
   main_arena point at its header, 16 bytes into the 24-byte block (a
   16-byte block after it stays, so that the freed one is not merged into
   the top chunk). lose_last loses 40 bytes as the last block before the
   top chunk, whose header main_arena.top points at, 32 bytes into it.
   memcheck: definitely lost 64 bytes in 2 blocks, still reachable 16
   bytes in 1 block. */
#include <stdlib.h>

#include "leak_common.h"

void *guard;

NOINLINE static void lose_before_bin(void)
{
	void *lost = malloc(24);
	void *binned = malloc(1104);

	guard = malloc(16);
	if (!lost || !binned || !guard)
		exit(1);
	fill(lost, 24);
	fill(binned, 1104);
	fill(guard, 16);
	free(binned);
}

NOINLINE static void lose_last(void)
{
	void *lost = malloc(40);

	if (!lost)
		exit(1);
	fill(lost, 40);
}

int main(void)
{
	lose_before_bin();
	lose_last();
	scrub_stack();
	return 0;
}
