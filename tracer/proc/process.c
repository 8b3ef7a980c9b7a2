/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tables of traced processes and threads: their records created,
   copied for a fork, reset for an exec and freed, with the memory the
   records own. Records are allocated individually so pointers to them stay
   valid while the tables grow. What each concern keeps in a record beyond
   that (counters, pending calls, rings, the leak check's stacks) is
   created and dropped by lifecycle.c, above every concern: the tables
   call none of them. */
#include "tracer/proc/proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	p->ordinal = t->n_procs_made++;
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
	p->ordinal = t->n_procs_made++;
	p->n_threads_seen = 0;
	/* The child's blocks are its parent's, sampled ones too. */
	if (parent->sampled)
		p->sampled = ht_xmemdup_array(parent->sampled,
					      1ULL << (64 - parent->sampled_shift),
					      1ULL << (64 - parent->sampled_shift),
					      SAMPLED_BUCKET_BYTES + 1);
	p->mem_fd = open_mem(child);
	p->probes = ht_xmemdup_array(parent->probes, parent->n_probes,
			      parent->cap_probes, sizeof(*p->probes));
	p->scratch = ht_xmemdup_array(parent->scratch, parent->n_scratch,
			       parent->cap_scratch, sizeof(*p->scratch));
	u64map_copy(&p->probe_at, &parent->probe_at);
	u64map_copy(&p->objects_seen, &parent->objects_seen);
	p->n_threads = 0;
	p->exit_sps = NULL; /* the parent's: leakstop_fork copies them */
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
	free(p->sampled); /* the new image's blocks are all new */
	p->sampled = NULL;
	p->sampled_full = 0;
	memset(p->freeres, 0, sizeof(p->freeres));
	memset(p->bound, 0, sizeof(p->bound));
	p->exit_bound = false;
	p->setup_done = false;
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
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	free(p->probes);
	free(p->scratch);
	free(p->sampled);
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
	tc->insn_fd = -1; /* no counter until perfcount_thread_start */
	if (p)
		p->n_threads++;
	u64map_put(&t->tracees, (uint64_t)tid, (uint64_t)(uintptr_t)tc);
	return tc;
}

void
tracee_remove(struct tracer *t, struct tracee *tc)
{
	u64map_remove(&t->tracees, (uint64_t)tc->tid, NULL);
	if (tc->proc) {
		tc->proc->n_threads--;
		if (tc->exit_stopped)
			tc->proc->n_exit_stopped--;
	}
	free(tc->pending);
	free(tc);
}
