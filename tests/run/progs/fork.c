/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fork: the parent allocates 4000 bytes (kept across the fork) and forks
   twice. The first child allocates 1000 + 2000 bytes, frees the 1000 and
   returns from exit(0). The second allocates 3000 bytes, sets a variable
   in an emptied environment and leaves with _exit(7); Valgrind runs the
   exit-time frees on _exit too, so setenv's arrays are freed at the end
   (clearenv first: under Valgrind the environment has more entries, which
   would change the arrays' size). The parent waits for each, allocates
   500 bytes, frees everything and prints the children's statuses. One
   profile per process: each child's starts with the parent's blocks. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

NOINLINE static void *parent_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

NOINLINE static void *child_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

NOINLINE static int wait_for(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

int main(void)
{
	void *kept = parent_alloc(4000);
	void *later;
	int st1, st2;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		void *a = child_alloc(1000);
		void *b = child_alloc(2000);

		free(a);
		(void)b;
		exit(0);
	}
	st1 = wait_for(pid);

	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		void *c = child_alloc(3000);

		(void)c;
		if (clearenv() != 0 ||
		    setenv("HEAPTRACE_TEST_CHILD", "second", 1) != 0)
			_exit(1);
		_exit(7);
	}
	st2 = wait_for(pid);

	later = parent_alloc(500);
	free(kept);
	free(later);
	printf("children exited with %d and %d\n", st1, st2);
	return 0;
}
