/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vfork: the parent allocates 1000 bytes (kept), then vforks. The child,
   which runs in the parent's memory until it leaves, allocates 12345 bytes
   and leaves with _exit(5) (with arguments: execs argv[1], its arguments
   the rest, and has _exit(5) only if that fails). The parent waits,
   allocates 500 bytes, frees both its blocks and reports the child's
   status (its last digit; 9 for a death by signal). The parent's profile
   peaks at 1500 bytes: the child's 12345 are the child's (Valgrind runs a
   vfork child as a forked process), in a profile of its own which starts
   from the parent's 1000 bytes: 13345 at its peak. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define CHILD_BYTES 12345

NOINLINE static void *parent_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

/* Allocating in a vfork child is outside POSIX's promises, but glibc's
   malloc works there (the parent is suspended) and programs do it. */
NOINLINE static void *child_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

int main(int argc, char **argv)
{
	void *kept = parent_alloc(1000);
	void *later;
	char msg[] = "child exited with ?\n";
	int status;
	pid_t pid;

	pid = vfork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (!child_alloc(CHILD_BYTES))
			_exit(1);
		if (argc > 1)
			execv(argv[1], argv + 1);
		_exit(5);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	later = parent_alloc(500);
	free(kept);
	free(later);
	/* Not stdio: its buffer would be a block of the parent's. */
	msg[sizeof(msg) - 3] = (char)('0' + (WIFEXITED(status) ?
					     WEXITSTATUS(status) % 10 : 9));
	if (write(1, msg, sizeof(msg) - 1) != (ssize_t)sizeof(msg) - 1)
		return 1;
	return 0;
}
