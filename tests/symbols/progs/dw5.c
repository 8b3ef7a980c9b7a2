/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test dw5-clang: built by clang -O2 -g, whose DWARF 5 names strings and
   addresses by index (DW_FORM_strx1, DW_FORM_addrx). Valgrind 3.19's DIE
   reader cannot size those forms and gives up on the whole object: Massif
   shows no inlined frame here, only the functions of the symbol table,
   at the lines of the line table (which another reader reads). The file
   name is the one the command line gave, made "gen/sub/dw5.c" with
   -fdebug-prefix-map: the line table's file 0, printed whole. The
   expected labels, worked out with Massif: ../dw5-clang.labels. */
#include <stdlib.h>
#include <string.h>

static inline __attribute__((always_inline)) char *
twice(const char *s)
{
	size_t n = strlen(s);
	char *p = malloc(2 * n + 1);

	if (p)
		memcpy(p, s, n + 1);
	return p;
}

static inline __attribute__((always_inline)) void *
table(int n)
{
	return calloc((size_t)n, 16);
}

__attribute__((noinline)) void *
work(int i)
{
	return i & 1 ? (void *)twice("a string of some length") : table(i + 10);
}

void *volatile dw5_sink;

int
main(void)
{
	void *keep[20];

	for (int i = 0; i < 20; i++)
		keep[i] = dw5_sink = work(i);
	for (int i = 0; i < 20; i++)
		free(keep[i]);
	return 0;
}
