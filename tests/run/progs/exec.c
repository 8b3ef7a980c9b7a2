/* SPDX-License-Identifier: GPL-2.0-or-later */
/* exec: allocate (2000 bytes kept, 600 freed: peak 2600), then replace the
   process with argv[1] and its arguments. With --trace-children=yes the
   new program is profiled; with no, profiling stops at the exec and
   heaptrace writes what ran before. Massif writes nothing for the part
   before an exec, so that part is compared with a Massif run that ends
   with _exit(0) where the exec would be: HT_TEST_EXEC_EXIT set in the
   environment. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *before_exec(size_t n)
{
	void *p = malloc(n);

	return p;
}

int main(int argc, char **argv)
{
	void *kept = before_exec(2000);
	void *gone = before_exec(600);

	if (argc < 2 || !kept)
		return 2;
	free(gone);
	if (getenv("HT_TEST_EXEC_EXIT"))
		_exit(0);
	execv(argv[1], argv + 1);
	return 127;
}
