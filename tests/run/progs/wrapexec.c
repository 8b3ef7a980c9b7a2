/* SPDX-License-Identifier: GPL-2.0-or-later */
/* wrapexec N PROG [ARGS...]: allocate N bytes (kept), then exec PROG with
   its arguments (wrapper.sh). With N of 1 MiB or more it is no exec
   wrapper for heaptrace (--follow-exec=wrappers): the exec is followed
   only with --trace-children=yes; below, it is one. Exits 127 when the
   exec fails. */
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *before_exec(size_t n)
{
	return malloc(n);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	void *kept = before_exec(strtoul(argv[1], NULL, 10));

	if (!kept)
		return 2;
	execv(argv[2], argv + 2);
	return 127;
}
