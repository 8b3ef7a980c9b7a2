/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One link of the test call chain main -> f0 -> f1 -> f2 -> f3, each in its
   own file so that no optimiser merges them. */
#include "chain.h"

NOINLINE void
f1(void)
{
	CALL(f2());
}
