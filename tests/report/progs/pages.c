/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program for the --pages-as-heap and --stacks=yes reports (tests/report
   pages-*, massif-pages, massif-stacks): ARGV[1] pages mapped by one mmap
   call in map_pages, a 200000-byte malloc'd block (above glibc's mmap
   threshold: its own mapping), both live at the peak, then released.
   With an argument "wait" after the count it says "ready" and reads a
   line first (for attach); with "keep" it releases nothing: it ends at
   its largest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static char *
map_pages(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		exit(1);
	memset(p, 1, len);
	return p;
}

__attribute__((noinline)) static char *
take_block(size_t n)
{
	char *p = malloc(n);
	if (!p)
		exit(1);
	memset(p, 2, n);
	return p;
}

static int
has_word(int argc, char **argv, const char *word)
{
	for (int i = 2; i < argc; i++)
		if (strcmp(argv[i], word) == 0)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = (size_t)(argc > 1 ? atol(argv[1]) : 300) * (size_t)page;
	char line[16];
	if (has_word(argc, argv, "wait")) {
		puts("ready");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	}
	char *m = map_pages(len);
	char *b = take_block(200000);
	int sum = m[len - 1] + b[199999];
	if (has_word(argc, argv, "keep"))
		return sum == 3 ? 0 : 1;
	free(b);
	munmap(m, len);
	return sum == 3 ? 0 : 1;
}
