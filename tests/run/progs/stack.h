/* SPDX-License-Identifier: GPL-2.0-or-later */
/* f0..f3 of the stack programs, one per file so that no call can be inlined
   or turned into a jump: f3 calls f2 calls f1 calls f0 calls malloc. */
#ifndef HT_TESTS_RUN_STACK_H
#define HT_TESTS_RUN_STACK_H

#include <stddef.h>

#define NOINLINE __attribute__((noinline))

NOINLINE void *f0(size_t n);
NOINLINE void *f1(size_t n);
NOINLINE void *f2(size_t n);
NOINLINE void *f3(size_t n);

#endif
