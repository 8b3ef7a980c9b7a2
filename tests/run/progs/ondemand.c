/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ondemand [forks]: blocks of known sizes, then a pause while a snapshot
   is taken on demand (tests/run/ondemand.sh), then more, all freed.

   Before the pause: 1000, 2000 and 3000 bytes from keep(), 2000 freed:
   4000 bytes live, and a peak (the free) at 6000. The program writes
   "ready PID" on stdout (write(2): stdio would allocate its buffer) and
   reads one byte from stdin, so the snapshot sees exactly those blocks.
   After the pause: 5000 bytes from later(), then everything freed.
   With "fork": a child made before the pause holds 700 bytes more of its
   own and waits on the same stdin; both announce themselves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static void *volatile held[8];

NOINLINE static void *keep(size_t n)
{
	return malloc(n);
}

NOINLINE static void *later(size_t n)
{
	return malloc(n);
}

static void announce(void)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(1, line, (size_t)n) != n)
		exit(3);
}

static void pause_for_snapshot(void)
{
	char c;
	announce();
	if (read(0, &c, 1) != 1)
		exit(4);
}

int main(int argc, char **argv)
{
	int forks = argc > 1 && strcmp(argv[1], "fork") == 0;
	held[0] = keep(1000);
	held[1] = keep(2000);
	held[2] = keep(3000);
	free(held[1]);
	held[1] = NULL;
	pid_t child = forks ? fork() : -1;
	if (child == 0)
		held[3] = keep(700);
	pause_for_snapshot();
	held[4] = later(5000);
	for (int i = 0; i < 8; i++)
		free(held[i]);
	if (child > 0)
		waitpid(child, NULL, 0);
	return 0;
}
