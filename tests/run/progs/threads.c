/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Four threads, each allocating 20 blocks of 1000 + 64 x id bytes through
   its own call chain; all wait at a barrier, so that every block is live
   before any is freed, then each frees its blocks, every other one first.
   main allocates 5000 bytes before starting them and frees them after
   joining. pthread_create itself allocates (the thread's DTV, by calloc
   inside ld.so). The interleaving varies from run to run (Valgrind runs
   one thread at a time), so the series differ; the barrier makes the peak
   the same: 5000 + 20 x (1000 + 1064 + 1128 + 1192) = 92,680 bytes of
   blocks plus the DTVs (one of 1,088 bytes with glibc 2.36), and the heap
   is empty at the end. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NTHREADS 4
#define NBLOCKS 20

static pthread_barrier_t all_allocated;

NOINLINE static void *thread_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;
	void *blocks[NBLOCKS];

	for (int i = 0; i < NBLOCKS; i++)
		blocks[i] = thread_alloc(1000 + 64 * id);
	pthread_barrier_wait(&all_allocated);
	for (int i = 0; i < NBLOCKS; i += 2)
		free(blocks[i]);
	for (int i = 1; i < NBLOCKS; i += 2)
		free(blocks[i]);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	void *mine = malloc(5000);

	if (pthread_barrier_init(&all_allocated, NULL, NTHREADS) != 0)
		return 1;
	for (uintptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 1;
	pthread_barrier_destroy(&all_allocated);
	free(mine);
	return 0;
}
