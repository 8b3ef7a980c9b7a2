/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The memalign family: memalign, posix_memalign, aligned_alloc and valloc,
   alignments below 16 and not powers of two, a posix_memalign that fails
   (no event), and plain blocks reusing the space aligned ones left.
   Allocation sequence: see aligned.events. */
#include <malloc.h>
#include <stdlib.h>

int main(void)
{
	void *b, *g = NULL;

	void *a = memalign(64, 100);
	posix_memalign(&b, 256, 300);
	void *c = aligned_alloc(32, 64);
	void *d = valloc(5);
	void *e = memalign(8, 10);
	void *f = memalign(48, 40);
	posix_memalign(&g, 24, 10);
	void *h = memalign(4096, 10);
	void *i = aligned_alloc(24, 48);
	free(a);
	free(c);
	void *j = malloc(100);
	void *k = memalign(128, 1000);
	free(b);
	free(d);
	free(e);
	free(f);
	free(g);
	free(h);
	free(i);
	free(j);
	free(k);
	return 0;
}
