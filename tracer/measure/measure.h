/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What each event is stamped with besides its call: the session's clock
   (milliseconds or the target's instructions) and, with --stacks=yes, the
   thread's stack size. Every event source reads these; they read only the
   records (proc/) and the target's mappings (target/). */
#ifndef HT_TRACER_MEASURE_MEASURE_H
#define HT_TRACER_MEASURE_MEASURE_H

#include <stdint.h>

#include "tracer/proc/proc.h"

/* ---- clock.c: the session's clock ---- */
/* Milliseconds since the tracer started. */
uint64_t tracer_now_ms(const struct tracer *t);
/* The current time of P in the session's unit (ms or instructions); 0 when
   the unit is bytes, which the engine counts itself. */
uint64_t tracer_clock(struct tracer *t, const struct tproc *p);

/* ---- perfcount.c: the instruction clock ---- */
/* Open TC's instruction counter when the clock is instructions. */
void perfcount_thread_start(struct tracer *t, struct tracee *tc);
/* Fold TC's final count into its process and close the counter. */
void perfcount_thread_end(struct tracee *tc);
/* Instructions P has executed. */
uint64_t perfcount_process(struct tracer *t, const struct tproc *p);

/* ---- stacksample.c: stack sizes (--stacks=yes) ---- */
/* Report TC's stack size with stack pointer SP (an HT_EV_STACK event)
   when it changed since its last report; before TC's event at TIME. */
void stacksample_report(struct tracer *t, struct tracee *tc, uint64_t sp,
		   uint64_t time);

#endif
