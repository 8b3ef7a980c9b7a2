/* SPDX-License-Identifier: GPL-2.0-or-later */
/* N threads (argv[1], 1000 by default), each mallocing K blocks
   (argv[2], 10) of 1000 + i bytes and keeping them, all at once once
   every thread is there (a burst of allocations, the last ones after
   Massif's last interval snapshot); once all have, main prints "ready
   PID" and every thread waits in pause() until the process is killed
   (signals.sh kills it with SIGTERM). Small stacks, so that a thousand
   threads fit anywhere. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STACK_SIZE (64 * 1024)

static int n_blocks;
static pthread_barrier_t all_there, all_allocated;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&all_there);
	for (int i = 0; i < n_blocks; i++) {
		char *p = malloc(1000 + (size_t)i);

		if (!p)
			abort();
		memset(p, 1, 1000 + (size_t)i);
	}
	pthread_barrier_wait(&all_allocated);
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	int n_threads = argc > 1 ? atoi(argv[1]) : 1000;
	pthread_attr_t attr;

	n_blocks = argc > 2 ? atoi(argv[2]) : 10;
	if (n_threads < 1 || n_blocks < 0 ||
	    pthread_barrier_init(&all_there, NULL, (unsigned)n_threads + 1) ||
	    pthread_barrier_init(&all_allocated, NULL,
				 (unsigned)n_threads + 1) ||
	    pthread_attr_init(&attr) ||
	    pthread_attr_setstacksize(&attr, STACK_SIZE))
		return 1;
	for (int i = 0; i < n_threads; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, worker, NULL)) {
			perror("pthread_create");
			return 1;
		}
	}
	pthread_barrier_wait(&all_there);
	pthread_barrier_wait(&all_allocated);
	/* No stdio: its buffer would be an allocation after the burst. */
	char line[32];
	int n = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(1, line, (size_t)n) != n)
		return 1;
	for (;;)
		pause();
}
