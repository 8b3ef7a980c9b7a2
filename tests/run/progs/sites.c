/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A known pattern for the .sites file (tests/run/sites.sh), each kind of
   call from one call site in its own function, no stdio (its buffers
   would be sites of their own):
     k: realloc(NULL, 16) then realloc(p, 4096) from one call (one
        site: 2 calls, 4112 B), kept in a global: 4096 B still
        reachable;
     g: 10 x malloc(100), 7 freed, two kept in a global (still
        reachable), one lost (definitely lost, 100 B);
     f: 100 x malloc(1000), then all freed oldest first (none freed by
        the very next call: no temporary); the first free is the peak:
        104,396 B (f 100,000, g 300, k 4,096, h 0);
     h: 50 x malloc(10) each freed at once: 50 temporaries, never above
        the peak. */
#include <stdlib.h>

#include "leak_common.h"

static void *kept_k;
static void *kept_g[2];

NOINLINE static void k(void)
{
	static const size_t sizes[] = { 16, 4096 };
	void *p = NULL;

	for (int i = 0; i < 2; i++) {
		p = realloc(p, sizes[i]);
		if (!p)
			exit(1);
	}
	fill(p, 4096);
	kept_k = p;
}

NOINLINE static void *g(void)
{
	return malloc(100);
}

NOINLINE static void *f(void)
{
	return malloc(1000);
}

NOINLINE static void h(void)
{
	free(malloc(10));
}

NOINLINE static void use_g(void)
{
	void *p[10];

	for (int i = 0; i < 10; i++) {
		p[i] = g();
		if (!p[i])
			exit(1);
		fill(p[i], 100);
	}
	for (int i = 0; i < 7; i++)
		free(p[i]);
	kept_g[0] = p[7];
	kept_g[1] = p[8];
	/* p[9] is lost */
}

NOINLINE static void use_f(void)
{
	static void *p[100];

	for (int i = 0; i < 100; i++) {
		p[i] = f();
		if (!p[i])
			exit(1);
	}
	for (int i = 0; i < 100; i++) {
		free(p[i]);
		p[i] = NULL;
	}
}

int main(void)
{
	k();
	use_g();
	scrub_stack();
	use_f();
	for (int i = 0; i < 50; i++)
		h();
	scrub_stack();
	return 0;
}
