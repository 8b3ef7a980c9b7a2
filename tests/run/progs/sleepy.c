/* SPDX-License-Identifier: GPL-2.0-or-later */
/* sleepy [PAIRS [stop]]: a block of 100000 bytes, PAIRS pairs of malloc and
   free from 40 frames deep (0 by default), a block of 200000 bytes 300 ms
   after the first, both freed. Under --time-unit=ms the first snapshot
   holding 100000 bytes or more and the first holding 300000 or more are
   300 ms apart: the calls' times, whenever a tracer learns of them.

   With "stop", the program stops its tracer (SIGSTOP to its TracerPid)
   30 ms before the first block and lets it go on (SIGCONT) 200 ms after
   it: a tracer that fell 200 ms behind, with every call of the pairs in
   its ring. Only for a tracer that the calls do not wait for (heaptrace's
   inline backend, with a ring deep enough for the pairs: about 500 bytes
   each; a stub waiting for room, or for the tracer's help, would wait for
   ever). Everything the pairs and the first block need from the tracer is
   made ready by a first round of the same calls from the same places. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tracer_pid.h"
#define NOINLINE __attribute__((noinline))
#define DEPTH 40
#define WARM_PAIRS 1000
#define FIRST_BYTES 100000
#define SECOND_BYTES 200000
#define QUIET_MS 30   /* before the first block: a snapshot of its own */
#define RESUME_MS 200 /* after the first block */
#define SECOND_MS 300 /* after the first block */

static void *volatile sink;

NOINLINE static void churn(int depth, long pairs)
{
	if (depth > 0) {
		churn(depth - 1, pairs);
		return;
	}
	for (long i = 0; i < pairs; i++) {
		sink = malloc(16 + (size_t)(i & 255));
		free(sink);
	}
}

NOINLINE static void *block(size_t n)
{
	void *p = malloc(n);

	return p;
}

static void sleep_until(const struct timespec *start, long ms)
{
	struct timespec at = *start;

	at.tv_sec += ms / 1000;
	at.tv_nsec += (ms % 1000) * 1000000L;
	if (at.tv_nsec >= 1000000000L) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000L;
	}
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL))
		;
}

int main(int argc, char **argv)
{
	long pairs = argc > 1 ? atol(argv[1]) : 0;
	bool stop = argc > 2 && strcmp(argv[2], "stop") == 0;
	pid_t tracer = stop ? (pid_t)self_tracer_pid() : 0;
	struct timespec t_first;
	void *first = NULL, *second;

	for (int round = 0; round < 2; round++) {
		bool real = round == 1;

		if (real) {
			if (tracer)
				kill(tracer, SIGSTOP);
			clock_gettime(CLOCK_MONOTONIC, &t_first);
			sleep_until(&t_first, QUIET_MS);
		}
		first = block(real ? FIRST_BYTES : 16);
		clock_gettime(CLOCK_MONOTONIC, &t_first);
		if (!real)
			free(first); /* before the quiet time: its snapshot */
		churn(DEPTH, real ? pairs : WARM_PAIRS);
	}
	sleep_until(&t_first, RESUME_MS);
	if (tracer)
		kill(tracer, SIGCONT);
	sleep_until(&t_first, SECOND_MS);
	second = block(SECOND_BYTES);
	free(first);
	free(second);
	return first && second ? 0 : 1;
}
