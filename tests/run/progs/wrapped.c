/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The program an exec wrapper becomes (wrapper.sh): five blocks of
   1,000,000 bytes, all live at once (peak heap exactly 5,000,000 B), then
   all freed: 10,000,000 B allocated plus freed, the last snapshot's time
   with --time-unit=B. Nothing else allocates (no stdio). Exits 0. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NBLOCKS 5
#define BLOCK 1000000

NOINLINE static void *wrapped_block(void)
{
	return malloc(BLOCK);
}

int main(void)
{
	void *b[NBLOCKS];

	for (int i = 0; i < NBLOCKS; i++)
		if (!(b[i] = wrapped_block()))
			return 1;
	for (int i = 0; i < NBLOCKS; i++)
		free(b[i]);
	return 0;
}
