/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "blocks.h"

#include <stdlib.h>

int blocks_hold(int n, int size)
{
	void *b[16];
	int ok = n <= 16;

	for (int i = 0; ok && i < n; i++)
		ok = (b[i] = malloc((size_t)size)) != NULL;
	for (int i = 0; i < n && i < 16; i++)
		free(ok ? b[i] : NULL);
	return ok ? 0 : 1;
}
