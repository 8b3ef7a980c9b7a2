/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Edge cases of the accounting: malloc(0) and calloc(0, n) blocks,
   free(NULL) (no event), realloc(NULL, n) (a malloc), realloc(p, 0) (a free),
   in-place shrink, growth within the slop, moving growth, and a freed block
   reused whole (16 bytes of extra slop). Entries whose bytes drop to 0 stay
   in the tree. Allocation sequence: see edge.events. */
#include <stdlib.h>

/* NULL that the compiler cannot see: it would turn free(NULL) into
   nothing and realloc(NULL, n) into malloc(n). */
static void *volatile nothing;

int main(void)
{
	void *p0 = malloc(0);
	free(nothing);
	void *p1 = realloc(nothing, 100);
	void *p2 = calloc(10, 30);
	void *p3 = calloc(0, 8);
	p1 = realloc(p1, 50);
	p1 = realloc(p1, 60);
	p1 = realloc(p1, 5000);
	void *p4 = malloc(1);
	free(p0);
	p2 = realloc(p2, 0);
	free(p3);
	void *p5 = malloc(32);
	void *p6 = malloc(8);
	free(p5);
	void *p7 = malloc(16);
	free(p4);
	free(p6);
	free(p7);
	free(p2); /* NULL since realloc(p2, 0) */
	free(p1);
	return 0;
}
