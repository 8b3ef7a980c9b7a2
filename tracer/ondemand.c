/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Snapshots on demand: SIGUSR1 sent to heaptrace asks for the profile so
   far of every traced process. The handler only raises a flag; the event
   loop serves it between two events, with every ring drained first so
   that the profile holds every call made before the request. */
#include "tracer/session.h"

#include "tracer/inline/inline.h"
#include "tracer/measure/measure.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>

#define REQUEST_RECORD_WAIT_NS 2000000ULL /* a record being written */

static volatile sig_atomic_t requested;
/* Set while ondemand_waitpid may block: the handler then jumps out of
   it, so that a request arriving just before the wait begins cannot be
   left waiting for the target's next stop. */
static volatile sig_atomic_t in_wait;
static sigjmp_buf wait_env;
static volatile sig_atomic_t woken; /* ondemand_wake */

static void
on_sigusr1(int sig)
{
	(void)sig;
	requested = 1;
	if (in_wait) {
		in_wait = 0;
		siglongjmp(wait_env, 1);
	}
}

void
ondemand_wake(void)
{
	woken = 1;
	if (in_wait) {
		in_wait = 0;
		siglongjmp(wait_env, 1);
	}
}

pid_t
ondemand_waitpid(int *status)
{
	/* No mask saved: SA_NODEFER leaves SIGUSR1 unblocked in the handler,
	   and saving it would cost a system call per wait. */
	if (sigsetjmp(wait_env, 0)) {
		woken = 0;
		errno = EINTR;
		return -1;
	}
	in_wait = 1;
	if (requested || woken) {
		in_wait = 0;
		woken = 0;
		errno = EINTR;
		return -1;
	}
	/* Wait without reaping (WNOWAIT): the handler may jump out at any
	   point up to in_wait = 0, even after the call returned, and must
	   not lose a status it had taken. */
	siginfo_t si;
	int rc = waitid(P_ALL, 0, &si, WEXITED | WSTOPPED | WNOWAIT | __WALL);
	in_wait = 0;
	if (rc < 0)
		return -1;
	return waitpid(-1, status, __WALL | WNOHANG);
}

void
ondemand_install(struct sigaction *old)
{
	/* SA_RESTART: the tracer's other system calls go on undisturbed;
	   its idle waits end at once (sigtimedwait is never restarted, and
	   the handler jumps out of ondemand_waitpid). */
	struct sigaction sa = { .sa_handler = on_sigusr1,
				.sa_flags = SA_RESTART | SA_NODEFER };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, old);
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_UNBLOCK, &usr1, NULL);
}

void
ondemand_restore(const struct sigaction *old)
{
	sigaction(SIGUSR1, old, NULL);
}

bool
ondemand_pending(void)
{
	return requested;
}

void
ondemand_serve(struct tracer *t)
{
	if (!requested)
		return;
	requested = 0;
	if (!t->sink->snapshot)
		return;
	size_t pos = 0;
	uint64_t key, val;
	/* All rings first: a vfork child's records travel in its parent's. */
	while (u64map_next(&t->procs, &pos, &key, &val))
		inline_drain(t, (struct tproc *)(uintptr_t)val,
			     REQUEST_RECORD_WAIT_NS);
	pos = 0;
	while (u64map_next(&t->procs, &pos, &key, &val)) {
		struct tproc *p = (struct tproc *)(uintptr_t)val;
		if (p->profiling)
			t->sink->snapshot(t->sink->ctx, p->pid,
					  tracer_clock(t, p));
	}
}
