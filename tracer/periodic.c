/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Periodic snapshots (--snapshot-every=SECONDS, or `heaptrace top`'s
   --interval): a timer of heaptrace's own raises SIGUSR1 in heaptrace
   every interval, which is exactly a
   request for a snapshot on demand (ondemand.c): the same files and
   numbering, the same drain of every ring first, and the same wake-up of
   an idle loop (the handler jumps out of its wait). The target is not
   touched by the timer: a snapshot costs it what one on demand costs. */
#include "tracer/session.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "common/err.h"

int
periodic_start(struct periodic *pt, uint64_t ms)
{
	pt->armed = false;
	if (!ms)
		return 0;
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_SIGNAL;
	sev.sigev_signo = SIGUSR1;
	/* CLOCK_MONOTONIC: a change of the wall clock moves no snapshot. */
	if (timer_create(CLOCK_MONOTONIC, &sev, &pt->timer))
		return -errno;
	struct itimerspec every = {
		.it_interval = { .tv_sec = (time_t)(ms / 1000),
				 .tv_nsec = (long)(ms % 1000) * 1000000L },
		.it_value = { .tv_sec = (time_t)(ms / 1000),
			      .tv_nsec = (long)(ms % 1000) * 1000000L },
	};
	if (timer_settime(pt->timer, 0, &every, NULL)) {
		int e = errno;
		timer_delete(pt->timer);
		return -e;
	}
	pt->armed = true;
	return 0;
}

void
periodic_stop(struct periodic *pt)
{
	if (!pt->armed)
		return;
	timer_delete(pt->timer);
	pt->armed = false;
}
