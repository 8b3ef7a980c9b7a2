/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Still reachable blocks, no leak: a 192-byte block in a global that
   points at a 64-byte block, and a 320-byte block in a static local of
   get_cache. memcheck: still reachable 576 bytes in 3 blocks, nothing
   lost, no error. */
#include <stdlib.h>

#include "leak_common.h"

void **global_table;

NOINLINE static void *get_cache(void)
{
	static void *cache;

	if (!cache) {
		cache = malloc(320);
		if (!cache)
			exit(1);
		fill(cache, 320);
	}
	return cache;
}

NOINLINE static void make_table(void)
{
	global_table = malloc(192);
	if (!global_table)
		exit(1);
	fill(global_table, 192);
	global_table[0] = malloc(64);
	if (!global_table[0])
		exit(1);
	fill(global_table[0], 64);
}

int main(void)
{
	make_table();
	(void)get_cache();
	scrub_stack();
	return 0;
}
