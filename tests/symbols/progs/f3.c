/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The innermost link of the test call chain: stops the process, which the
   driver traces, at a known place. */
#include "chain.h"

#include <signal.h>

NOINLINE void
f3(void)
{
	CALL(raise(SIGSTOP));
}
