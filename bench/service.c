/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A long-running allocation-heavy service for bench/attach.sh: two worker
   threads each keep 1000 live blocks of varied sizes (a few MB in all, so
   a profile taken while attached has a peak well above 1 MB) and replace a
   random one per work unit. The main thread reports the work done so far,
   every 50 ms, as "UNITS SECONDS\n" written in place at the start of the
   file named by argv[1] (SECONDS from CLOCK_MONOTONIC): the pair lets the
   reader compute a rate on the service's own clock, so the report period
   does not blur it, and the reader never has to touch the process.
   Usage: service COUNTER_FILE */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define SLOTS 1000
#define WORKERS 2

/* One counter per worker, each on its own cache line: a shared atomic
   increment would make the two workers fight over one line, and the
   bench would measure that rather than the allocator. */
struct worker {
	_Alignas(64) _Atomic uint64_t units;
	uint64_t seed;
};

static struct worker workers[WORKERS];

static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Its own function, kept out of line, so that the profile's top allocation
   site has a recognisable name. */
__attribute__((noinline)) static void *
alloc_block(uint64_t r)
{
	/* 16 B to 16 KiB, each power of two equally likely, plus some odd
	   bytes: every size class of the allocator gets used, none reaches
	   the mmap threshold. */
	size_t size = ((size_t)16 << (r % 10)) + (r >> 8) % 61;
	char *p = malloc(size);

	if (!p)
		abort();
	/* Touch both ends, as a real user of the block would. */
	p[0] = (char)r;
	p[size - 1] = (char)(r >> 8);
	return p;
}

static void *
work(void *arg)
{
	struct worker *w = arg;
	void *slot[SLOTS];

	for (int i = 0; i < SLOTS; i++)
		slot[i] = alloc_block(next_random(&w->seed));
	for (uint64_t n = 1;; n++) {
		uint64_t r = next_random(&w->seed);
		int i = (int)((r >> 32) % SLOTS);

		free(slot[i]);
		slot[i] = alloc_block(r);
		atomic_store_explicit(&w->units, n, memory_order_relaxed);
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	pthread_t t[WORKERS];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: %s COUNTER_FILE\n", argv[0]);
		return 2;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	for (int i = 0; i < WORKERS; i++) {
		workers[i].seed = 0x9e3779b97f4a7c15u * (uint64_t)(i + 1);
		if (pthread_create(&t[i], NULL, work, &workers[i]) != 0) {
			fprintf(stderr, "%s: pthread_create failed\n", argv[0]);
			return 1;
		}
	}
	for (;;) {
		struct timespec now, pause = { 0, 50 * 1000 * 1000 };
		uint64_t units = 0;
		char line[64];
		int len;

		for (int i = 0; i < WORKERS; i++)
			units += atomic_load_explicit(&workers[i].units,
						      memory_order_relaxed);
		clock_gettime(CLOCK_MONOTONIC, &now);
		/* Fixed width, so each write covers the previous one whole
		   and the file never needs truncating. */
		len = snprintf(line, sizeof(line), "%20llu %12lld.%09ld\n",
			       (unsigned long long)units, (long long)now.tv_sec,
			       now.tv_nsec);
		if (pwrite(fd, line, (size_t)len, 0) != len) {
			perror("pwrite");
			return 1;
		}
		nanosleep(&pause, NULL);
	}
}
