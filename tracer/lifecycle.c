/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A traced process or thread created, forked, reset by an exec or
   dropped across every concern that keeps state in its record: the
   tables (process.c) and, above them, the instruction counters, the
   allocator stops' pending calls, the page calls, the leak check and the
   inline path. It sits above all of them so that none of them, nor the
   tables, calls another concern's teardown. */
#include "tracer/session.h"

#include <signal.h>
#include <sys/ptrace.h>

#include "common/err.h"
#include "tracer/inline/inline.h"
#include "tracer/leak/leak.h"
#include "tracer/measure/measure.h"
#include "tracer/pages/pages.h"
#include "tracer/probes/probes.h"
#include "tracer/python/python.h"
#include "tracer/target/target.h"

struct tracee *
lifecycle_thread_add(struct tracer *t, pid_t tid, struct tproc *p)
{
	struct tracee *tc = tracee_add(t, tid, p);
	perfcount_thread_start(t, tc);
	return tc;
}

void
lifecycle_thread_remove(struct tracer *t, struct tracee *tc)
{
	perfcount_thread_end(tc);
	alloc_pending_clear(tc);
	pagecalls_clear(tc);
	tracee_remove(t, tc);
}

struct tproc *
lifecycle_proc_fork(struct tracer *t, struct tproc *parent, pid_t child)
{
	struct tproc *p = proc_fork(t, parent, child);
	leakstop_fork(p, parent);
	/* The same interpreter at the same addresses; its own cache, as
	   each process now frees and reuses code objects on its own. */
	p->python = py_interp_clone(parent->python, child);
	return p;
}

void
lifecycle_proc_exec(struct tproc *p)
{
	leakstop_reset(p);
	inline_free(p);
	py_interp_free(p->python);
	p->python = NULL;
	proc_exec_reset(p);
}

void
lifecycle_proc_free(struct tracer *t, struct tproc *p)
{
	if (!p)
		return;
	leakstop_reset(p);
	inline_free(p);
	py_interp_free(p->python);
	p->python = NULL;
	proc_free(t, p);
}

void
lifecycle_release_fork_child(struct tracer *t, struct tracee *tc,
			     const struct tproc *parent, int why)
{
	struct tproc *p = tc->proc;
	/* Killing it, as heaptrace once did, changes what the program
	   does; tracing it without a ring would send its records to its
	   parent's profile. */
	ht_warn("process %d: forked child not profiled past its fork, and "
		"let go untraced: %s", (int)p->pid, ht_strerror(-why));
	int err = inline_fork_child_unpatch(parent, p, tc->tid);
	for (size_t i = 0; !err && i < p->n_probes; i++)
		err = mem_write_code(p, tc->tid, p->probes[i].addr,
				     p->probes[i].d.orig, arch_breakpoint_len);
	if (err) {
		/* Half of heaptrace's hooks would stay in it. */
		ht_error("process %d: cannot take heaptrace's hooks out (%s); "
			 "killing it", (int)p->pid, ht_strerror(-err));
		kill(p->pid, SIGKILL);
		return;
	}
	ptrace(PTRACE_DETACH, tc->tid, NULL, NULL);
	lifecycle_thread_remove(t, tc);
	if (p->n_threads == 0)
		lifecycle_proc_free(t, p);
}
