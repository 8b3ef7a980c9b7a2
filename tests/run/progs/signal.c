/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation inside signal handlers: SIGUSR1 sent with raise(), SIGALRM
   from a one-shot setitimer while main waits in sigsuspend, so both
   arrive at fixed points of the program. Each handler allocates through
   its own function; the blocks are freed in main. The trees show the
   handler frames above the signal trampoline. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#define NOINLINE __attribute__((noinline))

static void *volatile from_usr1;
static void *volatile from_alrm;

NOINLINE static void *handler_alloc(size_t n)
{
	void *p = malloc(n);

	return p;
}

static void on_usr1(int sig)
{
	(void)sig;
	from_usr1 = handler_alloc(1234);
}

static void on_alrm(int sig)
{
	(void)sig;
	from_alrm = handler_alloc(4321);
}

int main(void)
{
	struct itimerval it = { .it_value = { .tv_usec = 20000 } };
	struct sigaction sa;
	sigset_t block, old;
	void *before = malloc(100);

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = on_usr1;
	if (sigaction(SIGUSR1, &sa, NULL) != 0)
		return 1;
	sa.sa_handler = on_alrm;
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		return 1;

	if (raise(SIGUSR1) != 0 || !from_usr1)
		return 1;

	/* Block SIGALRM until sigsuspend so it cannot arrive earlier. */
	sigemptyset(&block);
	sigaddset(&block, SIGALRM);
	if (sigprocmask(SIG_BLOCK, &block, &old) != 0)
		return 1;
	if (setitimer(ITIMER_REAL, &it, NULL) != 0)
		return 1;
	while (!from_alrm)
		sigsuspend(&old);
	if (sigprocmask(SIG_SETMASK, &old, NULL) != 0)
		return 1;

	free(from_usr1);
	free(before);
	free(from_alrm);
	return 0;
}
