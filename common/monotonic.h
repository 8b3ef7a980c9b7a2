/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The machine's monotonic clock, for time-outs and intervals inside
   heaptrace (never a profile's time axis: that is tracer/measure/). */
#ifndef HT_COMMON_MONOTONIC_H
#define HT_COMMON_MONOTONIC_H

#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline uint64_t
ht_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Milliseconds on CLOCK_MONOTONIC. */
static inline uint64_t
ht_monotonic_ms(void)
{
	return ht_monotonic_ns() / 1000000;
}

#endif
