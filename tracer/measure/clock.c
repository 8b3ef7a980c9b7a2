/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The session's clock: the time every event is stamped with, in the unit
   --time-unit asks for (milliseconds since the tracer started, or the
   target's instructions: perfcount.c). Its own file because every event
   source reads it, and the tables of processes and threads must not
   depend on what reads it. */
#include "tracer/measure/measure.h"

#include <time.h>

uint64_t
tracer_now_ms(const struct tracer *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return ms - t->t0_ms;
}

uint64_t
tracer_clock(struct tracer *t, const struct tproc *p)
{
	/* Bytes are counted by the engine: no clock to read per event. */
	if (t->opt->time_unit == HT_TIME_B)
		return 0;
	if (t->opt->time_unit == HT_TIME_I)
		return perfcount_process(t, p);
	return tracer_now_ms(t);
}
