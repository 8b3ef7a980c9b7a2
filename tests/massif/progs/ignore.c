/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --ignore-fn with realloc: blocks allocated directly in an ignored function
   (or through one), an ignored block reallocated from main (Massif's quirk,
   massif-semantics §5.4), a counted block reallocated inside an ignored
   function, and realloc(NULL, n) there. Allocation sequence: ignore.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *ign_alloc(size_t n) { return malloc(n); }
NOINLINE void *ign_realloc(void *p, size_t n) { return realloc(p, n); }
NOINLINE void *keep(size_t n) { return malloc(n); }
NOINLINE void *calls_ign(size_t n) { return ign_alloc(n); }

int main(void)
{
	void *a = keep(1000);
	void *b = ign_alloc(2000);
	void *c = calls_ign(300);

	b = realloc(b, 2500);
	void *d = keep(400);
	a = ign_realloc(a, 1500);
	void *e = ign_realloc(NULL, 100);
	b = realloc(b, 100);
	free(b);
	free(c);
	free(a);
	free(d);
	free(e);
	return 0;
}
