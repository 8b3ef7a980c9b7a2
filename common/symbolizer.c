/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Facts about frame names shared by the symbolizers and the stack filter. */
#include "symbolizer.h"

#include <string.h>

static bool
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool
ht_is_below_main(const char *name)
{
	return strcmp(name, "__libc_start_main") == 0 ||
	       strcmp(name, "__libc_start_call_main") == 0 ||
	       strcmp(name, "generic_start_main") == 0 ||
	       strcmp(name, "_start") == 0 ||
	       has_prefix(name, "__libc_start_main.") ||
	       has_prefix(name, "generic_start_main.");
}
