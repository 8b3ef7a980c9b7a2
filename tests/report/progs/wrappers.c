/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program with its own allocation wrapper, built without debug info
   (tests/report names.sh, tests/html html.sh): xmalloc is called by
   load, nodes, names and scratch; read_config calls malloc itself, from
   main only. At the peak load holds N * 400 bytes, nodes N * 48, names
   N * 24 (and N pointers). Usage: wrappers [N], N 20000 by default. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	char pad[40];
};

__attribute__((noinline)) static void *
xmalloc(size_t n)
{
	void *p = malloc(n);
	if (!p) {
		fputs("wrappers: out of memory\n", stderr);
		exit(1);
	}
	memset(p, 0, n);
	return p;
}

__attribute__((noinline)) static char *
load(size_t n)
{
	return xmalloc(n * 400);
}

__attribute__((noinline)) static struct node *
nodes(size_t n)
{
	struct node *head = NULL;
	for (size_t i = 0; i < n; i++) {
		struct node *nd = xmalloc(sizeof(*nd));
		nd->next = head;
		head = nd;
	}
	return head;
}

__attribute__((noinline)) static char **
names(size_t n)
{
	char **v = xmalloc(n * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i] = xmalloc(24);
		snprintf(v[i], 24, "name %u", (unsigned)(i % 100000));
	}
	return v;
}

__attribute__((noinline)) static void
scratch(void)
{
	for (int i = 0; i < 100; i++)
		free(xmalloc(1000));
}

__attribute__((noinline)) static char *
read_config(void)
{
	char *c = malloc(4096);
	if (c)
		memset(c, 'c', 4096);
	return c;
}

int
main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20000;
	char *config = read_config();
	char *table = load(n);
	struct node *list = nodes(n);
	char **v = names(n);
	scratch();
	printf("%zu %c %c %s\n", n, config[0], table[0] + 'a',
	       list && v ? v[n - 1] : "-");
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
	while (list) {
		struct node *next = list->next;
		free(list);
		list = next;
	}
	free(table);
	free(config);
	return 0;
}
