/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tables of traced processes and threads, with one owner and one
   teardown each. Records are allocated individually so pointers to them
   stay valid while the tables grow. */
#include "tracer_priv.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"

static int
open_mem(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return open(path, O_RDWR | O_CLOEXEC);
}

struct tproc *
proc_new(struct tracer *t, pid_t pid)
{
	struct tproc *p = ht_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->mem_fd = open_mem(pid);
	u64map_init(&p->probe_at);
	u64map_init(&p->objects_seen);
	u64map_put(&t->procs, (uint64_t)pid, (uint64_t)(uintptr_t)p);
	return p;
}

struct tproc *
proc_fork(struct tracer *t, struct tproc *parent, pid_t child)
{
	struct tproc *p = ht_xmalloc(sizeof(*p));
	*p = *parent;
	p->pid = child;
	p->mem_fd = open_mem(child);
	p->probes = ht_xmemdup_array(parent->probes, parent->n_probes,
			      parent->cap_probes, sizeof(*p->probes));
	p->scratch = ht_xmemdup_array(parent->scratch, parent->n_scratch,
			       parent->cap_scratch, sizeof(*p->scratch));
	u64map_copy(&p->probe_at, &parent->probe_at);
	u64map_copy(&p->objects_seen, &parent->objects_seen);
	p->n_threads = 0;
	p->exit_sps = NULL; /* leakstop_reset would free the parent's */
	leakstop_reset(p);
	/* The exited threads' stacks are the child's memory too, left as
	   they were. */
	p->exit_sps = ht_xmemdup_array(parent->exit_sps, parent->n_exit_sps,
				       parent->n_exit_sps,
				       sizeof(*parent->exit_sps));
	p->n_exit_sps = p->cap_exit_sps = parent->n_exit_sps;
	p->profiling = false;
	p->inl = NULL; /* its ring is made at its first stop */
	p->detaching = false;
	u64map_put(&t->procs, (uint64_t)child, (uint64_t)(uintptr_t)p);
	return p;
}

void
proc_exec_reset(struct tproc *p)
{
	/* The new image has none of the old probes, pages or objects. */
	free(p->probes);
	free(p->scratch);
	u64map_fini(&p->probe_at);
	u64map_fini(&p->objects_seen);
	p->probes = NULL;
	p->scratch = NULL;
	p->n_probes = p->cap_probes = p->n_scratch = p->cap_scratch = 0;
	u64map_init(&p->probe_at);
	u64map_init(&p->objects_seen);
	p->tramp = p->call_tramp = p->syscall_insn = p->r_debug = 0;
	p->inject_routine = 0;
	p->inject_slack = false;
	memset(p->freeres, 0, sizeof(p->freeres));
	memset(p->bound, 0, sizeof(p->bound));
	p->exit_bound = false;
	p->setup_done = false;
	leakstop_reset(p);
	inline_free(p);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	p->mem_fd = open_mem(p->pid);
}

void
proc_free(struct tracer *t, struct tproc *p)
{
	if (!p)
		return;
	u64map_remove(&t->procs, (uint64_t)p->pid, NULL);
	leakstop_reset(p);
	inline_free(p);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	free(p->probes);
	free(p->scratch);
	u64map_fini(&p->probe_at);
	u64map_fini(&p->objects_seen);
	free(p);
}

struct tracee *
tracee_get(struct tracer *t, pid_t tid)
{
	uint64_t *v = u64map_get(&t->tracees, (uint64_t)tid);
	return v ? (struct tracee *)(uintptr_t)*v : NULL;
}

struct tracee *
tracee_add(struct tracer *t, pid_t tid, struct tproc *p)
{
	struct tracee *tc = ht_xcalloc(1, sizeof(*tc));
	tc->tid = tid;
	tc->proc = p;
	if (p)
		p->n_threads++;
	perfcount_thread_start(t, tc);
	u64map_put(&t->tracees, (uint64_t)tid, (uint64_t)(uintptr_t)tc);
	return tc;
}

void
tracee_remove(struct tracer *t, struct tracee *tc)
{
	u64map_remove(&t->tracees, (uint64_t)tc->tid, NULL);
	perfcount_thread_end(tc);
	if (tc->proc) {
		tc->proc->n_threads--;
		if (tc->exit_stopped)
			tc->proc->n_exit_stopped--;
	}
	alloc_pending_clear(tc);
	pagecalls_clear(tc);
	free(tc->pending);
	free(tc);
}

uint64_t
tracer_now_ms(const struct tracer *t)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t ms = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
	return ms - t->t0_ms;
}
