/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fast unwinder's test program, built with -O2 (no frame pointers, CFI
   that changes inside functions). With no argument it allocates from a call
   chain, from a frame realigned through a DRAP register (CFA expressions),
   from a signal handler (the trampoline's CFI reads the ucontext) and from
   a thread, for the driver to single-step and unwind at every instruction.
   "deep" stops at a raise(SIGSTOP) under 15 frames, for the benchmark. */
#include "mark.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

typedef void leaf_fn(void);

/* The allocator's paths: small and large blocks, zeroed, grown, freed,
   and one big enough to be mmap'ed. */
static NOINLINE void
churn(void)
{
	void *p = malloc(24), *q = calloc(10, 100), *r;

	r = realloc(p, 5000);
	free(q);
	free(r);
	p = malloc(200000);
	free(p);
	mark_sink++;
}

/* A variable-length array and an over-aligned local: gcc realigns the
   stack through a DRAP register (r10), so the CFI holds an r10-based CFA,
   then a CFA read from memory and registers saved at rbp-based addresses,
   all as DWARF expressions. */
static NOINLINE void
realigned(int n)
{
	char vla[n];
	char big[64] __attribute__((aligned(64)));

	memset(vla, 1, (size_t)n);
	memset(big, 2, sizeof(big));
	mark_sink += vla[n / 2] + big[3];
	churn();
	mark_sink++;
}

static void
realigned_100(void)
{
	realigned(100);
}

static void
on_signal(int sig)
{
	(void)sig;
	churn();
}

static NOINLINE void
signalled(void)
{
	raise(SIGUSR1);
	mark_sink++;
}

static NOINLINE void
stop(void)
{
	raise(SIGSTOP);
	mark_sink++;
}

/* DEPTH frames of itself, then LEAF. */
static NOINLINE void
level(int depth, leaf_fn *leaf)
{
	if (depth > 0)
		level(depth - 1, leaf);
	else
		leaf();
	mark_sink++;
}

static void *
thread_main(void *arg)
{
	level(2, churn);
	return arg;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t t;

	if (argc > 1 && strcmp(argv[1], "deep") == 0) {
		/* pthread_kill, raise, stop, 8 x level, main and three
		   below main. */
		level(7, stop);
		return 0;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGUSR1, &sa, NULL);
	level(3, churn);
	level(1, realigned_100);
	level(2, signalled);
	if (pthread_create(&t, NULL, thread_main, NULL) == 0)
		pthread_join(t, NULL);
	return 0;
}
