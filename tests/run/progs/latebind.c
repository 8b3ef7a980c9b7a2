/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Threads calling the allocator while heaptrace patches it
   (tests/run/stopall.sh). Under HEAPTRACE_TEST_BIND_WITH=<file name of
   argv[1]>, heaptrace binds the allocator only once argv[1]
   (latebind_lib.c) is in the link map; this program dlopens it while
   NTHREADS threads call the allocator in a loop (phase 1), so that the
   entries are patched while they run: two threads call every
   malloc-family function, two only free(NULL), in a tight loop, until the
   dlopen returns; then all four call every function ROUNDS_AFTER times
   more, through the patches. Phase 2: each thread allocates NBLOCKS
   blocks of 1000 + 100 x id bytes through phase2_alloc, and all wait at a
   barrier before freeing them, so that at the peak exactly
   25 x (1000 + 1100 + 1200 + 1300) = 115,000 bytes of phase2_alloc's
   blocks are live, and none of phase 1's (hammer_round frees every block
   it makes). Every block is filled and checked, and the program exits 1
   at any difference: a thread resumed at a wrong place would crash or
   corrupt.
   Built with HT_OWN_FREE, the program has its own free, a wrapper of
   glibc's as an allocator wrapper would be, which heaptrace binds instead
   of glibc's: its entry is several slow instructions, and the free(NULL)
   threads are stopped between them, so heaptrace has to move them out of
   the bytes it replaces (glibc's entries never hold a thread that way:
   each is one instruction, or free's fused test and jump).
   With argv[2] "leader-exits" a coordinator thread does main's work and
   main calls pthread_exit, so that patching meets a zombie leader. */
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#ifdef HT_OWN_FREE
/* glibc's free behind three slow instructions, all covered by the patch's
   jump: a thread calling it in a tight loop is nearly always interrupted
   after one of them. */
__asm__(".globl free\n"
	".type free, @function\n"
	"free:\n"
	"	pause\n"
	"	pause\n"
	"	pause\n"
	"	jmp __libc_free@PLT\n"
	".size free, . - free\n");
#endif

#define NTHREADS 4
#define NBLOCKS 25
/* NULL the compiler cannot see: it drops a literal free(NULL) */
static void *volatile null_block;
#define FREE_NULL_4                                                      \
	free(null_block); free(null_block); free(null_block); free(null_block)
#define ROUNDS_BEFORE 500 /* per thread, before the dlopen */
#define ROUNDS_AFTER 500 /* per thread, once it has returned */

static const char *lib_path;
static atomic_int loaded;
static atomic_long rounds[NTHREADS];
static atomic_int failed;
static pthread_barrier_t all_allocated;

static void fill(void *p, size_t n, int id)
{
	memset(p, 'a' + id, n);
}

/* The ends and the middle of a block FILL wrote: cheap, so that threads
   spend their time in the allocator. */
static void check(const void *p, size_t n, int id)
{
	const unsigned char *c = p;
	unsigned char want = (unsigned char)('a' + id);

	if (!p || c[0] != want || c[n / 2] != want || c[n - 1] != want)
		atomic_store(&failed, 1);
}

/* One call of every allocator entry, every block freed before returning. */
NOINLINE static void hammer_round(int id, long round)
{
	size_t n = 16 + (size_t)(round % 200);
	char *a = malloc(n);
	char *b = calloc(1, n);
	void *c = NULL;
	void *d = aligned_alloc(32, 64);
	void *e = memalign(16, n);
	void *f = reallocarray(NULL, 2, n);
	void *g = round % 32 == 0 ? valloc(n) : NULL;

	fill(a, n, id);
	a = realloc(a, 2 * n);
	check(a, n, id);
	if (!b || b[n - 1] != 0)
		atomic_store(&failed, 1);
	if (posix_memalign(&c, 64, n) != 0)
		atomic_store(&failed, 1);
	fill(c, n, id);
	fill(d, 64, id);
	fill(e, n, id);
	fill(f, 2 * n, id);
	check(c, n, id);
	check(d, 64, id);
	check(e, n, id);
	check(f, 2 * n, id);
	free(g);
	free(f);
	free(e);
	free(d);
	free(c);
	free(b);
	free(a);
}

/* free(NULL) is little more than the two instructions a patch of free
   covers: a thread calling it in a tight loop is often found between
   them. */
NOINLINE static void free_null_round(void)
{
	for (int i = 0; i < 16; i++) {
		FREE_NULL_4; FREE_NULL_4; FREE_NULL_4; FREE_NULL_4;
	}
}

NOINLINE static void *phase2_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

static void phase2(int id)
{
	void *blocks[NBLOCKS];
	size_t n = 1000 + 100 * (size_t)id;

	for (int i = 0; i < NBLOCKS; i++) {
		blocks[i] = phase2_alloc(n);
		fill(blocks[i], n, id);
	}
	pthread_barrier_wait(&all_allocated);
	for (int i = 0; i < NBLOCKS; i++) {
		check(blocks[i], n, id);
		free(blocks[i]);
	}
}

static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	long round = 0, after = 0;

	while (after < ROUNDS_AFTER) {
		if (atomic_load(&loaded))
			after++;
		if (id % 2 && !after)
			free_null_round();
		else
			hammer_round(id, round);
		atomic_store(&rounds[id], ++round);
	}
	phase2(id);
	return NULL;
}

/* Until every thread has made N rounds. */
static void wait_rounds(long n)
{
	for (int i = 0; i < NTHREADS; i++)
		while (atomic_load(&rounds[i]) < n)
			usleep(200);
}

static int coordinate(void)
{
	pthread_t t[NTHREADS];
	void *lib;
	int (*marker)(void);

	if (pthread_barrier_init(&all_allocated, NULL, NTHREADS) != 0)
		return 2;
	for (intptr_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i) != 0)
			return 2;
	wait_rounds(ROUNDS_BEFORE);
	lib = dlopen(lib_path, RTLD_NOW);
	if (!lib)
		return 3;
	marker = (int (*)(void))dlsym(lib, "latebind_marker");
	if (!marker || marker() != 42)
		return 4;
	atomic_store(&loaded, 1);
	for (int i = 0; i < NTHREADS; i++)
		if (pthread_join(t[i], NULL) != 0)
			return 2;
	return atomic_load(&failed) ? 1 : 0;
}

static void *coordinator(void *arg)
{
	(void)arg;
	exit(coordinate());
}

int main(int argc, char **argv)
{
	pthread_t c;

	if (argc < 2)
		return 2;
	lib_path = argv[1];
	if (argc < 3 || strcmp(argv[2], "leader-exits") != 0)
		return coordinate();
	if (pthread_create(&c, NULL, coordinator, NULL) != 0)
		return 2;
	pthread_exit(NULL);
}
