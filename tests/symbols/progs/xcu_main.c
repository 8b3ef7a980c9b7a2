/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test xcu-lto: built with xcu_lib.c and -flto, the calls below to
   xcu_lib.c's functions are inlined here, into a unit other than the one
   holding those functions' abstract origins. Massif names such an inlined
   frame "UnknownInlinedFun" (its reader does not follow a reference into
   another unit), at the right file and line. named_alloc() (named.S) is
   described by a line table whose file name carries directories:
   "sub/named.c", which Massif prints whole. The expected labels, worked
   out with Valgrind 3.19's Massif: ../xcu-lto.labels. */
#include "xcu.h"

#include <stdlib.h>

volatile size_t xcu_sink;

__attribute__((noinline)) static void *
make(int i)
{
	return lib_dup("a string to copy", (size_t)i * 100);
}

int
main(void)
{
	void *keep[8];
	void *t, *u;

	for (int i = 0; i < 8; i++)
		keep[i] = make(i);
	t = lib_table(500);
	u = named_alloc(700);
	xcu_sink = (size_t)keep[7] + (size_t)t + (size_t)u;
	for (int i = 0; i < 8; i++)
		free(keep[i]);
	free(t);
	free(u);
	return 0;
}
