/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wait statuses collected out of turn. Stopping every thread of a process
   (stopall.c) reaps, while it waits for its own interrupt stops, whatever
   else the threads report: signals, exits, clone/fork/exec events,
   group-stops, stops of other processes. Those belong to the event loop;
   they are kept here, in the order waitpid gave them, and the loop takes
   them before it calls waitpid again, so it sees every event once and in
   order. */
#include "tracer/proc/proc.h"

#include <stdlib.h>

#include "common/xalloc.h"

void
waitq_push(struct tracer *t, pid_t tid, int status)
{
	struct waitq *q = &t->waitq;
	ht_xgrow((void **)&q->items, &q->cap, q->n + 1, sizeof(*q->items));
	q->items[q->n++] = (struct waitq_item){ .tid = tid, .status = status };
}

bool
waitq_pop(struct tracer *t, pid_t *tid, int *status)
{
	struct waitq *q = &t->waitq;
	if (q->head == q->n)
		return false;
	*tid = q->items[q->head].tid;
	*status = q->items[q->head].status;
	if (++q->head == q->n)
		q->head = q->n = 0; /* empty: start over at the front */
	return true;
}

bool
waitq_holds(const struct tracer *t, pid_t tid)
{
	const struct waitq *q = &t->waitq;
	for (size_t i = q->head; i < q->n; i++)
		if (q->items[i].tid == tid)
			return true;
	return false;
}

bool
waitq_empty(const struct tracer *t)
{
	return t->waitq.head == t->waitq.n;
}

void
waitq_free(struct tracer *t)
{
	free(t->waitq.items);
	t->waitq = (struct waitq){ 0 };
}
