/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A leak made in a thread: the thread runs leak_in_thread, which
   allocates a 96-byte block and drops it (definitely lost, 1 block), then
   keeps a 160-byte block in a global (still reachable). main joins it.
   pthread_create allocates the thread's DTV (calloc in ld.so), which
   glibc keeps with the thread's cached stack after the join: whatever
   memcheck makes of it, heaptrace must make the same. */
#include <pthread.h>
#include <stdlib.h>

#include "leak_common.h"

void *kept_by_thread;

NOINLINE static void leak_in_thread(void)
{
	void *p = malloc(96);

	if (!p)
		exit(1);
	fill(p, 96);
}

NOINLINE static void keep_from_thread(void)
{
	kept_by_thread = malloc(160);
	if (!kept_by_thread)
		exit(1);
	fill(kept_by_thread, 160);
}

static void *worker(void *arg)
{
	leak_in_thread();
	keep_from_thread();
	scrub_stack();
	return arg;
}

int main(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, worker, NULL) != 0 ||
	    pthread_join(t, NULL) != 0)
		return 1;
	scrub_stack();
	return 0;
}
