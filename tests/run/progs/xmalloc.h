/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allocfn program's allocator wrappers, in their own file so that no
   call to them can be inlined. */
#ifndef HT_TESTS_RUN_XMALLOC_H
#define HT_TESTS_RUN_XMALLOC_H

#include <stddef.h>

#define NOINLINE __attribute__((noinline))

/* malloc that never returns NULL: the function named by --alloc-fn. */
NOINLINE void *my_xmalloc(size_t n);
/* my_xmalloc plus clearing: not an alloc-fn, so it stays in the trees
   above the stripped my_xmalloc. */
NOINLINE void *my_xzalloc(size_t n);

#endif
