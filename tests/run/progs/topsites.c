/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process for `heaptrace top` (top.sh) whose sites are known: it says
   "ready PID", waits until a tracer is attached (TracerPid in
   /proc/self/status) or, with "now", not at all, then holds 3,000,000
   bytes from hold_big (one block) and 1,000,000 from hold_small (10,000
   blocks of 100 bytes, for sampling to estimate), and makes
   temporaries of 4096 bytes in churn (each freed before the next) for
   SECONDS seconds (argv[1]); then it frees everything, says "done" and
   exits 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile char sink;

static int
traced(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	int pid = 0;
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "TracerPid:", 10))
			pid = atoi(line + 10);
	if (f)
		fclose(f);
	return pid != 0;
}

__attribute__((noinline)) static char *
hold_big(void)
{
	char *p = malloc(3000000);
	memset(p, 1, 3000000);
	return p;
}

#define SMALL_BLOCKS 10000

static char *small[SMALL_BLOCKS];

__attribute__((noinline)) static void
hold_small(void)
{
	for (int i = 0; i < SMALL_BLOCKS; i++) {
		small[i] = malloc(100);
		memset(small[i], 2, 100);
	}
}

__attribute__((noinline)) static void
churn(void)
{
	char *p = malloc(4096);
	p[0] = 3;
	sink = p[0];
	free(p);
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int wait = !(argc > 2 && !strcmp(argv[2], "now"));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (wait && !traced())
		usleep(20000);
	char *big = hold_big();
	hold_small();
	double end = now() + seconds;
	while (now() < end) {
		churn();
		usleep(2000);
	}
	free(big);
	for (int i = 0; i < SMALL_BLOCKS; i++)
		free(small[i]);
	printf("done\n");
	return 0;
}
