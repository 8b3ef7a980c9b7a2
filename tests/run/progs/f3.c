/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One level of the stack programs' call chain (stack.h). */
#include <stdlib.h>

#include "stack.h"

NOINLINE void *f3(size_t n)
{
	void *p = f2(n);

	/* Not a tail call: the frame stays on the stack during the call. */
	return p;
}
