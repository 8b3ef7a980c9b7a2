/* SPDX-License-Identifier: GPL-2.0-or-later */
/* N threads (argv[1]) mallocing 1000-byte blocks in burst_alloc as fast
   as they can, never freeing one, until the process is killed
   (signals.sh: SIGTERM, under a one-page ring, so that threads are
   waiting for room in it or writing a record when they die). Each thread
   counts the blocks it got, after each malloc returned, in the file
   argv[2] (N 64-bit counters, mapped shared: they outlive the process).
   Every counted block was recorded before its malloc returned, so the
   final profile must hold at least the counted blocks, and at most one
   more per thread (recorded, not counted yet). main prints "ready PID"
   once every thread has counted a block. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define STACK_SIZE (64 * 1024)

static volatile uint64_t *counts;

NOINLINE static void *burst_alloc(void)
{
	return malloc(1000);
}

static void *worker(void *arg)
{
	uintptr_t id = (uintptr_t)arg;

	for (;;) {
		char *p = burst_alloc();

		if (!p)
			abort();
		p[0] = 1;
		__atomic_store_n(&counts[id], counts[id] + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[1]) : 0;
	pthread_attr_t attr;
	char line[32];

	if (n < 1)
		return 2;
	size_t size = (size_t)n * sizeof(*counts);
	int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)size))
		return 1;
	counts = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (counts == MAP_FAILED || pthread_attr_init(&attr) ||
	    pthread_attr_setstacksize(&attr, STACK_SIZE))
		return 1;
	for (int i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &attr, worker, (void *)(uintptr_t)i))
			return 1;
	}
	for (int i = 0; i < n; i++)
		while (!__atomic_load_n(&counts[i], __ATOMIC_ACQUIRE))
			usleep(1000);
	int len = snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	if (write(1, line, (size_t)len) != len)
		return 1;
	for (;;)
		pause();
}
