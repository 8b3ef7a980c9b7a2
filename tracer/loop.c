/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The event loop: one waitpid for every thread of every traced process,
   each stop classified, handled, and the thread resumed exactly as it would
   have run without us (signals passed on, group-stops kept, exit statuses
   reported). */
#include "tracer/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"
#include "tracer/inline/inline.h"
#include "tracer/leak/leak.h"
#include "tracer/measure/measure.h"
#include "tracer/pages/pages.h"
#include "tracer/probes/probes.h"
#include "tracer/python/python.h"

#define RECORD_WAIT_NS 2000000ULL /* for a thread finishing a record */
#define UNPOLLED_WAIT_US 100000 /* a wait SIGCHLD ends: only a safety net */
/* While records came less than SPIN_WINDOW_NS ago the loop spins instead
   of sleeping (spin_wait), draining every SPIN_SLICE_NS, or as soon as
   SPIN_BATCH bytes wait, a doorbell rings or a thread stops. */
#define SPIN_WINDOW_NS 1000000ULL
#define SPIN_SLICE_NS 20000ULL
#define SPIN_BATCH 4096
#define SPIN_CHECK 64 /* pauses between looks at the clock and the rings */
/* A sampled ring that stands for this many bytes allocated (spin_wants)
   fills in no less than 25 ms at 10 GB/s: the loop may sleep 20 ms. */
#define SAMPLED_RING_SPAN (1ULL << 28)
#define RECORD_BYTES_TYPICAL 256 /* cc1's average: 140 bytes */

/* Allocator calls matter: the heap is profiled, or stack sizes are
   sampled at them. With --pages-as-heap=yes Massif does not intercept
   malloc at all, and neither does heaptrace: page calls only. */
static bool
allocator_probed(const struct ht_options *opt)
{
	return !opt->pages_as_heap && (opt->heap || opt->stacks);
}

/* How P's allocator calls (or page calls) are caught, for the summary
   line. */
static const char *
backend_name(const struct tracer *t, const struct tproc *p)
{
	if (t->opt->pages_as_heap && inline_active(p))
		return "inline";
	if (t->opt->pages_as_heap)
		return t->attached ? "ptrace syscall stops"
				   : "seccomp syscall stops";
	if (!allocator_probed(t->opt))
		return "no allocator probes";
	if (!inline_active(p)) /* none planted: the set-up failed, said */
		return p->n_probes ? "ptrace breakpoints" : "no allocator probes";
	return p->n_probes > 1 ? "inline, some ptrace breakpoints" : "inline";
}

/* PTRACE_CONT, or PTRACE_SYSCALL when an attached session watches page
   calls (attach.c): every resume of the session is the same request. */
static void
resume(struct tracer *t, struct tracee *tc, int sig)
{
	/* ESRCH: the thread died meanwhile; its exit is reported next. */
	ptrace((enum __ptrace_request)t->resume_req, tc->tid, NULL,
	       (void *)(uintptr_t)sig);
}

static void
set_regs_and_resume(struct tracer *t, struct tracee *tc,
		    struct user_regs_struct *regs)
{
	if (ptrace(PTRACE_SETREGS, tc->tid, NULL, regs) == 0)
		resume(t, tc, 0);
}

/* ---- Exec wrappers (--follow-exec) ----

   `heaptrace run python3 x.py`, python3 being a shim (a script that execs
   the real interpreter, maybe through env, bash and more scripts): the
   profile wanted is the interpreter's. The rule: a process whose heap
   (bytes requested and not yet freed, as Massif's mem_heap_B counts them,
   its parent's blocks included for a fork) never reached WRAPPER_HEAP_MAX
   since its program started, and that had no snapshot taken on demand,
   is a wrapper when it execs: the exec is followed whatever
   --trace-children says, the wrapper's profile is dropped unwritten (the
   new program's replaces it: same pid, same file name), and the new
   program is profiled. A process that did more keeps Massif's rule
   (--trace-children). Scripts fork helpers too (command substitutions,
   pipelines): a process forked by a program reached through a wrapper's
   exec, while that program is still below the limit, is traced but not
   profiled (so are its own children); it gets a profile only when
   --trace-children=yes follows an exec of it. Not with --pages-as-heap
   (no heap is measured), nor for attach (what ran before is unseen).

   --follow-exec=work (the default) follows every other exec too: make's
   cc1 and ld, git's pack-objects; not those of a shim's helpers (forked
   behind a wrapper in the target's own process: UNPROFILED_TARGET). A
   program only work's rule reached (an exec no wrapper made, or made by
   a process forked behind a wrapper),
   and whatever it forks or becomes through wrappers, is dropped unwritten
   at its end when its heap stayed below WRAPPER_HEAP_MAX (as, collect2):
   a program the rule before wrote (a shell's child's) is still written,
   however small. Its name goes into the summary's hint, as does an exec
   not followed. */

#define WRAPPER_HEAP_MAX (1024 * 1024) /* bash running pyenv's scripts: 116 KiB */

/* A profiled process while it may still be a wrapper. Its heap is the
   profile's own (the sink's heap_bytes, looked at after each event): a
   map of its blocks kept here too cost a fifth of the tracer's time on
   programs whose heap stays small. */
struct watched {
	bool over;             /* not a wrapper: the heap reached
				  WRAPPER_HEAP_MAX, or a snapshot was taken */
	bool via_wrapper;      /* its program came from a wrapper's exec */
	bool droppable;        /* not written unless OVER: only
				  --follow-exec=work reached it */
	char name[32];         /* its program's name (comm), for the hint */
};

/* A process forked behind a wrapper, and its children: the target's own
   (a shim's helpers: pyenv's forked 21 under work, which followed their
   execs for 0.6 s more of a 1 s run) or another process's (make's cc
   driver: its cc1 and ld are followed under work). */
#define UNPROFILED_ELSEWHERE 1
#define UNPROFILED_TARGET 2

#define MISSING_MAX 32 /* program names kept for the hint */
#define HINT_NAMES 26  /* of the hint's 70 characters */

/* Program names, each once; how many more there were. */
struct name_list {
	char names[MISSING_MAX][32];
	unsigned n, more;
};

struct exec_watch {
	const struct tracer_sink *real; /* the profiler's */
	struct tracer_sink sink;        /* REAL with EVENT and SNAPSHOT
					   watched */
	struct u64map procs;       /* pid -> struct watched * */
	struct u64map unprofiled;  /* pids forked by wrappers, no profile:
				      pid -> UNPROFILED_* */
	bool wrappers;             /* --follow-exec resolved to wrappers */
	bool work;                 /* ... to work: every exec followed */
	bool next_via_wrapper;     /* the profile starting follows one */
	bool next_droppable;       /* the profile starting may be dropped */
	unsigned n_wrappers;       /* wrappers' execs followed */
	unsigned n_unprofiled;     /* processes ended without a profile */
	unsigned n_unfollowed;     /* ... of which exec'd, not followed */
	/* Programs not profiled (execs not followed) or dropped. */
	struct name_list missing;
	/* Execs not followed of processes the target forked behind a
	   wrapper, since the target's last exec: a shim's helpers
	   (pyenv's readlink, pyenv-version-name) when the target then
	   execs as a wrapper, which nobody asked about; else the work of
	   the program behind the wrapper (sh -c 'prog; ...'), named. */
	struct name_list pending;
	unsigned n_helpers;        /* shim helpers' execs, not named */
	/* The last process looked up: every event asks, nearly always for
	   the same process, and a map lookup per event is the consumer's
	   time. */
	pid_t hot_pid;
	struct watched *hot;       /* NULL: none */
};

/* tracer_run's (one session per heaptrace), NULL when attached. */
static struct exec_watch *watch;

static struct watched *
watched_get(pid_t pid)
{
	if (!watch)
		return NULL;
	if (watch->hot && watch->hot_pid == pid)
		return watch->hot;
	uint64_t *v = u64map_get(&watch->procs, (uint64_t)pid);
	struct watched *w = v ? (struct watched *)(uintptr_t)*v : NULL;
	watch->hot_pid = pid;
	watch->hot = w;
	return w;
}

static void
watched_free(pid_t pid)
{
	uint64_t v;
	if (!watch || !u64map_remove(&watch->procs, (uint64_t)pid, &v))
		return;
	struct watched *w = (struct watched *)(uintptr_t)v;
	if (watch->hot == w)
		watch->hot = NULL;
	free(w);
}

static void
watch_event(void *ctx, pid_t pid, const struct ht_event *ev)
{
	watch->real->event(ctx, pid, ev);
	struct watched *w = watched_get(pid);
	if (w && !w->over &&
	    watch->real->heap_bytes(ctx, pid) >= WRAPPER_HEAP_MAX)
		w->over = true;
}

static void
watch_snapshot(void *ctx, pid_t pid, uint64_t time)
{
	struct watched *w = watched_get(pid);
	if (w)
		w->over = true; /* its profile was wanted */
	watch->real->snapshot(ctx, pid, time);
}

/* The name of the program PID runs, as exec gave it (its comm: "as"
   where its file is x86_64-linux-gnu-as), or "?". */
static void
program_name(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f || !fgets(buf, (int)len, f))
		snprintf(buf, len, "?");
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
}

/* NAME into L, once. */
static void
names_add(struct name_list *l, const char *name)
{
	for (unsigned i = 0; i < l->n; i++)
		if (!strcmp(l->names[i], name))
			return;
	if (l->n == MISSING_MAX) {
		l->more++;
		return;
	}
	snprintf(l->names[l->n++], sizeof(*l->names), "%s", name);
}

/* NAME, a program left unprofiled, for the hint: once each. */
static void
missing_add(const char *name)
{
	names_add(&watch->missing, name);
}

/* The target execs as a wrapper: the execs its helpers made before were
   a shim's plumbing, said with -v only. */
static void
pending_discard(void)
{
	struct name_list *l = &watch->pending;
	for (unsigned i = 0; i < l->n; i++)
		ht_debug("a wrapper's helper exec'd %s: not profiled",
			 l->names[i]);
	watch->n_helpers += l->n + l->more;
	l->n = l->more = 0;
}

/* PID's profile starts: as the target's first program (PARENT 0), after
   an exec (PARENT == PID), or as a fork of PARENT (a copy of its state). */
static void
watch_start(pid_t pid, pid_t parent)
{
	if (!watch)
		return;
	struct watched *from = parent && parent != pid ? watched_get(parent)
						       : NULL;
	watched_free(pid);
	struct watched *w = calloc(1, sizeof(*w));
	if (!w)
		return; /* unwatched: never a wrapper */
	if (from) {
		w->over = from->over;
		w->via_wrapper = from->via_wrapper;
		w->droppable = from->droppable;
		memcpy(w->name, from->name, sizeof(w->name));
	} else {
		w->via_wrapper = parent == pid && watch->next_via_wrapper;
		w->droppable = parent == pid && watch->next_droppable;
		program_name(pid, w->name, sizeof(w->name));
	}
	watch->next_via_wrapper = false;
	watch->next_droppable = false;
	u64map_put(&watch->procs, (uint64_t)pid, (uint64_t)(uintptr_t)w);
}

/* P, profiled, execs: is what ran before a wrapper? */
static bool
watch_is_wrapper(const struct tproc *p)
{
	struct watched *w = p->profiling ? watched_get(p->pid) : NULL;
	return w && !w->over;
}

/* P, profiled, forks: is the child left unprofiled? */
static bool
watch_defers_fork(const struct tproc *p)
{
	struct watched *w = watch && watch->wrappers ? watched_get(p->pid)
						     : NULL;
	return w && w->via_wrapper && !w->over;
}

/* PID's UNPROFILED_* kind, 0 when profiled or not watched. */
static uint64_t
unprofiled(pid_t pid)
{
	uint64_t *v = watch ? u64map_get(&watch->unprofiled, (uint64_t)pid)
			    : NULL;
	return v ? *v : 0;
}

/* PID, never profiled, ends: exits, or EXECD a program not followed. */
static void
unprofiled_end(pid_t pid, bool execd)
{
	if (watch && u64map_remove(&watch->unprofiled, (uint64_t)pid, NULL)) {
		watch->n_unprofiled++;
		watch->n_unfollowed += execd;
	}
}

/* PID exec'd a program that is not followed: named in the hint (a
   process the target forked behind a wrapper: unless the target then
   execs as a wrapper). */
static void
unfollowed_exec(pid_t pid)
{
	if (!watch)
		return;
	char name[32];
	program_name(pid, name, sizeof(name));
	if (unprofiled(pid) == UNPROFILED_TARGET)
		names_add(&watch->pending, name);
	else
		missing_add(name);
	unprofiled_end(pid, true);
}

/* P's profile ends: is it dropped unwritten (watched, droppable)? */
static bool
watch_drops(struct tracer *t, const struct tproc *p)
{
	struct watched *w = watched_get(p->pid);
	if (!w || !w->droppable || w->over || !t->sink->process_drop)
		return false;
	missing_add(w->name);
	return true;
}

/* The hint: "cc, as, collect2 not profiled: --trace-children=yes",
   the names cut to HINT_NAMES characters ("+3" for the rest). */
static void
missing_hint(void)
{
	char names[HINT_NAMES + 8];
	size_t len = 0;
	unsigned i;
	for (i = 0; i < watch->missing.n; i++) {
		const char *n = watch->missing.names[i];
		if (len + strlen(n) + (i ? 2 : 0) > HINT_NAMES && i)
			break;
		len += (size_t)snprintf(names + len, sizeof(names) - len,
					"%s%.*s", i ? ", " : "",
					HINT_NAMES, n);
		if (len >= sizeof(names))
			len = sizeof(names) - 1;
	}
	unsigned rest = watch->missing.n - i + watch->missing.more;
	if (rest)
		snprintf(names + len, sizeof(names) - len, ", +%u", rest);
	ht_note("%s not profiled: --trace-children=yes", names);
}

void
tracer_watch_install(struct tracer *t, const struct tracer_sink *real)
{
	const struct ht_options *opt = t->opt;
	if (opt->pages_as_heap || !opt->heap || !real->heap_bytes)
		return; /* no heap measured: every exec as --trace-children */
	watch = ht_xcalloc(1, sizeof(*watch));
	watch->real = real;
	watch->sink = *real;
	watch->sink.event = watch_event;
	if (real->snapshot)
		watch->sink.snapshot = watch_snapshot;
	u64map_init(&watch->procs);
	u64map_init(&watch->unprofiled);
	bool aut = opt->follow_exec == HT_FOLLOW_EXEC_AUTO &&
		   !opt->massif_compat;
	/* Whoever asks for --trace-children or a leak report for each
	   process gets that, not more processes nor fewer profiles. */
	watch->work = opt->follow_exec == HT_FOLLOW_EXEC_WORK ||
		(aut && !opt->trace_children_given &&
		 opt->leak_check == HT_LEAK_CHECK_NO);
	watch->wrappers = watch->work || aut ||
		opt->follow_exec == HT_FOLLOW_EXEC_WRAPPERS;
	t->sink = &watch->sink;
}

void
tracer_watch_finish(struct tracer *t)
{
	if (!watch)
		return;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&watch->unprofiled, &pos, &key, &val))
		watch->n_unprofiled++;
	for (unsigned i = 0; i < watch->pending.n; i++)
		missing_add(watch->pending.names[i]);
	watch->missing.more += watch->pending.more;
	if (watch->missing.n)
		missing_hint();
	/* Helpers forked behind wrappers that never exec'd (subshells),
	   and shims' helpers: their plumbing, not what the user ran. */
	unsigned n = watch->n_unprofiled - watch->n_unfollowed;
	if (n || watch->n_helpers)
		ht_debug("not profiled: %u wrapper fork%s, %u exec%s of "
			 "wrapper helpers (--follow-exec=no "
			 "--trace-children=yes profiles them)", n,
			 n == 1 ? "" : "s", watch->n_helpers,
			 watch->n_helpers == 1 ? "" : "s");
	ht_debug("exec wrappers followed: %u", watch->n_wrappers);
	pos = 0;
	while (u64map_next(&watch->procs, &pos, &key, &val)) {
		free((struct watched *)(uintptr_t)val);
	}
	u64map_fini(&watch->procs);
	u64map_fini(&watch->unprofiled);
	t->sink = watch->real;
	free(watch);
	watch = NULL;
}

void
tracer_start_profile(struct tracer *t, struct tproc *p, pid_t parent)
{
	p->profiling = true;
	if (watch) {
		u64map_remove(&watch->unprofiled, (uint64_t)p->pid, NULL);
		watch_start(p->pid, parent);
	}
	t->sink->process_start(t->sink->ctx, p->pid, parent, tracer_clock(t, p));
}

/* --stats: what P's Python frames took. */
static void
python_report(const struct tproc *p)
{
	if (!p->python)
		return;
	const struct py_stats *s = py_interp_stats(p->python);
	ht_error("stats: process %d: Python %s: %llu stacks with Python "
		 "frames, %llu frames named, %llu code objects read, %llu "
		 "frames of no code object, %llu segments without an "
		 "evaluation frame", (int)p->pid, py_interp_version(p->python),
		 (unsigned long long)s->stacks, (unsigned long long)s->frames,
		 (unsigned long long)s->code_reads,
		 (unsigned long long)s->code_invalid,
		 (unsigned long long)s->leftover);
}

void
tracer_end_profile(struct tracer *t, struct tproc *p)
{
	if (!p->profiling)
		return;
	p->profiling = false;
	if (watch_drops(t, p)) {
		watched_free(p->pid);
		t->sink->process_drop(t->sink->ctx, p->pid);
		return;
	}
	watched_free(p->pid);
	t->sink->process_end(t->sink->ctx, p->pid, tracer_clock(t, p),
			     backend_name(t, p));
	if (t->opt->stats) {
		inline_report(p);
		python_report(p);
	}
}

/* ---- Breakpoint stops ---- */

static bool
on_probe(struct tracer *t, struct tracee *tc, struct probe *pr,
	 struct user_regs_struct *regs)
{
	struct tproc *p = tc->proc;
	int rc = 0;
	regs->rip = pr->addr;
	ht_debug("thread %d: hit %s at 0x%llx sp 0x%llx", (int)tc->tid,
		 ht_alloc_fn_name(pr->fn), (unsigned long long)pr->addr,
		 (unsigned long long)regs->rsp);
	switch (pr->role) {
	case PROBE_ALLOC:
	case PROBE_FREE:
		rc = alloc_entry(t, tc, pr, regs);
		break;
	case PROBE_DEBUG_STATE:
		rc = loader_debug_state(t, p, tc->tid, true);
		inline_thread_known(t, tc); /* its thread pointer is set */
		/* Planting injected syscalls: the registers moved meanwhile
		   only in the restored copy, so REGS is still right. */
		break;
	case PROBE_EXIT:
		rc = alloc_exit_hook(t, tc, pr, regs);
		if (rc == 0) {
			set_regs_and_resume(t, tc, regs);
			return true;
		}
		rc = 0;
		break;
	}
	if (rc == -ESRCH)
		return true;
	if (rc)
		ht_debug("probe %s in %d: %s", ht_alloc_fn_name(pr->fn),
			 (int)tc->tid, ht_strerror(rc));
	if (probe_step_over(p, tc->tid, pr, regs) == 0)
		set_regs_and_resume(t, tc, regs);
	return true;
}

/* A SIGTRAP: ours when it comes from a probe or a trampoline. */
static bool
on_trap(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	struct user_regs_struct regs;
	if (!p || ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0)
		return false;
	struct probe *found;
	switch (probe_trap_site(p, regs.rip - 1, &found)) {
	case TRAP_RETURN:
		if (alloc_return(t, tc, &regs) == 0)
			set_regs_and_resume(t, tc, &regs);
		return true;
	case TRAP_CALL_RETURN:
		if (alloc_call_return(t, tc, &regs) >= 0)
			set_regs_and_resume(t, tc, &regs);
		return true;
	case TRAP_PROBE: {
		/* A copy: handling the stop may plant probes and move the
		   table. */
		struct probe pr = *found;
		return on_probe(t, tc, &pr, &regs);
	}
	case TRAP_NOT_OURS:
		break;
	}
	return false;
}

/* ---- New threads and processes ---- */

static void
copy_pending(struct tracee *dst, const struct tracee *src)
{
	/* A fork child's stack holds the same hijacked return addresses. */
	for (size_t i = 0; i < src->n_pending; i++) {
		struct pending_call pc = src->pending[i];
		pc.pcs = NULL;
		pc.npcs = 0;
		if (src->pending[i].npcs) {
			pc.pcs = ht_xmalloc(src->pending[i].npcs * sizeof(*pc.pcs));
			memcpy(pc.pcs, src->pending[i].pcs,
			       src->pending[i].npcs * sizeof(*pc.pcs));
			pc.npcs = src->pending[i].npcs;
		}
		ht_xgrow((void **)&dst->pending, &dst->cap_pending,
			 dst->n_pending + 1, sizeof(*dst->pending));
		dst->pending[dst->n_pending++] = pc;
	}
}

/* --stacks=yes: TC's stack pointer where it starts (at exec, at a new
   thread's first stop) is its base line, as Massif counts a stack from
   where it starts watching it. */
static void
stack_base_line(struct tracer *t, struct tracee *tc)
{
	struct user_regs_struct regs;
	if (t->opt->stacks && tc->proc &&
	    ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) == 0)
		stacksample_report(t, tc, regs.rsp, tracer_clock(t, tc->proc));
}

/* A new thread or process at its first stop: a fork child of an inline
   process gets its ring before it runs a single instruction. */
static void
first_stop(struct tracer *t, struct tracee *tc)
{
	if (t->detaching) {
		tc->detach_stopped = true; /* detach.c lets it go as it is */
		return;
	}
	stack_base_line(t, tc);
	if (tc->ring_parent) {
		struct tproc *parent = tc->ring_parent;
		tc->ring_parent = NULL;
		int err = inline_fork_child(t, parent, tc->proc, tc->tid);
		if (err) {
			tracer_end_profile(t, tc->proc);
			lifecycle_release_fork_child(t, tc, parent, err);
			return;
		}
	}
	/* Its stubs record from its first call: nobody is asked then. */
	inline_thread_known(t, tc);
	resume(t, tc, 0);
}

void
tracer_on_new_task(struct tracer *t, struct tracee *tc, int event)
{
	unsigned long msg;
	if (ptrace(PTRACE_GETEVENTMSG, tc->tid, NULL, &msg) < 0)
		return;
	pid_t child = (pid_t)msg;
	struct tproc *p = tc->proc;
	if (event != PTRACE_EVENT_CLONE)
		inline_drain(t, tc->proc, RECORD_WAIT_NS); /* all before the fork */
	if (event != PTRACE_EVENT_CLONE) {
		uint64_t parent_count = t->opt->time_unit == HT_TIME_I
			? perfcount_process(t, tc->proc) : 0;
		p = lifecycle_proc_fork(t, tc->proc, child);
		p->insn_base = (int64_t)parent_count;
		if (tc->proc->profiling && watch_defers_fork(tc->proc)) {
			ht_debug("process %d: forked by the wrapper %d: not "
				 "profiled", (int)child, (int)tc->proc->pid);
			u64map_put(&watch->unprofiled, (uint64_t)child,
				   tc->proc->pid == t->target
				   ? UNPROFILED_TARGET : UNPROFILED_ELSEWHERE);
		} else if (tc->proc->profiling) {
			tracer_start_profile(t, p, tc->proc->pid);
		} else if (unprofiled(tc->proc->pid)) {
			u64map_put(&watch->unprofiled, (uint64_t)child,
				   unprofiled(tc->proc->pid));
		}
	}
	struct tracee *ntc = tracee_get(t, child);
	bool held = ntc && ntc->held;
	if (held) {
		ntc->proc = p;
		p->n_threads++;
		ntc->held = false;
		perfcount_thread_start(t, ntc);
	} else if (!ntc) {
		ntc = lifecycle_thread_add(t, child, p);
	}
	if (event != PTRACE_EVENT_CLONE)
		copy_pending(ntc, tc);
	/* A vfork child shares its parent's memory, ring included. */
	if (event == PTRACE_EVENT_FORK && tc->proc->inl)
		ntc->ring_parent = tc->proc;
	if (event == PTRACE_EVENT_VFORK)
		inline_vfork_child(tc, p);
	if (held)
		first_stop(t, ntc); /* it stopped before this event */
	else
		ntc->first_stop_pending = true;
}

/* ---- exec ---- */

void
tracer_drop_other_threads(struct tracer *t, struct tproc *p, pid_t keep)
{
	/* execve leaves one thread; the others vanish without a report. */
	size_t pos = 0;
	uint64_t key, val;
	pid_t *gone = NULL;
	size_t n = 0, cap = 0;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *o = (struct tracee *)(uintptr_t)val;
		if (o->proc == p && o->tid != keep) {
			ht_xgrow((void **)&gone, &cap, n + 1, sizeof(*gone));
			gone[n++] = o->tid;
		}
	}
	for (size_t i = 0; i < n; i++)
		lifecycle_thread_remove(t, tracee_get(t, gone[i]));
	free(gone);
}

static void
on_exec(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	privileges_check_exec(p->pid);
	tracer_drop_other_threads(t, p, tc->tid);
	alloc_pending_clear(tc);
	bool initial = !p->setup_done && !p->profiling && !t->started;
	bool wrapper = !initial && watch_is_wrapper(p);
	bool follow = t->opt->trace_children || (watch && watch->work &&
		unprofiled(p->pid) != UNPROFILED_TARGET);
	/* Reached by work's rule only, or through wrappers from such. */
	bool droppable = watch && watch->work && !t->opt->trace_children &&
		(wrapper ? watched_get(p->pid)->droppable : !initial);
	if (wrapper && watch->wrappers) {
		if (p->pid == t->target)
			pending_discard();
		/* Its profile is dropped: the new program's replaces it. */
		ht_debug("process %d: exec with less than %u B of heap "
			 "ever: a wrapper, followed", (int)p->pid,
			 WRAPPER_HEAP_MAX);
		watch->n_wrappers++;
		watch->next_via_wrapper = true;
		p->profiling = false; /* nothing reaches the old profile */
	} else if (!initial) {
		tracer_end_profile(t, p);
		if (!follow)
			unfollowed_exec(p->pid);
		if (!follow && t->opt->pages_as_heap) {
			/* Valgrind stops following a program at its exec, but
			   our seccomp filter cannot be removed: its calls would
			   fail untraced. Followed, never profiled. */
			p->detaching = true;
			resume(t, tc, 0);
			return;
		}
		if (!follow) {
			/* Valgrind stops following a program at its exec. */
			ptrace(PTRACE_DETACH, tc->tid, NULL, NULL);
			lifecycle_thread_remove(t, tc);
			if (p->n_threads == 0)
				lifecycle_proc_free(t, p);
			return;
		}
	}
	t->started = true;
	if (tc->interrupt_pending) {
		/* Take the interrupt's stop before planting (which takes
		   the thread to its execve's exit stop, and must see that
		   stop, not the interrupt's). */
		tc->interrupt_pending = false;
		int e = stopall_settle(t, tc);
		if (e)
			ht_debug("thread %d: after exec: %s", (int)tc->tid,
				 ht_strerror(e));
	}
	lifecycle_proc_exec(p);
	p->insn_base = 0;
	if (t->opt->time_unit == HT_TIME_I)
		p->insn_base = -(int64_t)perfcount_process(t, p);
	/* With pages only, the loader still finds _exit for the exit-time
	   frees of --massif-compat=yes. */
	bool exit_hooked = t->opt->pages_as_heap && t->opt->massif_compat;
	int err = allocator_probed(t->opt) || exit_hooked
		? loader_setup_exec(t, p, tc->tid) : 0;
	if (err)
		ht_warn("process %d: cannot plant probes: %s", (int)p->pid,
			ht_strerror(err));
	if (watch)
		watch->next_droppable = droppable;
	tracer_start_profile(t, p, initial ? 0 : p->pid);
	if (t->opt->pages_as_heap)
		pagecalls_startup(t, p, tc->tid);
	stack_base_line(t, tc);
	resume(t, tc, 0);
}

/* ---- Exits ---- */

void
tracer_record_result(struct tracer *t, int status)
{
	t->target_done = true;
	if (WIFEXITED(status)) {
		t->result.exit_status = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		t->result.signaled = true;
		t->result.signal = WTERMSIG(status);
		t->result.exit_status = 128 + WTERMSIG(status);
	}
}

void
tracer_on_gone(struct tracer *t, struct tracee *tc, pid_t tid, int status)
{
	struct tproc *p = tc ? tc->proc : NULL;
	if (tc) {
		inline_thread_gone(t, tc);
		if (p && p->profiling) {
			/* settles a realloc the thread began and never ended */
			struct ht_event ev = {
				.kind = HT_EV_THREAD_EXIT, .tid = (uint32_t)tid,
			};
			t->sink->event(t->sink->ctx, p->pid, &ev);
		}
		lifecycle_thread_remove(t, tc);
	}
	if (p && tid == p->pid)
		inline_drain_final(t, p);
	if (tid == t->target)
		tracer_record_result(t, status);
	if (p && tid == p->pid) {
		tracer_end_profile(t, p);
		unprofiled_end(p->pid, false);
		lifecycle_proc_free(t, p);
	}
}

static void
on_stop(struct tracer *t, struct tracee *tc, int status)
{
	int sig = WSTOPSIG(status);
	int event = status >> 16;
	/* Resumed from its vfork event, a thread waits in the kernel until
	   the child leaves its memory; any later stop ends that wait. */
	tc->in_vfork = event == PTRACE_EVENT_VFORK;
	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		tracer_on_new_task(t, tc, event);
		resume(t, tc, 0);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(t, tc);
		return;
	case PTRACE_EVENT_VFORK_DONE:
		inline_vfork_done(tc);
		resume(t, tc, 0);
		return;
	case PTRACE_EVENT_EXIT:
		leakstop_on_exit_stop(t, tc); /* resumes it */
		return;
	case PTRACE_EVENT_SECCOMP:
		pagecalls_on_seccomp(t, tc); /* resumes it */
		return;
	case PTRACE_EVENT_STOP:
		if (tc->first_stop_pending) {
			tc->first_stop_pending = false;
			first_stop(t, tc);
		} else if (status_is_group_stop(status)) {
			/* A group-stop: stay stopped until SIGCONT. */
			ptrace(PTRACE_LISTEN, tc->tid, NULL, NULL);
		} else {
			/* an interrupt stop (stopall.c) that came late */
			tc->interrupt_pending = false;
			resume(t, tc, 0);
		}
		return;
	case 0:
		if (sig == (SIGTRAP | 0x80)) {
			/* attached with --pages-as-heap=yes: every system
			   call stops; else only page calls' exits do */
			if (t->attached) {
				pagecalls_on_syscall_stop(t, tc);
				return;
			}
			if (!pagecalls_on_syscall_exit(t, tc))
				resume(t, tc, 0);
			return;
		}
		if (sig == SIGTRAP && on_trap(t, tc))
			return;
		if (sig == SIGSEGV || sig == SIGILL || sig == SIGBUS) {
			struct user_regs_struct r;
			if (ptrace(PTRACE_GETREGS, tc->tid, NULL, &r) == 0)
				ht_debug("thread %d: signal %d at pc 0x%llx sp 0x%llx",
					 (int)tc->tid, sig,
					 (unsigned long long)r.rip,
					 (unsigned long long)r.rsp);
		}
		ht_debug("thread %d: signal %d passed on", (int)tc->tid, sig);
		forward_delivered(t, tc, sig);
		resume(t, tc, sig);
		return;
	default:
		resume(t, tc, 0);
		return;
	}
}

static void
dispatch(struct tracer *t, pid_t tid, int status)
{
	struct tracee *tc = tracee_get(t, tid);
	/* Whatever this stop reports comes after the records already in the
	   ring. */
	if (tc && tc->proc)
		inline_drain(t, tc->proc, 0);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		tracer_on_gone(t, tc, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!tc) {
		/* A new thread or child reporting before its creator's
		   event: hold it until we know which process it joins. */
		tc = lifecycle_thread_add(t, tid, NULL);
		tc->held = true;
		return;
	}
	on_stop(t, tc, status);
}

static bool
any_inline(struct tracer *t)
{
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->procs, &pos, &key, &val))
		if (inline_active((struct tproc *)(uintptr_t)val))
			return true;
	return false;
}

void
tracer_fini(struct tracer *t)
{
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		alloc_pending_clear(tc);
		pagecalls_clear(tc);
		free(tc->pending);
		free(tc);
	}
	pos = 0;
	while (u64map_next(&t->procs, &pos, &key, &val)) {
		lifecycle_proc_free(t, (struct tproc *)(uintptr_t)val);
		pos = 0; /* lifecycle_proc_free removed it from the map */
	}
	u64map_fini(&t->tracees);
	u64map_fini(&t->procs);
	waitq_free(t);
	free(t->pcs_scratch);
}

/* The records a ring carries for concerns above the inline path. */
static const struct inline_client inline_client = {
	.debug_state = loader_debug_state,
	.describe_page = pagecalls_describe_inline,
};

void
tracer_init(struct tracer *t, const struct ht_options *opt,
	    const struct tracer_sink *sink)
{
	*t = (struct tracer){ .opt = opt, .sink = sink,
			      .resume_req = PTRACE_CONT,
			      .inline_client = &inline_client };
	u64map_init(&t->tracees);
	u64map_init(&t->procs);
	t->max_pcs = opt->depth + 50;
	t->pcs_scratch = ht_xcalloc(t->max_pcs, sizeof(*t->pcs_scratch));
	t->t0_ms = 0;
	t->t0_ms = tracer_now_ms(t);
}


/* Whether a word W watches changed since it was armed: a stub rang its
   ring's doorbell. */
static bool
doorbell_rung(const struct idle_wait *w)
{
	for (size_t i = 0; i < w->n; i++) {
		const uint32_t *word =
			(const uint32_t *)(uintptr_t)w->v[i].uaddr;
		if (__atomic_load_n(word, __ATOMIC_ACQUIRE) !=
		    (uint32_t)w->v[i].val)
			return true;
	}
	return false;
}

/* Take a pending SIGCHLD (blocked outside idle waits): a thread stopped,
   and the loop's waitpid is to see it. */
static bool
chld_taken(const sigset_t *chld)
{
	struct timespec zero = { 0 };
	return sigtimedwait(chld, NULL, &zero) == SIGCHLD;
}

static void
cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* The rings were just found empty, but records came lately: wait for
   work without sleeping. Waking a sleeping tracer (futex_waitv, then the
   scheduler, on a VM an idle vCPU's halt) took 40-70 us here, and a stub
   that asks a question (a missing unwinding rule: node asks 3 500) waits
   all that time; waiting this way answered in 20-25 us. Records are left
   to gather for a slice rather than read as soon as written: a tracer
   that chases the head reads each cache line while the stub is still
   filling it (perl, 800 000 calls: a third more CPU time in perl, its
   run 30 % longer). Returns at a doorbell, a stop, SPIN_BATCH bytes
   recorded or after SPIN_SLICE_NS; yields the CPU at each look, so that
   a runnable thread of the target sharing this CPU is not kept
   waiting. */
static void
spin_wait(struct tracer *t, const struct idle_wait *w, const sigset_t *chld)
{
	uint64_t start = ht_monotonic_ns();
	for (unsigned i = 1;; i++) {
		if (doorbell_rung(w))
			return;
		cpu_relax();
		if (i % SPIN_CHECK)
			continue;
		if (chld_taken(chld) || inline_pending_all(t) >= SPIN_BATCH ||
		    ht_monotonic_ns() - start >= SPIN_SLICE_NS)
			return;
		sched_yield();
	}
}

/* Whether the loop spins after records (spin_wait) and backs off to a
   millisecond at most; not when sampling so coarsely that the ring
   stands for SAMPLED_RING_SPAN bytes allocated (at 512K, any ring of
   128 KiB or more). There, a record came every millisecond or so (cc1
   -O2 at 512K: 2,900 in 3 s), each opening another window, so the tracer
   spun through most of the run (a third of its CPU, cc1) to spare a rare
   record or question a wake-up's 40-70 us; a question rings the
   doorbell, which ends any wait, and so does a stub that finds the ring
   full. The span is kept as well: before stubs rang when full, a 4 KiB
   ring at 4K waited 20 ms 226 times for perl's hash. */
static bool
spin_wants(const struct tracer *t)
{
	uint64_t interval = t->opt->sampling_interval;
	uint64_t records = t->opt->ring_size / RECORD_BYTES_TYPICAL;
	return interval == 0 || records * interval < SAMPLED_RING_SPAN;
}

/* Set by a sink's callback, which runs inside the loop: no signal
   handler writes it. */
static bool sink_detach_requested;

void
tracer_request_detach(void)
{
	sink_detach_requested = true;
}

bool
loop_detach_requested(void)
{
	return sink_detach_requested;
}

static bool
stop_requested(const struct tracer *t)
{
	return sink_detach_requested || (t->stop_flag && *t->stop_flag);
}

void
tracer_loop(struct tracer *t)
{
	/* Idle waits end at the first stop: SIGCHLD, blocked, is waited for
	   with a timeout. A stub stopped at an int3 waits for us. */
	sigset_t chld, old_mask;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	struct sigaction old_usr1, old_chld;
	ondemand_install(&old_usr1);
	idle_install(&old_chld);
	sink_detach_requested = false;
	struct periodic periodic;
	int prc = periodic_start(&periodic, t->opt->tick_ms
				 ? t->opt->tick_ms
				 : t->opt->snapshot_every * 1000ULL);
	if (prc)
		ht_warn("--snapshot-every: no timer (%s): no periodic "
			"snapshot will be written", ht_strerror(prc));
	struct idle_wait idle;

	unsigned idle_us = 0;
	uint64_t last_records = 0; /* when a drain last found records */
	/* An attached session polls too, so that a request to detach
	   (a signal to heaptrace, --duration) is seen within that long.
	   Sampled, records are rare (spin_wants) and the waits as long:
	   a wake-up a millisecond took a quarter of the tracer's CPU (cc1
	   at 512K), and what needs an answer sooner rings the doorbell. */
	unsigned max_idle_us = t->attached || !spin_wants(t) ? 20000 : 1000;
	while (t->tracees.count || !waitq_empty(t)) {
		int status;
		pid_t tid;
		/* Stops reaped while a process's threads were being stopped
		   come first, in the order they came. */
		if (waitq_pop(t, &tid, &status)) {
			dispatch(t, tid, status);
			idle_us = 0;
			continue;
		}
		ondemand_serve(t);
		forward_serve(t);
		if (stop_requested(t))
			break;
		bool polling = t->attached || any_inline(t) ||
			       forward_deciding();
		/* Without rings to drain, block in waitpid: one system call
		   per stop on the ptrace path (a non-blocking waitpid and a
		   wait for SIGCHLD made it 15-20 % slower); a snapshot
		   request ends the wait. */
		tid = polling ? waitpid(-1, &status, __WALL | WNOHANG)
			      : ondemand_waitpid(&status);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (tid > 0) {
			dispatch(t, tid, status);
			idle_us = 0;
			continue;
		}
		forward_idle(t);
		/* Nothing stopped: drain the rings, and when they are idle
		   too, spin a little (spin_wait), then back off (up to a
		   millisecond) so that a target that hardly allocates keeps
		   its CPU; a stub that waits for an answer rings its
		   doorbell, which ends the wait (idle.c). */
		idle_arm(t, &idle);
		if (inline_drain_all(t) > 0) {
			/* Sampled, a record does not restart the back-off:
			   one a millisecond kept the loop waking every 20 to
			   640 us. */
			if (spin_wants(t))
				idle_us = 0;
			last_records = ht_monotonic_ns();
		} else if (polling && spin_wants(t) &&
			   ht_monotonic_ns() - last_records < SPIN_WINDOW_NS) {
			spin_wait(t, &idle, &chld);
		} else {
			idle_us = idle_us ? (idle_us * 2 > max_idle_us
					     ? max_idle_us : idle_us * 2) : 20;
			if (!polling)
				idle_us = UNPOLLED_WAIT_US;
			idle_wait(&idle, &chld, idle_us);
		}
	}
	/* Before SIGUSR1's old action (by default: terminate) is back. */
	periodic_stop(&periodic);
	idle_restore(&old_chld);
	ondemand_restore(&old_usr1);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
}
