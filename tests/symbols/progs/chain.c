/* SPDX-License-Identifier: GPL-2.0-or-later */
/* main of the call-chain program. "fork" runs the chain in a child process
   instead, for the test of a session copied at fork. */
#include "chain.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int
main(int argc, char **argv)
{
	pid_t pid;

	if (argc > 1 && strcmp(argv[1], "fork") == 0) {
		pid = fork();
		if (pid == 0) {
			CALL(f0());
			_exit(0);
		}
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return 0;
	}
	CALL(f0());
	return 0;
}
