/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library dlmain.c loads: a frame between main and the stop that lives
   in a module mapped after the process started. mark() comes from the
   executable, which exports its symbols. */
#include "mark.h"

NOINLINE void dl_entry(void (*fn)(void));

NOINLINE void
dl_entry(void (*fn)(void))
{
	CALL(fn());
}
