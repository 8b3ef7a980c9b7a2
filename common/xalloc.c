/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Dying allocators; see xalloc.h. */
#include "xalloc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static void *
checked(void *p)
{
	if (!p)
		ht_die(1, "out of memory");
	return p;
}

void *
ht_xmalloc(size_t n)
{
	return checked(malloc(n ? n : 1));
}

void *
ht_xcalloc(size_t nmemb, size_t size)
{
	if (nmemb == 0 || size == 0)
		nmemb = size = 1;
	return checked(calloc(nmemb, size));
}

void *
ht_xreallocarray(void *p, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		ht_die(1, "out of memory (size overflow)");
	size_t n = nmemb * size;
	return checked(realloc(p, n ? n : 1));
}

char *
ht_xstrdup(const char *s)
{
	return checked(strdup(s));
}

char *
ht_xstrndup(const char *s, size_t n)
{
	return checked(strndup(s, n));
}

char *
ht_xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0)
		ht_die(1, "out of memory");
	return s;
}

void *
ht_xmemdup_array(const void *src, size_t n, size_t cap, size_t size)
{
	void *dst = ht_xreallocarray(NULL, cap > n ? cap : n, size);
	if (n)
		memcpy(dst, src, n * size);
	return dst;
}

void
ht_xgrow(void **array, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return;
	size_t n = *cap ? *cap : 8;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			ht_die(1, "out of memory (size overflow)");
		n *= 2;
	}
	*array = ht_xreallocarray(*array, n, size);
	*cap = n;
}
