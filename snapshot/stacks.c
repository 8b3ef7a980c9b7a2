/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --stacks=yes (massif-semantics.md §7.1): the bytes of every thread's
   stack, from samples of its size. Massif sees every stack pointer move;
   we see samples, and apply Massif's rule to the change between two
   samples: growth by L adds L to S and to B-time and attempts a snapshot;
   a shrink by L checks for a peak first, then takes L off S, adds L to
   B-time and attempts a snapshot. Stacks are not in the tree. The
   counters and snapshots are the engine's, reached through its hooks. */
#include "snap_priv.h"

#include <stdlib.h>

#include "common/xalloc.h"

void
stack_table_copy(struct stack_table *dst, const struct stack_table *src)
{
	dst->v = ht_xmemdup_array(src->v, src->n, src->n, sizeof(*src->v));
	dst->n = dst->cap = src->n;
}

/* The entry of TID, or NULL. Threads are few next to events: a linear
   search over a small array is the fastest index. */
static struct thread_stack *
thread_of(struct stack_table *t, uint32_t tid)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].tid == tid)
			return &t->v[i];
	return NULL;
}

/* Move thread TS's share of S to COUNTED by Massif's rule. */
static void
set_counted(const struct engine_hooks *eng, struct thread_stack *ts,
	    uint64_t counted)
{
	if (counted > ts->counted) {
		uint64_t l = counted - ts->counted;
		engine_account_stacks(eng, (int64_t)l);
		ts->counted = counted;
		engine_attempt_normal(eng);
	} else if (counted < ts->counted) {
		uint64_t l = ts->counted - counted;
		engine_attempt_peak(eng);
		engine_account_stacks(eng, -(int64_t)l);
		ts->counted = counted;
		engine_attempt_normal(eng);
	}
}

/* A thread's first sample is its base line, counted as zero: Massif
   takes the main stack as empty when it starts watching, and a new
   thread's stack as empty when the thread starts. Before the start-up
   snapshot Massif counts no stack change, so samples then only move the
   base. A stack smaller than its base counts as empty (Massif would
   wrap its counter below zero; stacks do not shrink past their start). */
void
stacks_sample(struct stack_table *t, uint32_t tid, uint64_t size,
	      bool started, const struct engine_hooks *eng)
{
	struct thread_stack *ts = thread_of(t, tid);
	if (!ts) {
		ht_xgrow((void **)&t->v, &t->cap, t->n + 1, sizeof(*t->v));
		ts = &t->v[t->n++];
		*ts = (struct thread_stack){ .tid = tid, .base = size };
		return;
	}
	if (!started) {
		ts->base = size;
		return;
	}
	set_counted(eng, ts, size > ts->base ? size - ts->base : 0);
}

/* The thread's stack is released as one shrink to nothing, and its
   entry forgotten (the kernel may reuse its id for a new thread, whose
   first sample is a new base line). */
void
stacks_thread_exit(struct stack_table *t, uint32_t tid,
		   const struct engine_hooks *eng)
{
	struct thread_stack *ts = thread_of(t, tid);
	if (!ts)
		return;
	set_counted(eng, ts, 0);
	*ts = t->v[--t->n];
}
