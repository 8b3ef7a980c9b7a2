/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two threads allocating at once (bench/programs.sh): each keeps a window
   of LIVE small blocks and replaces one per step, so malloc and free are
   both on the hot path, from two threads on two CPUs while the tracer
   needs a CPU of its own to keep up. Touching every block (and summing a
   quarter of its bytes) keeps the run from being nothing but allocator
   calls, as real code is not, and lets the result check the work.
   Usage: threads [ALLOCATIONS_PER_THREAD] (default 1500000). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LIVE 1024

static long per_thread = 1500000;

static void *
work(void *arg)
{
	uintptr_t seed = (uintptr_t)arg;
	unsigned char *live[LIVE] = { 0 };
	uint64_t sum = 0;

	for (long i = 0; i < per_thread; i++) {
		unsigned slot = (unsigned)(i * 2654435761u) % LIVE;
		size_t size = 16 + (size_t)((i * 37 + (long)seed * 101) % 497);
		free(live[slot]);
		unsigned char *p = malloc(size);
		if (!p)
			abort();
		memset(p, (int)(i & 0xff), size);
		for (size_t j = 0; j < size; j += 4)
			sum = sum * 31 + p[j];
		live[slot] = p;
	}
	for (unsigned s = 0; s < LIVE; s++)
		free(live[s]);
	return (void *)(uintptr_t)sum;
}

int
main(int argc, char **argv)
{
	pthread_t t[2];
	uint64_t total = 0;

	if (argc > 1)
		per_thread = atol(argv[1]);
	for (uintptr_t i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, work, (void *)i) != 0)
			return 1;
	for (int i = 0; i < 2; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (uintptr_t)r;
	}
	printf("%llu\n", (unsigned long long)total);
	return 0;
}
