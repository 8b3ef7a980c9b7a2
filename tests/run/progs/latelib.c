/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The library attach_cmds.c dlopens once heaptrace is attached
   (tests/run/attach.sh, late-threads-dlopen): its function must be named
   in the profile, holding exactly the 5000 bytes it keeps. */
#include <stdlib.h>
#include <string.h>

int latelib_keep(void);

static void *kept;

__attribute__((noinline)) int
latelib_keep(void)
{
	kept = malloc(5000);
	if (!kept)
		return 0;
	memset(kept, 0x5a, 5000);
	return 5000;
}
