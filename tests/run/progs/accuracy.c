/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A known heap for the accuracy of sampled profiling
   (tests/run/accuracy.sh, bench/accuracy.sh), each site one call of malloc
   in a function of its own, no stdio (its buffers would be sites too):
     churn_block (called by churn): 2^30 bytes (1 GiB) in 1,124,091 mallocs of mixed sizes
               (16 B to 4 KiB plus 0-96 odd bytes, from a fixed
               xorshift sequence), at most 32 live at a time, all freed
               before anything else is allocated;
     hold_128: 128 blocks of 1 MiB (134,217,728 B);
     hold_64:  64 blocks of 1 MiB (67,108,864 B);
     hold_32:  32 blocks of 1 MiB (33,554,432 B);
     hold_16:  65,536 blocks of 256 B (16,777,216 B).
   The four hold_ sites are allocated with no free in between, then freed:
   the first of those frees is the peak, 251,658,240 B, whatever the
   --peak-inaccuracy, and churn holds nothing at it. Blocks of 1 MiB are
   larger than a 64 KiB sampling interval: a sampled profile records them
   at their true size, so those three sites are exact under it; hold_16
   and churn are estimated. Only the first byte of each block is written,
   so the program's resident memory stays small (the 1 MiB blocks are
   mapped, not touched). */
#include <stdint.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define MIB ((size_t)1 << 20)
#define CHURN_BYTES ((uint64_t)1 << 30)
#define CHURN_LIVE 32

static void *held_128[128];
static void *held_64[64];
static void *held_32[32];
static void *held_16[65536];

static uint64_t
next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void *
checked(void *p)
{
	if (!p)
		exit(1);
	*(volatile char *)p = 1;
	return p;
}

NOINLINE static void *
churn_block(size_t size)
{
	return checked(malloc(size));
}

/* Short-lived blocks: each freed CHURN_LIVE allocations after it was
   made, the last size cut so that the total is exactly CHURN_BYTES. */
NOINLINE static void
churn(void)
{
	void *live[CHURN_LIVE] = { 0 };
	uint64_t seed = 0x2545f4914f6cdd1dULL, done = 0;

	for (unsigned i = 0; done < CHURN_BYTES; i++) {
		uint64_t r = next_random(&seed);
		uint64_t size = ((uint64_t)16 << (r % 9)) + (r >> 16) % 97;

		if (size > CHURN_BYTES - done)
			size = CHURN_BYTES - done;
		free(live[i % CHURN_LIVE]);
		live[i % CHURN_LIVE] = churn_block(size);
		done += size;
	}
	for (unsigned i = 0; i < CHURN_LIVE; i++)
		free(live[i]);
}

NOINLINE static void
hold_128(void)
{
	for (size_t i = 0; i < 128; i++)
		held_128[i] = checked(malloc(MIB));
}

NOINLINE static void
hold_64(void)
{
	for (size_t i = 0; i < 64; i++)
		held_64[i] = checked(malloc(MIB));
}

NOINLINE static void
hold_32(void)
{
	for (size_t i = 0; i < 32; i++)
		held_32[i] = checked(malloc(MIB));
}

NOINLINE static void
hold_16(void)
{
	for (size_t i = 0; i < 65536; i++)
		held_16[i] = checked(malloc(256));
}

static void
free_all(void **blocks, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(blocks[i]);
}

int
main(void)
{
	churn();
	hold_128();
	hold_64();
	hold_32();
	hold_16();
	free_all(held_128, 128);
	free_all(held_64, 64);
	free_all(held_32, 32);
	free_all(held_16, 65536);
	return 0;
}
