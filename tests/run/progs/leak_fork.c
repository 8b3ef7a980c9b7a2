/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Parent and child leak different amounts, each reported in its own
   process. Before the fork the program loses 128 bytes (lost in both
   processes). The child then loses two blocks of 256 bytes and exits
   (exit(0)): definitely lost 640 bytes in 3 blocks. The parent waits for
   it, loses 1024 bytes: definitely lost 1152 bytes in 2 blocks. Each
   process writes "child PID" or "parent PID" on stdout (write(2), no
   stdio) just before it ends, so that reports can be told apart by pid. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

NOINLINE static void lose(size_t n)
{
	void *p = malloc(n);

	if (!p)
		exit(1);
	fill(p, n);
}

NOINLINE static void say(const char *role)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%s %ld\n", role,
			   (long)getpid());

	if (len > 0 && write(STDOUT_FILENO, line, (size_t)len) != len)
		exit(1);
}

int main(void)
{
	pid_t pid;
	int status;

	lose(128);
	scrub_stack();
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		lose(256);
		lose(256);
		scrub_stack();
		say("child");
		exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return 1;
	lose(1024);
	scrub_stack();
	say("parent");
	return 0;
}
