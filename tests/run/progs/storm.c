/* SPDX-License-Identifier: GPL-2.0-or-later */
/* An allocation storm for the survival tests (tests/run/survive.sh):
   THREADS threads each make OPS allocator calls (malloc, calloc, realloc,
   posix_memalign, aligned_alloc, free) on 64 slots, with sizes from 1 byte
   to 16 KiB and now and then 160 KiB (glibc's mmap'd chunks). Every block
   is filled with a pattern of its own and checked, every byte, before it
   is freed or realloc'd (and the part a realloc keeps after); calloc's
   zeros are checked too. A block a dying or half-detached tracer damaged,
   or a call it made return wrong, is found here.

   The work is fixed (OPS calls from a fixed seed per thread), not timed,
   so the summary line on stdout is the same at every run, traced or not:

       storm: THREADS threads x OPS calls, checksum HEX

   and the exit status is 7 (a status no crash, no signal, no exit(0) or
   exit(1) gives by accident). A failed check prints one line on stderr
   and exits 1; bad arguments exit 2.

   With "rounds" as third argument the threads repeat that same work in
   rounds until stdin reaches end of file (the main thread blocks in
   read(); "storm: running" on stderr once the threads run): each round
   must give the checksum of the first, and the summary is printed once,
   the same as without "rounds". That makes a process that runs as long
   as a test needs while its result stays fixed. The number of rounds
   goes to stderr. No stdio before the end (its buffers are allocations
   the summary does not need). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 64
#define MAX_THREADS 64

static long ops;
static atomic_int stop;
static atomic_int failed;

struct worker {
	pthread_t th;
	unsigned index;
	uint64_t checksum; /* of the first round */
	unsigned long rounds;
};

static void
say(int fd, const char *s)
{
	ssize_t w = write(fd, s, strlen(s));
	(void)w;
}

static void
fail(const char *s)
{
	if (atomic_exchange(&failed, 1) == 0)
		say(2, s);
}

/* xorshift64*: the same sequence on every run and every thread count */
static uint64_t
next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static void
fill(unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(tag + i * 13);
}

static int
intact(const unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(tag + i * 13))
			return 0;
	return 1;
}

static size_t
pick_size(uint64_t r)
{
	if (r % 97 == 0)
		return 160 * 1024 + (size_t)(r >> 40) % 4096;
	switch ((r >> 8) % 4) {
	case 0:
		return 1 + (size_t)(r >> 16) % 64;
	case 1:
		return 1 + (size_t)(r >> 16) % 1024;
	default:
		return 1 + (size_t)(r >> 16) % 16384;
	}
}

/* One round: OPS calls, then every slot freed. Returns its checksum,
   which depends only on the sizes and kinds of the calls. */
static uint64_t
round_of_work(unsigned index)
{
	unsigned char *block[SLOTS] = { 0 };
	size_t size[SLOTS] = { 0 };
	unsigned tag[SLOTS] = { 0 };
	uint64_t s = 0x9E3779B97F4A7C15ULL * (index + 1);
	uint64_t sum = index;
	for (long op = 0; op < ops; op++) {
		uint64_t r = next(&s);
		unsigned k = (unsigned)(r % SLOTS);
		unsigned t = (unsigned)(r >> 32);
		if (block[k]) {
			if (!intact(block[k], size[k], tag[k]))
				fail("storm: a block changed\n");
			if ((r >> 20) % 3 == 0) {
				size_t n = pick_size(r >> 3);
				unsigned char *q = realloc(block[k], n);
				size_t keep = n < size[k] ? n : size[k];
				if (!q) {
					fail("storm: realloc failed\n");
					continue;
				}
				if (!intact(q, keep, tag[k]))
					fail("storm: realloc lost bytes\n");
				block[k] = q;
				size[k] = n;
				tag[k] = t;
				fill(q, n, t);
				sum = sum * 31 + n * 3 + 1;
				continue;
			}
			free(block[k]);
			block[k] = NULL;
			sum = sum * 31 + size[k] * 5 + 2;
			continue;
		}
		size_t n = pick_size(r);
		void *m = NULL;
		switch ((r >> 24) % 5) {
		case 0:
		case 1:
			m = malloc(n);
			break;
		case 2:
			m = calloc(1, n);
			if (m)
				for (size_t i = 0; i < n; i++)
					if (((unsigned char *)m)[i]) {
						fail("storm: calloc not zeroed\n");
						break;
					}
			break;
		case 3:
			m = realloc(NULL, n);
			break;
		default:
			if (posix_memalign(&m, 64, n))
				m = NULL;
			else if ((uintptr_t)m % 64)
				fail("storm: posix_memalign misaligned\n");
			break;
		}
		if (!m) {
			fail("storm: allocation failed\n");
			continue;
		}
		block[k] = m;
		size[k] = n;
		tag[k] = t;
		fill(m, n, t);
		sum = sum * 31 + n * 7 + (r >> 24) % 5;
	}
	for (unsigned k = 0; k < SLOTS; k++) {
		if (block[k] && !intact(block[k], size[k], tag[k]))
			fail("storm: a block changed\n");
		free(block[k]);
	}
	return sum;
}

static void *
worker(void *arg)
{
	struct worker *w = arg;
	w->checksum = round_of_work(w->index);
	w->rounds = 1;
	while (!atomic_load(&stop)) {
		if (round_of_work(w->index) != w->checksum)
			fail("storm: a round gave another checksum\n");
		w->rounds++;
	}
	return NULL;
}

int
main(int argc, char **argv)
{
	if (argc < 3 || (argc == 4 && strcmp(argv[3], "rounds")) || argc > 4) {
		say(2, "usage: storm THREADS OPS [rounds]\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	ops = atol(argv[2]);
	int rounds = argc == 4;
	if (threads < 1 || threads > MAX_THREADS || ops < 1) {
		say(2, "storm: bad THREADS or OPS\n");
		return 2;
	}
	/* one round only, unless "rounds": the workers stop after it */
	atomic_store(&stop, !rounds);
	static struct worker w[MAX_THREADS];
	for (int i = 0; i < threads; i++) {
		w[i].index = (unsigned)i;
		if (pthread_create(&w[i].th, NULL, worker, &w[i])) {
			say(2, "storm: pthread_create failed\n");
			return 1;
		}
	}
	if (rounds) {
		say(2, "storm: running\n");
		char buf[64];
		while (read(0, buf, sizeof(buf)) > 0)
			;
		atomic_store(&stop, 1);
	}
	uint64_t checksum = 0;
	unsigned long total_rounds = 0;
	for (int i = 0; i < threads; i++) {
		pthread_join(w[i].th, NULL);
		checksum = checksum * 1000003 ^ w[i].checksum;
		total_rounds += w[i].rounds;
	}
	if (atomic_load(&failed))
		return 1;
	printf("storm: %d threads x %ld calls, checksum %016llx\n", threads,
	       ops, (unsigned long long)checksum);
	if (rounds)
		fprintf(stderr, "storm: %lu rounds\n", total_rounds);
	return 7;
}
