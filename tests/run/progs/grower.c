/* SPDX-License-Identifier: GPL-2.0-or-later */
/* grower TENTHS: a heap that grows slowly, for periodic profiles
   (tests/run/periodic.sh). At the start, 4,000 bytes from steady(), kept;
   then every tenth of a second for TENTHS tenths, 10,000 bytes from
   grow(), kept, and 500 bytes from churn(), freed at once; then everything
   is freed. So, at any moment, grow()'s site holds 10,000 bytes per call
   made and the heap is 4,000 plus that. It writes "ready PID" on stdout
   once steady()'s block is made (write(2): stdio would allocate), and
   counts its calls to grow() in the file named by its second argument,
   when given (pwrite of a fixed-width line: no allocation). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_TENTHS 10000

static void *volatile held[MAX_TENTHS];
static void *volatile base;

NOINLINE static void *steady(void)
{
	return malloc(4000);
}

NOINLINE static void *grow(void)
{
	return malloc(10000);
}

NOINLINE static void churn(void)
{
	void *volatile p = malloc(500);
	free(p);
}

static void
say(const char *s)
{
	if (write(1, s, strlen(s)) < 0)
		exit(3);
}

int
main(int argc, char **argv)
{
	long tenths = argc > 1 ? atol(argv[1]) : 35;
	if (tenths < 1 || tenths > MAX_TENTHS)
		return 2;
	int count = argc > 2 ? open(argv[2], O_WRONLY | O_CREAT | O_TRUNC,
				    0644) : -1;
	base = steady();
	char line[64];
	snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	say(line);
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (long i = 0; i < tenths; i++) {
		next.tv_nsec += 100000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		held[i] = grow();
		churn();
		if (count >= 0) {
			int n = snprintf(line, sizeof(line), "%10ld\n", i + 1);
			if (pwrite(count, line, (size_t)n, 0) != n)
				return 3;
		}
	}
	for (long i = 0; i < tenths; i++)
		free(held[i]);
	free(base);
	return 0;
}
