/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The other compilation unit of test xcu-lto: small functions that link-time
   optimisation inlines into xcu_main.c's, so that the inlined instances (in
   the link-time unit) name their abstract origins in this file's unit. */
#include "xcu.h"

#include <stdlib.h>
#include <string.h>

char *
lib_dup(const char *s, size_t extra)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n + extra);

	if (p)
		memcpy(p, s, n);
	return p;
}

void *
lib_table(size_t n)
{
	return calloc(n, sizeof(long));
}
