/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A block grown by realloc and lost: grow_buffer mallocs 16 bytes and
   reallocs them to 32, 64, ... 1024 bytes (the old blocks freed on the
   way, or grown in place: either way one live block), then drops it:
   1024 bytes in 1 block definitely lost, allocated by realloc. */
#include <stdlib.h>

#include "leak_common.h"

NOINLINE static void grow_buffer(void)
{
	size_t n = 16;
	char *p = malloc(n);

	if (!p)
		exit(1);
	fill(p, n);
	while (n < 1024) {
		char *q = realloc(p, 2 * n);

		if (!q)
			exit(1);
		p = q;
		fill(p + n, n);
		n *= 2;
	}
}

int main(void)
{
	grow_buffer();
	scrub_stack();
	return 0;
}
