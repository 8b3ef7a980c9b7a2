/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process for `heaptrace top` (top.sh) whose sites are known: it says
   "ready PID", waits until a tracer is attached (seen twice, 0.1 s apart, in
   /proc/self/status) or, with "now", not at all, then holds 3,000,000
   bytes from hold_big (one block) and 1,000,000 from hold_small (10,000
   blocks of 100 bytes, for sampling to estimate), and makes
   temporaries of 4096 bytes in churn (each freed before the next) for
   SECONDS seconds (argv[1]); then it frees everything, says "done" and
   exits 0.

   With "busy" (argv[2]), for `heaptrace top`'s screen (top_screen.sh),
   it works from the start, without sleeping, and says "rate N" each
   second, N its loop's rounds in that second (a traced or stopped
   process makes fewer). Each round makes one churn temporary, four of 16
   bytes in tiny (the most calls), and, every 20 ms, 256 bytes in grow
   that it keeps (the one growing); hold_big and hold_small are made when
   a tracer is seen twice (polled every 100 ms). A third argument is the
   exit status (0 without). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracer_pid.h"
static volatile char sink;

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

__attribute__((noinline)) static void
tiny(void)
{
	for (int i = 0; i < 4; i++) {
		char *p = malloc(16);
		p[0] = 4;
		sink = p[0];
		free(p);
	}
}

#define GROW_BLOCKS 8192

static char *grown[GROW_BLOCKS];
static int n_grown;

__attribute__((noinline)) static void
grow(void)
{
	if (n_grown < GROW_BLOCKS) {
		grown[n_grown] = malloc(256);
		memset(grown[n_grown++], 5, 256);
	}
}

/* A round's own work, so that the allocations are not all it does. */
static void
work(void)
{
	unsigned x = 1;
	for (int i = 0; i < 200000; i++)
		x = x * 1103515245u + 12345u;
	sink = (char)x;
}

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Until a tracer is seen twice, 0.1 s apart: the first sighting may
   fall between heaptrace's seize and its stop of the process, before its
   probes are in, and a block made then is never seen (a slow heaptrace,
   under ASan, missed hold_big so). By the second the process has been
   stopped and let go with the probes in. */
static void
wait_for_tracer(void)
{
	for (int sightings = 0; sightings < 2; usleep(100000))
		sightings = self_tracer_pid() ? sightings + 1 : 0;
}

static void
busy(double seconds)
{
	char *big = NULL;
	double start = now(), second = start, grown_at = start;
	double checked = start;
	long rounds = 0;
	int sightings = 0;
	while (now() < start + seconds) {
		churn();
		tiny();
		work();
		rounds++;
		double t = now();
		if (t - grown_at >= 0.02) {
			grow();
			grown_at = t;
		}
		if (t - checked >= 0.1) {
			sightings = self_tracer_pid() ? sightings + 1 : 0;
			checked = t;
		}
		/* twice, 0.1 s apart: see wait_for_tracer */
		if (!big && sightings >= 2) {
			big = hold_big();
			hold_small();
		}
		if (t - second >= 1) {
			printf("rate %ld\n", rounds);
			fflush(stdout);
			rounds = 0;
			second = t;
		}
	}
	free(big);
	for (int i = 0; big && i < SMALL_BLOCKS; i++)
		free(small[i]);
	for (int i = 0; i < n_grown; i++)
		free(grown[i]);
}

int
main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int wait = !(argc > 2 && !strcmp(argv[2], "now"));
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (argc > 2 && !strcmp(argv[2], "busy")) {
		busy(seconds);
		printf("done\n");
		return 0;
	}
	if (wait)
		wait_for_tracer();
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
	return argc > 3 ? atoi(argv[3]) : 0;
}
