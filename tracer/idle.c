/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop's idle wait. Nothing stopped and the rings are empty:
   sleep until a thread stops (SIGCHLD), a stub rings its ring's doorbell
   (it waits for an answer: a NOTIFY, a thread or a rule; ring.h), or the
   back-off's time is up, whichever comes first.

   One futex_waitv covers it all: the doorbells, and a word of our own
   that the SIGCHLD handler bumps. The words are read before the loop
   last looked for work (idle_arm), so a ring or a signal that came since
   makes the wait return at once: no wake-up is lost. SIGCHLD stays
   blocked everywhere else (the loop reaps with waitpid; stopall.c and
   detach.c wait for it with sigtimedwait); it is let in only around the
   wait. Without futex_waitv (before Linux 5.16) the wait is the plain
   sigtimedwait of SIGCHLD, and a stub's question waits for the back-off
   (at most a millisecond while a program runs). */
#include "tracer/session.h"

#include <errno.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "tracer/inline/inline.h"

#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

static volatile uint32_t sigchld_seq;
static bool waitv_missing;

static void
on_sigchld(int sig)
{
	(void)sig;
	int saved = errno;
	__atomic_add_fetch(&sigchld_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &sigchld_seq, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1,
		NULL, NULL, 0);
	errno = saved;
}

void
idle_install(struct sigaction *old)
{
	/* Not SA_NOCLDSTOP: a tracee's stop is what it is to report. */
	struct sigaction sa = { .sa_handler = on_sigchld,
				.sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGCHLD, &sa, old);
}

void
idle_restore(const struct sigaction *old)
{
	sigaction(SIGCHLD, old, NULL);
}

_Static_assert(sizeof(((struct idle_wait *)0)->v[0]) ==
		       sizeof(struct futex_waitv),
	       "struct idle_wait holds struct futex_waitv's");

static void
watch(struct idle_wait *w, uint32_t *word, uint32_t flags)
{
	w->v[w->n].val = __atomic_load_n(word, __ATOMIC_ACQUIRE);
	w->v[w->n].uaddr = (uintptr_t)word;
	w->v[w->n].flags = flags;
	w->v[w->n].reserved = 0;
	w->n++;
}

/* One waiter per process owning a ring, then SIGCHLD's word. */
void
idle_arm(struct tracer *t, struct idle_wait *w)
{
	w->n = 0;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->procs, &pos, &key, &val) &&
	       w->n < IDLE_MAX_RINGS) {
		uint32_t *bell = inline_doorbell((struct tproc *)(uintptr_t)val);
		if (!bell)
			continue;
		watch(w, bell, FUTEX_32); /* shared with the target */
	}
	watch(w, (uint32_t *)&sigchld_seq, FUTEX_32 | FUTEX_PRIVATE_FLAG);
}

void
idle_wait(const struct idle_wait *w, const sigset_t *chld, unsigned us)
{
	struct timespec ts = {
		.tv_sec = us / 1000000,
		.tv_nsec = (long)(us % 1000000) * 1000,
	};
	if (waitv_missing) {
		sigtimedwait(chld, NULL, &ts);
		return;
	}
	struct timespec until;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += ts.tv_sec;
	until.tv_nsec += ts.tv_nsec;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	/* A SIGCHLD pending since idle_arm runs its handler here, which
	   changes its word: the wait then returns at once. */
	sigprocmask(SIG_UNBLOCK, chld, NULL);
	long rc = syscall(SYS_futex_waitv, w->v, (unsigned)w->n, 0, &until,
			  CLOCK_MONOTONIC);
	int err = errno;
	sigprocmask(SIG_BLOCK, chld, NULL);
	if (rc < 0 && err == ENOSYS) {
		ht_debug("no futex_waitv: idle waits poll the rings");
		waitv_missing = true;
		sigtimedwait(chld, NULL, &ts);
	}
}
