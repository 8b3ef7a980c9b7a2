/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Every malloc-family call, each from its own line of main: malloc,
   malloc(0), calloc, calloc(0, n), realloc growing, shrinking, within the
   slop, realloc(NULL, n), realloc(p, 0), reallocarray, memalign,
   posix_memalign, aligned_alloc, valloc, malloc_usable_size and free(NULL).
   Massif sees reallocarray as a realloc from main (glibc's reallocarray
   jumps to realloc). Peak: 1000 + 300 + 100 + 64 + 5 + 300 + 5000 = 6769
   bytes, just before realloc(r, 2000). With an argument "pvalloc",
   pvalloc too: under Valgrind 3.19 that call stops the program ("Program
   aborting because of call to pvalloc", exit status 1), so it is kept out
   of the run compared with Massif. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	void *m = malloc(1000);
	void *z = malloc(0);
	void *c = calloc(10, 30);
	void *cz = calloc(0, 16);
	void *r = realloc(NULL, 100);
	void *ra;
	void *ma = memalign(64, 100);
	void *pm = NULL;
	void *aa = aligned_alloc(32, 64);
	void *va = valloc(5);
	void *pv = NULL;

	if (!m || !c || !r || !ma || !aa || !va)
		return 1;
	if (argc > 1 && strcmp(argv[1], "pvalloc") == 0) {
		pv = pvalloc(10);
		if (!pv)
			return 1;
	}
	if (posix_memalign(&pm, 256, 300) != 0)
		return 1;
	r = realloc(r, 5000);
	r = realloc(r, 2000);
	r = realloc(r, 1990);
	if (malloc_usable_size(r) < 1990)
		return 1;
	ra = reallocarray(NULL, 20, 40);
	ra = reallocarray(ra, 30, 40);
	if (!r || !ra)
		return 1;
	free(NULL);
	if (realloc(m, 0) != NULL)
		return 1;
	free(z);
	free(c);
	free(cz);
	free(r);
	free(ra);
	free(ma);
	free(pm);
	free(aa);
	free(va);
	free(pv);
	return 0;
}
