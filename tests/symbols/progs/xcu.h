/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What xcu_lib.c offers xcu_main.c (test xcu-lto). */
#ifndef HT_TESTS_SYMBOLS_XCU_H
#define HT_TESTS_SYMBOLS_XCU_H

#include <stddef.h>

char *lib_dup(const char *s, size_t extra);
void *lib_table(size_t n);
/* named.S: malloc(N * 3), in a file its line table names "sub/named.c". */
void *named_alloc(size_t n);

#endif
