/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Rules of this process for the stubs (selfrule.h). */
#include "selfrule.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <unistd.h>

uint64_t selfrule_asked, selfrule_refused;

static struct sym_session *self;
/* The session serves one thread at a time: the drainer asks for rules
   and unwinds copies while tests may unwind too. */
static pthread_mutex_t self_lock = PTHREAD_MUTEX_INITIALIZER;

static void
lock(void)
{
	pthread_mutex_lock(&self_lock);
}

static void
unlock(void)
{
	pthread_mutex_unlock(&self_lock);
}

struct sym_session *
selfrule_session(void)
{
	if (!self)
		self = sym_session_new(getpid());
	return self;
}

static uint8_t
how(enum ht_unwind_how h)
{
	switch (h) {
	case HT_LOC_SAME:
		return RING_LOC_SAME;
	case HT_LOC_CFA:
		return RING_LOC_CFA;
	case HT_LOC_AT_CFA:
		return RING_LOC_AT_CFA;
	default:
		return RING_LOC_UNDEF;
	}
}

bool
selfrule_get(uint64_t pc, struct ring_rule *out)
{
	struct ht_unwind_rule r;
	struct sym_session *ss = selfrule_session();
	lock();
	selfrule_asked++;
	int err = ss ? sym_stub_rule_get(ss, pc, &r) : -1;
	unlock();
	if (err && err != -ENOTSUP) {
		selfrule_refused++;
		return false;
	}
	if (err) {
		/* The stubs copy at this frame; asked once. */
		selfrule_refused++;
		*out = (struct ring_rule){ .kind = RING_RULE_COPY };
		return true;
	}
	*out = (struct ring_rule){
		.kind = r.fp ? RING_RULE_FP : RING_RULE_CFI,
		.cfa_reg = r.cfa_rbp ? RING_REG_RBP : RING_REG_RSP,
		.cfa_off = r.cfa_off,
		.rsp = how(r.rsp.how),
		.rsp_off = r.rsp.off,
		.rbp = how(r.rbp.how),
		.rbp_off = r.rbp.off,
		.ra = how(r.ra.how),
		.ra_off = r.ra.off,
	};
	return true;
}

unsigned
selfrule_unwind(const struct tracer_capture *cap, uint64_t *pcs, unsigned max)
{
	struct sym_capture sc = {
		.regs = cap->regs, .stack = cap->stack, .len = cap->len,
		.stack_addr = cap->stack_addr,
	};
	lock();
	unsigned n = sym_unwind(selfrule_session(), &sc, pcs, max);
	unlock();
	return n;
}
