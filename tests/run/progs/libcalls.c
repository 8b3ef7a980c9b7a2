/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocations made inside libc on the program's behalf, which Massif sees
   because it replaces malloc in libc too: printf's stdout buffer (4096 bytes
   when stdout is not a terminal, freed only by __libc_freeres at exit),
   strdup, asprintf, fopen's FILE and its buffer, setenv's environment copy
   (also left to freeres; the environment is emptied first, as Valgrind
   adds entries to it that would change the copy's size), qsort's scratch buffer for large arrays. Prints
   a fixed text on stdout and one line on stderr. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

NOINLINE static char *dup_name(const char *s)
{
	char *p = strdup(s);

	return p;
}

NOINLINE static int write_null(void)
{
	FILE *f = fopen("/dev/null", "w");

	if (!f)
		return -1;
	for (int i = 0; i < 100; i++)
		fprintf(f, "line %d of some text to fill the buffer\n", i);
	return fclose(f);
}

NOINLINE static long sort_numbers(void)
{
	enum { N = 2000 };
	int *v = malloc(N * sizeof(*v));
	long sum = 0;

	if (!v)
		return -1;
	for (int i = 0; i < N; i++)
		v[i] = (i * 7919) % N;
	qsort(v, N, sizeof(*v), cmp_int);
	for (int i = 0; i < N; i += 100)
		sum += v[i];
	free(v);
	return sum;
}

int main(void)
{
	char *name = dup_name("a string duplicated by strdup");
	char *msg = NULL;

	printf("libcalls: start\n");
	if (asprintf(&msg, "%s has %zu bytes", name, strlen(name)) < 0)
		return 1;
	printf("%s\n", msg);
	if (write_null() != 0)
		return 1;
	if (clearenv() != 0 || setenv("HEAPTRACE_TEST_VAR", "some value", 1) != 0)
		return 1;
	printf("sum %ld\n", sort_numbers());
	fprintf(stderr, "libcalls: a line on stderr\n");
	free(msg);
	free(name);
	printf("libcalls: done\n");
	return 0;
}
