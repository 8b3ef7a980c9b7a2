/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Known totals for --sampling-interval (tests/run/sampling.sh), each kind
   of call from its own function, no stdio:
     small: 200,000 x malloc(100) kept: 20,000,000 B at the peak;
     big:   10 x malloc(1 MiB) kept: 10,485,760 B at the peak, exact
            under any interval up to 1 MiB (recorded at their size);
     grow:  2,000 chains realloc(NULL, 16), then doubled up to 4,096:
            8,192,000 B kept at the peak;
     churn: 1,000,000 x malloc(64) each freed at once (before the
            peak): 64,000,000 B allocated, nothing kept;
   then everything freed (small, big, grow, in that order). So the peak is
   38,677,760 B after the last block of grow. Modes (argv[1]):
     one       all of it on the main thread;
     threads   4 threads, each all of it but big (big on the main thread
               first): small 80,000,000 B, grow 32,768,000 B at the
               peak, each thread waiting for the others before freeing;
     fork      one, then a fork: the child does small again (another
               20,000,000 B at its peak over the inherited blocks, which
               it frees as the parent does), and both exit 0.
   A second argument N divides the counts of small, grow and churn by N
   (for the ptrace backend's slower calls). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leak_common.h"

#define SMALL_N 200000
#define BIG_N 10
#define GROW_N 2000
#define CHURN_N 1000000

static int scale = 1;

struct kept {
	void *small[SMALL_N];
	void *big[BIG_N];
	void *grow[GROW_N];
};

NOINLINE static void *
small(void)
{
	return malloc(100);
}

NOINLINE static void *
big(void)
{
	return malloc(1 << 20);
}

NOINLINE static void *
grow(void)
{
	void *p = NULL;
	for (size_t size = 16; size <= 4096; size *= 2) {
		p = realloc(p, size);
		if (!p)
			exit(1);
	}
	return p;
}

NOINLINE static void
churn(void)
{
	for (int i = 0; i < CHURN_N / scale; i++) {
		void *p = malloc(64);
		if (!p)
			exit(1);
		free(p);
	}
}

static void
take_small(struct kept *k)
{
	for (int i = 0; i < SMALL_N / scale; i++)
		if (!(k->small[i] = small()))
			exit(1);
}

static void
take_big(struct kept *k)
{
	for (int i = 0; i < BIG_N; i++)
		if (!(k->big[i] = big()))
			exit(1);
}

static void
take_grow(struct kept *k)
{
	for (int i = 0; i < GROW_N / scale; i++)
		k->grow[i] = grow();
}

static void
release(void **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
}

static pthread_barrier_t all_in;

static void *
worker(void *arg)
{
	struct kept *k = arg;
	churn();
	take_small(k);
	take_grow(k);
	pthread_barrier_wait(&all_in);
	release(k->small, SMALL_N);
	release(k->grow, GROW_N);
	return NULL;
}

static int
threads(void)
{
	enum { N = 4 };
	static struct kept k[N];
	static struct kept mainkept;
	pthread_t t[N];
	take_big(&mainkept);
	pthread_barrier_init(&all_in, NULL, N);
	for (int i = 0; i < N; i++)
		if (pthread_create(&t[i], NULL, worker, &k[i]))
			return 1;
	for (int i = 0; i < N; i++)
		pthread_join(t[i], NULL);
	release(mainkept.big, BIG_N);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct kept k;
	if (argc > 2 && atoi(argv[2]) > 0)
		scale = atoi(argv[2]);
	if (argc > 1 && argv[1][0] == 't')
		return threads();
	churn();
	take_small(&k);
	take_big(&k);
	take_grow(&k);
	if (argc > 1 && argv[1][0] == 'f') {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			static struct kept c;
			take_small(&c);
			release(c.small, SMALL_N);
		} else {
			int st;
			if (waitpid(pid, &st, 0) != pid || st != 0)
				return 1;
		}
	}
	release(k.small, SMALL_N);
	release(k.big, BIG_N);
	release(k.grow, GROW_N);
	return 0;
}
