/* SPDX-License-Identifier: GPL-2.0-or-later */
/* When the leak check scans (--leak-check), and what the tracer tells it.

   memcheck scans when the program has finished: after exit_group, its
   other threads gone, its memory intact. From outside, the moment is the
   PTRACE_EVENT_EXIT stop (PTRACE_O_TRACEEXIT): the kernel stops each
   exiting thread there before it lets go of the address space. exit_group
   sends every thread there; the last of a process's threads to arrive
   finds the others past it, so it is held while the sink scans, and the
   memory is still the program's. A thread ending alone (pthread_exit)
   goes through the same stop and is let go at once: holding it would keep
   its joiner waiting.

   What memcheck's scan counts of threads follows from that order too:
   registers only of the thread alive at the end (the one that called
   exit_group, whose registers are kept at its own stop, as it need not be
   the last to arrive), and each stack from the lowest point its thread
   left it at (exited threads' stacks are kept by the C library for
   reuse, and memcheck scans them down to where their threads left them).

   An exec ends no process here: the threads exec kills go through the
   stop, but the thread that execs does not, so the count never completes
   (memcheck makes no leak check at an exec either). */
#include "tracer/leak/leak.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "tracer/inline/inline.h"

#define RECORD_WAIT_NS 2000000ULL /* a record some thread was writing */
#define MAX_OWN 64

long
leakstop_ptrace_options(const struct ht_options *opt)
{
	return opt->leak_check != HT_LEAK_CHECK_NO ? PTRACE_O_TRACEEXIT : 0;
}

void
leakstop_reset(struct tproc *p)
{
	free(p->exit_sps);
	p->exit_sps = NULL;
	p->n_exit_sps = p->cap_exit_sps = 0;
	p->n_exit_stopped = 0;
	p->have_ender_regs = false;
	p->leak_checked = false;
}

void
leakstop_fork(struct tproc *child, const struct tproc *parent)
{
	child->exit_sps = NULL; /* leakstop_reset would free the parent's */
	leakstop_reset(child);
	/* The exited threads' stacks are the child's memory too, left as
	   they were. */
	child->exit_sps = ht_xmemdup_array(parent->exit_sps,
					   parent->n_exit_sps,
					   parent->n_exit_sps,
					   sizeof(*parent->exit_sps));
	child->n_exit_sps = child->cap_exit_sps = parent->n_exit_sps;
}

static void
exit_sp_add(struct tproc *p, uint64_t sp)
{
	ht_xgrow((void **)&p->exit_sps, &p->cap_exit_sps, p->n_exit_sps + 1,
		 sizeof(*p->exit_sps));
	p->exit_sps[p->n_exit_sps++] = sp;
}

/* heaptrace's own pages in P: not the program's memory, never roots. */
static size_t
own_ranges(const struct tproc *p, struct leakroots_range *own, size_t max)
{
	size_t n = 0;
	uint64_t lo, hi;
	if (inline_ring_extent(p, &lo, &hi) && n < max)
		own[n++] = (struct leakroots_range){ lo, hi };
	for (size_t i = 0; i < p->n_scratch && n < max; i++)
		own[n++] = (struct leakroots_range){
			p->scratch[i].addr,
			p->scratch[i].addr + p->scratch[i].size,
		};
	return n;
}

/* Every call P made is reported, then the sink sees P through TID, with
   REGS (NREGS words) as its root registers and SPS its threads' stack
   pointers. */
static void
scan(struct tracer *t, struct tproc *p, pid_t tid, const uint64_t *regs,
     size_t nregs, const uint64_t *sps, size_t nsps, bool exiting)
{
	p->leak_checked = true;
	if (!t->sink->leak_check || !p->profiling)
		return;
	inline_drain(t, p, RECORD_WAIT_NS);
	struct leakroots_range own[MAX_OWN];
	struct tracer_leak_view v = {
		.tid = tid,
		.regs = regs,
		.nregs = nregs,
		.sps = sps,
		.nsps = nsps,
		.own = own,
		.nown = own_ranges(p, own, MAX_OWN),
		.exiting = exiting,
	};
	t->sink->leak_check(t->sink->ctx, p->pid, &v);
}

void
leakstop_on_exit_stop(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	uint64_t regs[LEAKROOTS_NREGS], sp = 0;
	struct user_regs_struct u;
	bool have = p && !tc->exit_stopped &&
		    leakroots_thread_regs(tc->tid, regs, &sp) == 0;

	unsigned long status = 0;
	if (p && !tc->exit_stopped) {
		tc->exit_stopped = true;
		p->n_exit_stopped++;
		/* SIGKILL ends memcheck too, before any leak check */
		if (ptrace(PTRACE_GETEVENTMSG, tc->tid, NULL, &status) == 0 &&
		    WIFSIGNALED((int)status) && WTERMSIG((int)status) == SIGKILL)
			p->leak_checked = true;
	}
	if (have) {
		exit_sp_add(p, sp);
		if (ptrace(PTRACE_GETREGS, tc->tid, NULL, &u) == 0 &&
		    u.orig_rax == SYS_exit_group) {
			memcpy(p->ender_regs, regs, sizeof(regs));
			p->have_ender_regs = true;
		}
	}
	if (p && !p->leak_checked && p->n_exit_stopped >= p->n_threads) {
		const uint64_t *root_regs = p->have_ender_regs ? p->ender_regs
					    : have ? regs : NULL;
		scan(t, p, tc->tid, root_regs,
		     root_regs ? LEAKROOTS_NREGS : 0, p->exit_sps,
		     p->n_exit_sps, true);
	}
	/* ESRCH: killed meanwhile; its end is reported next. */
	ptrace((enum __ptrace_request)t->resume_req, tc->tid, NULL, NULL);
}

void
leakstop_on_detach(struct tracer *t, struct tproc *p, pid_t tid)
{
	if (p->leak_checked || t->opt->leak_check == HT_LEAK_CHECK_NO)
		return;
	/* Every thread is alive and held: all their registers count, and
	   their stacks from where they are now. */
	size_t cap = (size_t)(p->n_threads > 0 ? p->n_threads : 1);
	uint64_t *regs = ht_xcalloc(cap * LEAKROOTS_NREGS, sizeof(*regs));
	uint64_t *sps = ht_xcalloc(cap + p->n_exit_sps, sizeof(*sps));
	size_t nthreads = 0, nsps = 0;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		uint64_t sp;
		if (tc->proc != p || tc->exit_stopped || nthreads >= cap)
			continue;
		if (leakroots_thread_regs(tc->tid, regs +
					  nthreads * LEAKROOTS_NREGS, &sp))
			continue;
		nthreads++;
		sps[nsps++] = sp;
	}
	for (size_t i = 0; i < p->n_exit_sps; i++)
		sps[nsps++] = p->exit_sps[i];
	scan(t, p, tid, regs, nthreads * LEAKROOTS_NREGS, sps, nsps, false);
	free(regs);
	free(sps);
}
