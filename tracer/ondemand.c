/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Snapshots on demand: SIGUSR1 sent to heaptrace asks for the profile so
   far of every traced process. The handler only raises a flag; the event
   loop serves it between two events, with every ring drained first so
   that the profile holds every call made before the request. */
#include "tracer_priv.h"

#include <signal.h>

#define REQUEST_RECORD_WAIT_NS 2000000ULL /* a record being written */

static volatile sig_atomic_t requested;

static void
on_sigusr1(int sig)
{
	(void)sig;
	requested = 1;
}

void
ondemand_install(struct sigaction *old)
{
	/* SA_RESTART: the tracer's other system calls go on undisturbed;
	   its idle wait (sigtimedwait) is never restarted, so the request
	   ends it at once. */
	struct sigaction sa = { .sa_handler = on_sigusr1,
				.sa_flags = SA_RESTART };
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
