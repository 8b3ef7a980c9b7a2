/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Built with -O2: inner() is inlined into outer(), outer() into host(), so
   the address after the call to raise() prints as a chain of three. */
#include "mark.h"

#include <signal.h>

static inline __attribute__((always_inline)) void
inner(void)
{
	CALL(raise(SIGSTOP));
}

static inline __attribute__((always_inline)) void
outer(void)
{
	CALL(inner());
}

NOINLINE void host(void);

NOINLINE void
host(void)
{
	CALL(outer());
}

int
main(void)
{
	CALL(host());
	return 0;
}
