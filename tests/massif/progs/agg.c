/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Many small allocation sites next to big ones, for --threshold: which
   entries merge into "below massif's threshold" lines, where those lines
   sort, ties broken by address, and freed sites that stay as 0-byte entries.
   Allocation sequence: see agg.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *site0(size_t n) { return malloc(n); }
NOINLINE void *site1(size_t n) { return malloc(n); }
NOINLINE void *site2(size_t n) { return malloc(n); }
NOINLINE void *site3(size_t n) { return malloc(n); }
NOINLINE void *site4(size_t n) { return malloc(n); }
NOINLINE void *site5(size_t n) { return malloc(n); }
NOINLINE void *site6(size_t n) { return malloc(n); }
NOINLINE void *site7(size_t n) { return malloc(n); }
NOINLINE void *big(size_t n) { return malloc(n); }

int main(void)
{
	void *s[8], *b[3];

	b[0] = big(4000);
	s[0] = site0(10);
	s[1] = site1(20);
	s[2] = site2(40);
	s[3] = site3(80);
	s[4] = site4(160);
	s[5] = site5(320);
	s[6] = site6(640);
	s[7] = site7(1280);
	b[1] = big(4000);
	b[2] = big(2000);
	for (int i = 0; i < 8; i += 2)
		free(s[i]);
	free(b[1]);
	for (int i = 1; i < 8; i += 2)
		free(s[i]);
	free(b[0]);
	free(b[2]);
	return 0;
}
