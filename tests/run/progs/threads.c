/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Four threads, each allocating 50 blocks through its own call chain,
   freeing every other one, then the rest; main allocates while they run
   and joins them. pthread_create itself allocates (the thread's DTV, by
   calloc inside ld.so). The interleaving varies from run to run, so the
   profiles are compared with a tolerance; the totals are fixed: each
   thread's blocks add up to 50 x (1000 + 64 x id) bytes at most. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define NTHREADS 4
#define NBLOCKS 50

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

	for (uintptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 1;
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 1;
	free(mine);
	return 0;
}
