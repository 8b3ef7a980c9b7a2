/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the leak_* programs (tests/run/leak.sh), which compare
   heaptrace's leak check with real memcheck's. The blocks are allocated
   in noinline helpers, and the stack those helpers (and malloc) used is
   zeroed afterwards: memcheck counts a stale pointer left in a dead stack
   slot as undefined (it marks new stack undefined) and ignores it, while
   a scanner reading the target from outside cannot tell it from a live
   one. No stdio: its buffers would be blocks of their own. */
#ifndef HT_TESTS_RUN_LEAK_COMMON_H
#define HT_TESTS_RUN_LEAK_COMMON_H

#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define MAYBE_UNUSED __attribute__((unused))

/* Zeroes 32 KiB of stack below the caller's frame, deeper than any helper
   or allocator frame that ran there; the volatile keeps the stores. */
NOINLINE MAYBE_UNUSED static void scrub_stack(void)
{
	volatile unsigned char pad[32768];

	for (size_t i = 0; i < sizeof(pad); i++)
		pad[i] = 0;
}

/* Fills N bytes at P with a byte that makes no pointer, so that the
   block's contents are defined for memcheck and point nowhere for both. */
MAYBE_UNUSED static void fill(void *p, size_t n)
{
	memset(p, 0x5a, n);
}

/* How the program ends, from its first argument: a number is its exit
   status (0 without one); "abort" dies of SIGABRT. */
MAYBE_UNUSED static int finish(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "abort") == 0) {
		signal(SIGABRT, SIG_DFL);
		abort();
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}

#endif
