/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One link of the test call chain main -> f0 -> f1 -> f2 -> f3, each in its
   own file so that no optimiser merges them. */
#include "chain.h"

NOINLINE void
f2(void)
{
	CALL(f3());
}

/* A second, longer name for the same code: Massif names a function by the
   shortest of its aliases, and so must the session. */
void f2_longer_alias(void) __attribute__((alias("f2")));
