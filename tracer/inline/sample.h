/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Byte sampling (--sampling-interval): the arithmetic the inline stub runs
   in the target and the ptrace path runs in the tracer, and the set of
   sampled block addresses both keep so that only the frees of sampled
   blocks are recorded. Included by the freestanding stub: nothing beyond
   <stdint.h>, compiler builtins and integer arithmetic (the stub has no
   libm and may not touch SSE registers). Design: docs/inline-backend.md,
   "Sampling". */
#ifndef HT_TRACER_INLINE_SAMPLE_H
#define HT_TRACER_INLINE_SAMPLE_H

#include <stdint.h>

/* What a record's SAMPLE byte says of a sampled call (0: not sampled;
   in exact mode always 0). 1..SAMPLE_K_MAX: the allocation crossed that
   many sample points and stands for K x interval bytes. */
#define SAMPLE_K_MAX 254u
#define SAMPLE_TRUE_SIZE 255u /* at least the interval: its own size */

/* The most bytes --sampling-interval takes (the gap arithmetic below
   stays within 128 bits for it). */
#define SAMPLE_INTERVAL_MAX (1ULL << 40)

/* Fractional bits of the fixed-point logarithm. */
#define SAMPLE_LOG_FRAC 24u

/* splitmix64's output function: a bijection of 64-bit words whose
   outputs for consecutive inputs pass BigCrush. */
static inline uint64_t
sample_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* The next 64 random bits of the splitmix64 stream whose state is *S. */
static inline uint64_t
sample_rand(uint64_t *s)
{
	*s += 0x9e3779b97f4a7c15ULL;
	return sample_mix(*s);
}

/* The PRNG state of thread THREAD (its ordinal in its process, from 0) of
   profiled process PROC (its ordinal, from 0) in a run seeded with SEED:
   the same in every run with that seed, whatever the thread ids. */
static inline uint64_t
sample_stream(uint64_t seed, uint64_t proc, uint64_t thread)
{
	uint64_t s = sample_mix(seed ^ 0x6a09e667f3bcc909ULL);
	s = sample_mix(s ^ (proc * 0xd1b54a32d192ed03ULL + 1));
	return sample_mix(s ^ (thread * 0xaef17502108ef2d9ULL + 2));
}

/* log2(X) for 1 <= X < 2^63, in fixed point with SAMPLE_LOG_FRAC
   fractional bits, rounded down: the integer part from the highest set
   bit, then one fractional bit per squaring of the mantissa (kept as
   Q1.62, in [1, 2)). */
static inline uint64_t
sample_log2(uint64_t x)
{
	uint32_t n = 63u - (uint32_t)__builtin_clzll(x);
	uint64_t m = x << (62u - n); /* x < 2^63: n <= 62 */
	uint64_t r = (uint64_t)n << SAMPLE_LOG_FRAC;
	for (uint32_t bit = SAMPLE_LOG_FRAC; bit-- > 0;) {
		m = (uint64_t)(((unsigned __int128)m * m) >> 62);
		if (m >> 63) {
			m >>= 1;
			r |= 1ULL << bit;
		}
	}
	return r;
}

/* ln 2 in Q0.32, rounded. */
#define SAMPLE_LN2_Q32 2977044472ULL

/* The gap -ln(X / 2^52) x INTERVAL in whole bytes, rounded, at least 1,
   for 1 <= X <= 2^52: (52 - log2 X) ln 2 x INTERVAL. */
static inline uint64_t
sample_gap_of(uint64_t x, uint64_t interval)
{
	uint64_t l = (52ULL << SAMPLE_LOG_FRAC) - sample_log2(x);
	unsigned __int128 g = (unsigned __int128)interval * l * SAMPLE_LN2_Q32;
	uint32_t shift = SAMPLE_LOG_FRAC + 32u;
	uint64_t gap = (uint64_t)((g + ((unsigned __int128)1 << (shift - 1))) >>
				  shift);
	return gap ? gap : 1;
}

/* A gap to the next sample point: exponentially distributed with mean
   INTERVAL, in whole bytes, at least 1: -ln(U) x INTERVAL for U uniform
   in (0, 1] on a grid of 2^-52 (X / 2^52, X in [1, 2^52]). Unbiased to
   far below what any test can see: the logarithm is exact to 2^-24 (its
   rounding down lengthens a gap by at most 4e-8 of the interval), the
   grid cuts off the tail past 36 intervals (a probability of 2^-52), and
   the gap is rounded to the nearest byte (no systematic shift; the
   clamp to 1 byte matters only for intervals of a few bytes). */
static inline uint64_t
sample_gap(uint64_t *s, uint64_t interval)
{
	return sample_gap_of((sample_rand(s) >> 12) + 1, interval);
}

/* The sampling decision for an allocation of SIZE bytes, given the
   thread's bytes left to its next sample point *LEFT and its PRNG state
   *S: 0 when not sampled (the common path: a subtraction and a branch);
   SAMPLE_TRUE_SIZE for SIZE >= INTERVAL (recorded at its size, the
   counter untouched); else K, the sample points the allocation crossed
   (its weight K x INTERVAL), *LEFT then the distance past it to the next.

   Why the estimate is unbiased: the sample points form a Poisson process
   of rate 1/INTERVAL along each thread's stream of small allocated bytes
   (exponential gaps, memoryless, so a counter carried from call to call
   is the same process), hence the number K of points falling in an
   allocation of SIZE bytes has mean SIZE / INTERVAL, and K x INTERVAL has
   mean SIZE; a site's estimate is a sum of such terms. Big blocks are
   taken at their size, exactly. K is capped at SAMPLE_K_MAX, which a
   SIZE below INTERVAL reaches with a probability below 10^-500. */
static inline uint32_t
sample_take(int64_t *left, uint64_t *s, uint64_t interval, uint64_t size)
{
	if (size >= interval)
		return SAMPLE_TRUE_SIZE;
	int64_t l = *left - (int64_t)size;
	if (__builtin_expect(l > 0, 1)) {
		*left = l;
		return 0;
	}
	uint32_t k = 0;
	do {
		l += (int64_t)sample_gap(s, interval);
		k++;
	} while (l <= 0);
	*left = l;
	return k < SAMPLE_K_MAX ? k : SAMPLE_K_MAX;
}

/* The bytes a sampled block of SIZE bytes stands for, from its SAMPLE
   byte (1..SAMPLE_K_MAX or SAMPLE_TRUE_SIZE). */
static inline uint64_t
sample_weight(uint32_t sample, uint64_t interval, uint64_t size)
{
	return sample == SAMPLE_TRUE_SIZE ? size : (uint64_t)sample * interval;
}

/* ---- The set of sampled block addresses ----
   Open addressing over buckets of one cache line: seven keys and a spill
   word. A key is inserted in the first bucket of its chain with an empty
   slot (compare-and-swap 0 -> address); a bucket it passes full gets its
   spill word set, for good, so that a lookup goes past a bucket only
   when a key may lie beyond it. Removing a key swaps it back to 0, so
   there are no tombstones and a lookup's cost never grows with the
   blocks sampled and freed. After the buckets, one byte per bucket
   counts the keys whose home it is (at most SAMPLE_SET_CHAIN x
   SAMPLE_SET_WAYS): the free of an unsampled block, nearly every free,
   reads that byte alone, from an array 64 times smaller than the
   buckets, which stays in the cache where the buckets would miss it
   (a miss at each free was a fifth of the stub's time). Keys are never
   moved, so stubs on every thread and the tracer may insert and remove
   at once. A key is only ever looked up after its insert completed (the
   block is freed after its allocation returned). */

#define SAMPLE_SET_WAYS 7u
#define SAMPLE_SET_CHAIN 8u /* buckets a key may go past its home */

struct sample_bucket {
	uint64_t key[SAMPLE_SET_WAYS]; /* 0: empty */
	uint64_t spill;                /* a key homed here or before lies
					  further on */
};

_Static_assert(sizeof(struct sample_bucket) == 64, "one line per bucket");

/* A home is read from the hash's bits SAMPLE_SET_HASH_SHIFT and up,
   masked to the set's size: the shift is a constant, so the stub's free
   of an unsampled block needs only one more instruction (an and with the
   mask on its descriptor's line) to use a set of any size up to
   2^(64 - SAMPLE_SET_HASH_SHIFT) buckets, the largest a ring's file
   holds. A set of 2^(64 - SHIFT) buckets has SHIFT >= this. */
#define SAMPLE_SET_HASH_SHIFT 49u
#define SAMPLE_SET_SHIFT_FLOOR 55u /* the smallest set: 512 buckets */

/* The heap a sampled set is sized for: live sampled keys are about
   (heap in blocks below the interval) / interval, plus every block of at
   least the interval, whose number is at most (heap in those blocks) /
   interval; so a heap of this many bytes gives at most this / interval
   keys, whatever its mix. */
#define SAMPLE_SET_HEAP_BUDGET (4ULL << 30)

/* The shift of the set for sampling at INTERVAL (0: exact mode, the
   largest set): room for the keys of a SAMPLE_SET_HEAP_BUDGET heap at
   half the slots (a chain of SAMPLE_SET_CHAIN buckets then essentially
   never fills), in a power of two of buckets between 2^(64 -
   SAMPLE_SET_SHIFT_FLOOR) and 2^(64 - SAMPLE_SET_HASH_SHIFT). Why not
   always the largest: the free of an unsampled block reads the count
   byte at a random home, and a count table as small as the set may be
   stays in the L1 cache (4 KiB at 512 KiB, where 32 KiB did not). */
static inline uint32_t
sample_set_shift_for(uint64_t interval)
{
	if (!interval)
		return SAMPLE_SET_HASH_SHIFT;
	uint64_t slots = 2 * (SAMPLE_SET_HEAP_BUDGET / interval);
	uint32_t shift = SAMPLE_SET_SHIFT_FLOOR;
	while (shift > SAMPLE_SET_HASH_SHIFT &&
	       ((uint64_t)SAMPLE_SET_WAYS << (64 - shift)) < slots)
		shift--;
	return shift;
}

/* Bytes of a set of 2^(64 - SHIFT) buckets: the buckets, then their
   counts. */
static inline uint64_t
sample_set_bytes(uint32_t shift)
{
	return (sizeof(struct sample_bucket) + 1) << (64 - shift);
}

/* The count of keys homed in each bucket of the set B. */
static inline uint8_t *
sample_set_homed(struct sample_bucket *b, uint32_t shift)
{
	return (uint8_t *)(b + (1ULL << (64 - shift)));
}

/* The mask of a home in a set of 2^(64 - SHIFT) buckets. */
static inline uint64_t
sample_set_mask(uint32_t shift)
{
	return (~0ULL) >> shift;
}

/* ADDR's home bucket in a set of 2^(64 - SHIFT) buckets. */
static inline uint64_t
sample_set_home(uint64_t addr, uint32_t shift)
{
	return (((addr >> 4) * 0x9e3779b97f4a7c15ULL) >>
		SAMPLE_SET_HASH_SHIFT) &
	       sample_set_mask(shift);
}

/* Insert ADDR (not 0) into the set B of 2^(64 - SHIFT) buckets. Returns
   0, or -1 when its chain is full. */
static inline int
sample_set_insert(struct sample_bucket *b, uint32_t shift, uint64_t addr)
{
	uint64_t mask = sample_set_mask(shift);
	uint64_t home = sample_set_home(addr, shift), i = home;
	uint8_t *homed = sample_set_homed(b, shift);
	/* Counted first: a lookup of ADDR, which follows this insert, must
	   not stop at a count of 0. */
	__atomic_fetch_add(&homed[home], 1, __ATOMIC_ACQ_REL);
	for (uint32_t n = 0; n < SAMPLE_SET_CHAIN; n++, i = (i + 1) & mask) {
		for (uint32_t w = 0; w < SAMPLE_SET_WAYS; w++) {
			uint64_t zero = 0;
			if (__atomic_load_n(&b[i].key[w], __ATOMIC_RELAXED) ==
				    0 &&
			    __atomic_compare_exchange_n(&b[i].key[w], &zero,
							addr, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED))
				return 0;
		}
		if (!__atomic_load_n(&b[i].spill, __ATOMIC_RELAXED))
			__atomic_store_n(&b[i].spill, 1, __ATOMIC_RELEASE);
	}
	__atomic_fetch_sub(&homed[home], 1, __ATOMIC_ACQ_REL);
	return -1;
}

/* False when ADDR is surely not in the set B (2^(64 - SHIFT) buckets): no
   key has its home bucket. The whole cost of most frees. */
static inline int
sample_set_may_hold(struct sample_bucket *b, uint32_t shift, uint64_t addr)
{
	return __atomic_load_n(&sample_set_homed(b, shift)[sample_set_home(addr,
									   shift)],
			       __ATOMIC_ACQUIRE) != 0;
}

/* Remove ADDR from the set B (2^(64 - SHIFT) buckets). Returns 1 when it
   was there (this caller removed it), else 0. */
static inline int
sample_set_remove(struct sample_bucket *b, uint32_t shift, uint64_t addr)
{
	uint64_t mask = sample_set_mask(shift);
	uint64_t home = sample_set_home(addr, shift), i = home;
	uint8_t *homed = sample_set_homed(b, shift);
	if (__builtin_expect(!__atomic_load_n(&homed[home], __ATOMIC_ACQUIRE),
			     1))
		return 0;
	for (uint32_t n = 0; n < SAMPLE_SET_CHAIN; n++, i = (i + 1) & mask) {
		for (uint32_t w = 0; w < SAMPLE_SET_WAYS; w++) {
			uint64_t k = addr;
			if (__atomic_load_n(&b[i].key[w], __ATOMIC_RELAXED) ==
				    addr &&
			    __atomic_compare_exchange_n(&b[i].key[w], &k, 0, 0,
							__ATOMIC_ACQ_REL,
							__ATOMIC_RELAXED)) {
				__atomic_fetch_sub(&homed[home], 1,
						   __ATOMIC_ACQ_REL);
				return 1;
			}
		}
		if (!__atomic_load_n(&b[i].spill, __ATOMIC_ACQUIRE))
			break;
	}
	return 0;
}

#endif
