/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program for the HTML report's tests and its screenshot: three phases
   with different allocation sites (a growing list, a cache filled then
   dropped, short-lived parse buffers), a few blocks leaked, so that the
   chart has layers, the peak tree several entries and the tables every
   column filled. */
#include <stdlib.h>
#include <string.h>

struct item { struct item *next; char payload[200]; };

static struct item *list;
static char *cache[64];

__attribute__((noinline)) static void
list_grow(int n)
{
	for (int i = 0; i < n; i++) {
		struct item *it = malloc(sizeof(*it));
		memset(it, 0, sizeof(*it));
		it->next = list;
		list = it;
	}
}

__attribute__((noinline)) static void
cache_fill(void)
{
	for (int i = 0; i < 64; i++) {
		cache[i] = malloc(2048);
		memset(cache[i], i, 2048);
	}
}

__attribute__((noinline)) static void
cache_drop(void)
{
	for (int i = 0; i < 64; i++)
		free(cache[i]);
}

__attribute__((noinline)) static size_t
parse(int n)
{
	size_t sum = 0;
	for (int i = 0; i < n; i++) {
		char *buf = malloc(96);
		memset(buf, i, 96);
		sum += (unsigned char)buf[5];
		free(buf);
	}
	return sum;
}

__attribute__((noinline)) static void
leak_some(void)
{
	for (int i = 0; i < 3; i++)
		(void)!malloc(1000);
}

int
main(void)
{
	size_t sum = 0;
	for (int round = 0; round < 4; round++) {
		list_grow(150);
		cache_fill();
		sum += parse(300);
		cache_drop();
	}
	leak_some();
	while (list) {
		struct item *next = list->next;
		free(list);
		list = next;
	}
	return (int)(sum & 1);
}
