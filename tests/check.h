/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the unit tests share: a CHECK that counts failures instead of
   stopping at the first, and the exit codes meson reads (0 pass, 1 fail,
   77 skip, 99 harness error). */
#ifndef HT_TESTS_CHECK_H
#define HT_TESTS_CHECK_H

#include <stdio.h>

#define EXIT_SKIP 77
#define EXIT_HARNESS 99

static int failures;

#define CHECK(cond, ...)                                                    \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__,  \
				#cond);                                     \
			fprintf(stderr, __VA_ARGS__);                       \
			fputc('\n', stderr);                                \
			failures++;                                         \
		}                                                           \
	} while (0)

#endif
