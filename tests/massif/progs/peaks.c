/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Peaks that creep: a transient block 20 bytes larger each round (below the
   default 1% peak inaccuracy, above 0%), then smaller ones that never make a
   peak, then one spike. For --peak-inaccuracy 0, 1 (default) and 1000.
   Allocation sequence: see peaks.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *keep(size_t n) { return malloc(n); }
NOINLINE void *transient(size_t n) { return malloc(n); }

int main(void)
{
	void *base = keep(5000);

	for (unsigned i = 0; i < 60; i++) {
		void *p = transient(10000 + 20 * i);
		free(p);
	}
	for (unsigned i = 0; i < 30; i++) {
		void *p = transient(11000 - 30 * i);
		free(p);
	}
	void *spike = transient(50000);
	free(spike);
	free(base);
	return 0;
}
