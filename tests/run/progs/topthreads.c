/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process of many threads for `heaptrace top` (top_threads.sh), busy
   as the pool of a service is: it starts THREADS threads, says "ready
   PID", waits until a tracer is attached (TracerPid in
   /proc/self/status), then lets them go. Each works in bursts with a
   5 ms sleep between them, so that few are runnable at once
   (threads that never wait would leave a tracer sharing their CPU share
   a 1/THREADS of it; docs/performance.md): a burst replaces the 1000
   bytes it holds from hold_block until, after a line "settle" on its
   standard input (sent once the tracer is in: blocks made during an
   attach may be unseen), the first burst makes the block it keeps; from
   then on hold_block holds THREADS x 1000 bytes the tracer has seen
   allocated, at every moment (a block replaced in every burst is
   missing from a table made between its free and its successor's
   malloc). Each burst also replaces BURST blocks of a window of 64 from
   churn_block, each filled with its own pattern and checked before it
   is freed. After SECONDS seconds (and the end of its input) it joins them, frees everything, says
   "done" and exits 0; a block found changed makes it say "corrupt" and
   exit 1.
   Usage: topthreads THREADS SECONDS */
#define _DEFAULT_SOURCE /* usleep */
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tracer_pid.h"
#define HOLD_BYTES 1000
#define WINDOW 64
#define BURST 16

static atomic_int go;
static atomic_int settled;
static atomic_int corrupt;
static double end_time;

static double
now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static char *
hold_block(void)
{
	char *p = malloc(HOLD_BYTES);
	if (!p)
		abort();
	memset(p, 1, HOLD_BYTES);
	return p;
}

__attribute__((noinline)) static unsigned char *
churn_block(size_t size, unsigned char pattern)
{
	unsigned char *p = malloc(size);
	if (!p)
		abort();
	memset(p, pattern, size);
	return p;
}

static size_t
block_size(unsigned i)
{
	return 16 + (i * 37u) % 500;
}

static void
check_and_free(unsigned char *p, size_t size, unsigned char pattern)
{
	for (size_t i = 0; i < size; i++)
		if (p[i] != pattern) {
			atomic_store(&corrupt, 1);
			break;
		}
	free(p);
}

static void *
work(void *arg)
{
	unsigned char pattern = (unsigned char)(uintptr_t)arg;
	unsigned char *window[WINDOW] = { 0 };
	size_t sizes[WINDOW] = { 0 };
	while (!atomic_load(&go))
		usleep(1000);
	char *held = NULL;
	bool settled_seen = false;
	for (unsigned i = 0; now() < end_time; usleep(5000)) {
		/* the flag read before the block is made: the last block is
		   made after "settle", which comes once the tracer is in */
		if (!settled_seen) {
			settled_seen = atomic_load(&settled);
			free(held);
			held = hold_block();
		}
		for (unsigned b = 0; b < BURST; b++, i++) {
			unsigned slot = i % WINDOW;
			if (window[slot])
				check_and_free(window[slot], sizes[slot],
					       pattern);
			sizes[slot] = block_size(i);
			window[slot] = churn_block(sizes[slot], pattern);
		}
	}
	for (unsigned slot = 0; slot < WINDOW; slot++)
		if (window[slot])
			check_and_free(window[slot], sizes[slot], pattern);
	free(held);
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s THREADS SECONDS\n", argv[0]);
		return 2;
	}
	int n = atoi(argv[1]);
	double seconds = atof(argv[2]);
	if (n < 1 || n > 10000 || seconds <= 0) {
		fprintf(stderr, "%s: THREADS from 1 to 10000, SECONDS > 0\n",
			argv[0]);
		return 2;
	}
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	if (!t)
		abort();
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, work,
				   (void *)(uintptr_t)(i + 1))) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	while (!self_tracer_pid())
		usleep(20000);
	end_time = now() + seconds;
	atomic_store(&go, 1);
	char line[64];
	while (fgets(line, sizeof(line), stdin))
		if (!strcmp(line, "settle\n"))
			atomic_store(&settled, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (atomic_load(&corrupt)) {
		printf("corrupt\n");
		return 1;
	}
	printf("done\n");
	return 0;
}
