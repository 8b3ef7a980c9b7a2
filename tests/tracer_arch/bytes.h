/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading little-endian fields out of encoded instructions, for the
   tests that check relocated code byte by byte. */
#ifndef HT_TESTS_TRACER_ARCH_BYTES_H
#define HT_TESTS_TRACER_ARCH_BYTES_H

#include <stdint.h>

static inline int32_t
get32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static inline uint64_t
get64(const uint8_t *p)
{
	return (uint32_t)get32(p) | (uint64_t)(uint32_t)get32(p + 4) << 32;
}

/* A + REL with wrap-around, as the CPU adds a displacement. */
static inline uint64_t
plus(uint64_t a, int64_t rel)
{
	return a + (uint64_t)rel;
}

#endif
