/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program for `report --format=pprof` (tests/pprof): blocks from an
   inlined function (its frames become one location with two lines),
   a big block freed before the end, two blocks never freed. With an
   argument "wait" it says "ready" and reads a line before allocating,
   and reads to the end of its input before exiting, for attach. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep[8];
static void *leak[2];
/* volatile: the compiler may not drop a malloc and free pair it sees */
static char *volatile big;

static inline __attribute__((always_inline)) void *
make_block(size_t n)
{
	void *p = malloc(n);
	memset(p, 1, n);
	return p;
}

__attribute__((noinline)) static void
fill(void)
{
	for (int i = 0; i < 8; i++)
		keep[i] = make_block(4000);
}

__attribute__((noinline)) static void
leak_two(void)
{
	for (int i = 0; i < 2; i++)
		leak[i] = malloc(100);
}

int
main(int argc, char **argv)
{
	char line[64];
	int wait = argc > 1 && strcmp(argv[1], "wait") == 0;
	if (wait) {
		puts("ready");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	fill();
	big = malloc(40000);
	memset(big, 2, 40000);
	free(big);
	leak_two();
	for (int i = 0; i < 8; i++)
		free(keep[i]);
	if (wait)
		while (fgets(line, sizeof(line), stdin))
			;
	return leak[0] == leak[1];
}
