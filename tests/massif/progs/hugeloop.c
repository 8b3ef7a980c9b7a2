/* SPDX-License-Identifier: GPL-2.0-or-later */
/* 60 rounds of malloc(1 GiB) and free: with --time-unit=B the times pass
   2^32 quickly, so culling's new minimum interval shows Massif's 32-bit
   truncation (massif-semantics §4.4). Nothing is touched, so the memory is
   never really used. Allocation sequence: see hugeloop.events. */
#include <stdlib.h>

int main(void)
{
	for (int i = 0; i < 60; i++) {
		void *p = malloc(1UL << 30);
		free(p);
	}
	return 0;
}
