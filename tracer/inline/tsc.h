/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stubs' time stamps (ring.h, RING_F_TSC) on the tracer's clock: a TSC
   reading becomes CLOCK_MONOTONIC nanoseconds by a line through (TSC,
   CLOCK_MONOTONIC) pairs the tracer reads itself. Right only where the TSC
   ticks at one constant rate whatever the CPU's power state, in step on
   every CPU (tsc_usable). Design: docs/inline-backend.md, "Time stamps". */
#ifndef HT_TRACER_INLINE_TSC_H
#define HT_TRACER_INLINE_TSC_H

#include <stdbool.h>
#include <stdint.h>

/* A calibration: the first pair read fixes the line's far end, the latest
   its near end (the anchor, from which a conversion extrapolates: records
   are converted soon after the anchor is read, so the rate's error over
   that short distance is what remains). */
struct tsc_clock {
	uint64_t tsc0, ns0; /* the first pair */
	uint64_t tsc1, ns1; /* the latest pair */
	unsigned pairs;     /* how many were added */
	double ns_per_tick; /* the rate through the two, once there is one
			       (else 0): worked out as each pair is added,
			       not at every conversion (a division per
			       record was a tenth of the drain's time) */
};

/* True when FLAGS, the value of a "flags" line of /proc/cpuinfo, names
   both constant_tsc (one rate whatever the frequency) and nonstop_tsc
   (ticking in deep sleep states too). */
bool tsc_flags_usable(const char *flags);

/* True when this machine's TSC can stamp calls for the tracer's clock: its
   /proc/cpuinfo's flags pass tsc_flags_usable. Read once per process. */
bool tsc_usable(void);

/* Add a pair (TSC, NS) read at one instant: the first becomes the far
   end, every later one the anchor. */
void tsc_clock_add(struct tsc_clock *c, uint64_t tsc, uint64_t ns);

/* Read the TSC and CLOCK_MONOTONIC together (the tightest of a few tries)
   and add the pair. */
void tsc_clock_sample(struct tsc_clock *c);

/* The CLOCK_MONOTONIC time, in nanoseconds, at which the TSC read TSC, by
   C's line; with fewer than two pairs (no rate yet), the anchor's time. */
uint64_t tsc_clock_ns(const struct tsc_clock *c, uint64_t tsc);

#endif
