/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library that replaces dlib.c at the same address in the swap test:
   as large, but with other code where dlib.c's call returns, and so other
   unwinding rules (built with -O2: frames on rsp, where dlib.c's, at -O0,
   are on rbp). */
#include "mark.h"

NOINLINE int spin(int n);
NOINLINE void dl_entry(void (*fn)(void));

/* Code to fill the addresses where dlib.c has dl_entry. */
NOINLINE int
spin(int n)
{
	volatile int buf[64];
	int sum = 0;

	for (int i = 0; i < 64; i++)
		buf[i] = i * n;
	for (int i = 0; i < 64; i++)
		sum += buf[(i * 7) & 63];
	return sum;
}

NOINLINE void
dl_entry(void (*fn)(void))
{
	mark_sink += spin(3);
	CALL(fn());
}
