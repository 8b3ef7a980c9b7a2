/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --stacks=yes: a thread's stack size, sampled. Massif sees every move of
   the stack pointer (Valgrind instruments them); a tracer outside the
   process sees the stack pointer only where the thread stops or records,
   so heaptrace samples it at each of the thread's events, just before the
   event: the size Massif would have at that moment, without the moves in
   between. The size is the top of the mapping holding the stack pointer
   minus the stack pointer; the engine takes a thread's first sample as its
   base line, as Massif takes the stack at start-up as empty. */
#include "tracer/measure/measure.h"

#include "tracer/target/target.h"

struct stack_find {
	uint64_t sp;
	struct stack_bounds *b;
};

static int
holds_sp(void *arg, const struct mapping *m)
{
	struct stack_find *f = arg;
	if (f->sp < m->lo || f->sp >= m->hi)
		return 0;
	f->b->lo = m->lo;
	f->b->hi = m->hi;
	return 1;
}

/* TC's stack top for SP: the cached mapping while SP stays in it (a main
   stack grown below it, a switched stack, are looked up again). */
static uint64_t
stack_top(struct tracee *tc, uint64_t sp)
{
	struct stack_bounds *b = &tc->stack;
	if (sp >= b->lo && sp < b->hi)
		return b->hi;
	struct stack_find f = { .sp = sp, .b = b };
	b->lo = b->hi = 0;
	maps_foreach(tc->proc->pid, holds_sp, &f);
	/* No mapping holds it: a size of 0 rather than an invented one. */
	return b->hi ? b->hi : sp;
}

void
stacksample_report(struct tracer *t, struct tracee *tc, uint64_t sp,
	      uint64_t time)
{
	if (!t->opt->stacks || !tc->proc || !tc->proc->profiling)
		return;
	uint64_t size = stack_top(tc, sp) - sp;
	if (tc->stack.last == size + 1)
		return;
	tc->stack.last = size + 1;
	struct ht_event ev = {
		.kind = HT_EV_STACK, .size = size, .tid = (uint32_t)tc->tid,
		.time = time,
	};
	t->sink->event(t->sink->ctx, tc->proc->pid, &ev);
}
