/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Allocation that never returns NULL: heaptrace dies cleanly instead, and
   every size computation is checked for overflow. */
#ifndef HT_COMMON_XALLOC_H
#define HT_COMMON_XALLOC_H

#include <stddef.h>

/* malloc(N), dying on failure; ht_xmalloc(0) returns a unique pointer. */
void *ht_xmalloc(size_t n);
/* calloc(NMEMB, SIZE), dying on failure or overflow. */
void *ht_xcalloc(size_t nmemb, size_t size);
/* realloc(P, NMEMB * SIZE), dying on failure or overflow. */
void *ht_xreallocarray(void *p, size_t nmemb, size_t size);
/* strdup(S), dying on failure. */
char *ht_xstrdup(const char *s);
/* strndup(S, N), dying on failure. */
char *ht_xstrndup(const char *s, size_t n);
/* A malloc'd string formatted like printf, dying on failure. */
char *ht_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A new array with room for CAP (>= N) elements of SIZE bytes, holding a
   copy of the first N elements of SRC. */
void *ht_xmemdup_array(const void *src, size_t n, size_t cap, size_t size);

/* Grow *ARRAY (of *CAP elements of SIZE bytes) so that it holds at least
   NEED elements; doubles to keep appends amortised O(1). */
void ht_xgrow(void **array, size_t *cap, size_t need, size_t size);

#endif
