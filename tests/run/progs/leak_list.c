/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A singly linked list of 10 nodes of 32 bytes made by make_list, whose
   head pointer is dropped: the head is definitely lost (32 bytes in 1
   block), the 9 nodes behind it indirectly lost (288 bytes in 9 blocks).
   Nothing else is allocated. argv[1]: the exit status, or "abort" (see
   leak_common.h). Built dynamically (leak_list) and statically
   (leak_list_static): memcheck sees nothing in the static one, whose
   figures must be those of the dynamic one. */
#include <stdlib.h>

#include "leak_common.h"

#define NODES 10

struct node {
	struct node *next;
	long value;
	long spare[2]; /* 32 bytes: a multiple of 16 (see leak_oddsize.c) */
};

NOINLINE static struct node *make_list(int n)
{
	struct node *head = NULL;

	for (int i = 0; i < n; i++) {
		struct node *nd = malloc(sizeof(*nd));

		if (!nd)
			exit(1);
		fill(nd, sizeof(*nd));
		nd->next = head;
		nd->value = i;
		head = nd;
	}
	return head;
}

NOINLINE static void lose_list(void)
{
	struct node *head = make_list(NODES);

	head = NULL;
	(void)head;
}

int main(int argc, char **argv)
{
	lose_list();
	scrub_stack();
	return finish(argc, argv);
}
