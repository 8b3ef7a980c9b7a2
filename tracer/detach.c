/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Leaving an attached process as it was (tracing-techniques.md §6.2):
   every thread is stopped, and exactly one stop is taken from each.
   A stop at one of our traps is undone there (a probe's int3: the pc goes
   back to the function's first byte, whose instruction runs once the code
   is back; the return trampoline: the call completes and the pc is its
   real return address); any other signal is kept and handed back with
   PTRACE_DETACH. An interrupt stop with the pc just past one of our int3s
   means that int3's SIGTRAP is still queued (the interrupt was reported
   first): the thread is let run to take it.

   Then, per process: a pc inside an out-of-line slot is mapped back to
   the original code, every redirected return address still on a stack
   is put back, the original code bytes are written; the inline path is
   taken out (inline_detach.c: the ring drained, the stubs made to pass
   every call through, threads inside the stub run out of it, the jumps
   over the allocators' entries replaced by their original bytes, the
   ring unmapped); and the scratch pages are unmapped, unless a thread
   could still come back into one (its pc there, a signal frame's saved pc
   inside a slot, a thread the stub could not be run out of): then they
   stay, a harmless pass-through, said in a debug line. Threads stopped
   inside a blocking system call keep its registers untouched, so the
   kernel restarts it when they run on. Threads and processes created
   meanwhile (clone, fork) are held at their first stop and let go the
   same way, a fork child that had no ring of its own yet included. */
#include "tracer/session.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"
#include "tracer/inline/inline.h"
#include "tracer/leak/leak.h"
#include "tracer/pages/pages.h"
#include "tracer/probes/probes.h"
#include "tracer/target/target.h"

#define QUIESCE_TIMEOUT_MS 5000
#define STACK_SCAN (256 * 1024) /* bytes above each stack pointer searched
				   for a saved pc inside a slot */


static void
held(struct tracee *tc, bool injectable)
{
	tc->detach_stopped = true;
	tc->detach_injectable = injectable;
}

/* The probe whose out-of-line slot holds PC in P, or NULL. */
static const struct probe *
slot_probe(const struct tproc *p, uint64_t pc)
{
	for (size_t i = 0; i < p->n_probes; i++) {
		const struct probe *pr = &p->probes[i];
		if (pr->slot && pc >= pr->slot && pc < pr->slot + pr->d.slot_len)
			return pr;
	}
	return NULL;
}

/* PC is just past one of P's int3s: a SIGTRAP is on its way. */
static bool
past_our_trap(struct tproc *p, uint64_t pc)
{
	struct probe *pr;
	return p && probe_trap_site(p, pc - 1, &pr) != TRAP_NOT_OURS;
}

/* A SIGTRAP stop of TC: undo it when it is one of ours. False when the
   signal is the program's. */
static bool
undo_trap(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	struct user_regs_struct regs;
	if (!p || ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0)
		return false;
	uint64_t at = regs.rip - 1;
	struct probe *pr;
	switch (probe_trap_site(p, at, &pr)) {
	case TRAP_RETURN:
		/* the call is reported and the pc set to its caller */
		if (alloc_return(t, tc, &regs))
			return true; /* no call pending: nothing to undo */
		break;
	case TRAP_CALL_RETURN:
		if (!tc->in_freeres)
			return false;
		regs = tc->freeres_saved; /* back at _exit, which runs on */
		tc->in_freeres = false;
		break;
	case TRAP_PROBE:
		regs.rip = at; /* the entry is not reported: runs natively */
		break;
	case TRAP_NOT_OURS:
		return false;
	}
	ptrace(PTRACE_SETREGS, tc->tid, NULL, &regs);
	return true;
}

/* TC is at an interrupt or group stop. */
static void
on_interrupt_stop(struct tracee *tc, int status)
{
	struct user_regs_struct regs;
	if (!status_is_group_stop(status) &&
	    ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) == 0 &&
	    past_our_trap(tc->proc, regs.rip)) {
		/* take the queued SIGTRAP's stop instead */
		ptrace(PTRACE_CONT, tc->tid, NULL, NULL);
		return;
	}
	held(tc, !status_is_group_stop(status));
}

/* P exec'd in TC: the new image has none of our code; nothing to undo. */
static void
on_exec(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	if (p) {
		tracer_drop_other_threads(t, p, tc->tid);
		alloc_pending_clear(tc);
		tracer_end_profile(t, p);
		lifecycle_proc_exec(p);
	}
	held(tc, false);
}

/* One status reaped while stopping everything. */
static void
note(struct tracer *t, pid_t tid, int status)
{
	struct tracee *tc = tracee_get(t, tid);
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		tracer_on_gone(t, tc, tid, status);
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!tc) {
		/* a new task before its creator's event: held there */
		tc = lifecycle_thread_add(t, tid, NULL);
		tc->held = true;
		held(tc, false);
		return;
	}
	int sig = WSTOPSIG(status);
	switch (status >> 16) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		tracer_on_new_task(t, tc, status >> 16);
		held(tc, false);
		return;
	case PTRACE_EVENT_EXEC:
		on_exec(t, tc);
		return;
	case PTRACE_EVENT_STOP:
		if (tc->first_stop_pending) {
			tc->first_stop_pending = false;
			held(tc, false);
			return;
		}
		on_interrupt_stop(tc, status);
		return;
	case 0:
		if (sig == (SIGTRAP | 0x80)) {
			pagecalls_clear(tc); /* a syscall stop: let it be */
			held(tc, false);
			return;
		}
		if (sig != SIGTRAP || !undo_trap(t, tc))
			tc->detach_sig = sig;
		held(tc, true);
		return;
	default:
		held(tc, false);
		return;
	}
}

static size_t
count_running(struct tracer *t)
{
	size_t pos = 0, n = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		const struct tracee *tc = (struct tracee *)(uintptr_t)val;
		/* A thread waiting in vfork cannot stop before its child
		   leaves its memory, and the child is held here: it runs no
		   user code before it stops (our interrupt, VFORK_DONE),
		   and it is let go by the kernel if that comes after we
		   are gone (stopall.c's PARKED). */
		n += !tc->detach_stopped && !tc->in_vfork;
	}
	return n;
}

/* Interrupt every traced thread not stopped yet, but those at work
   (task_at_work): they stop at once, so asked last they stand still the
   least.
   Those go into *LATE (malloc'd, *N_LATE of them). */
static void
interrupt_all(struct tracer *t, pid_t **late, size_t *n_late)
{
	size_t pos = 0, cap = 0;
	uint64_t key, val;
	*late = NULL;
	*n_late = 0;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (tc->held || (tc->proc && tc->tid == tc->proc->pid &&
				 task_is_zombie(tc->proc->pid, tc->tid))) {
			held(tc, false); /* a zombie leader never stops */
		} else if (tc->detach_stopped) {
			continue;
		} else if (tc->proc && !tc->in_vfork &&
			   task_at_work(tc->proc, tc->tid)) {
			ht_xgrow((void **)late, &cap, *n_late + 1,
				 sizeof(**late));
			(*late)[(*n_late)++] = tc->tid;
		} else {
			ptrace(PTRACE_INTERRUPT, tc->tid, NULL, NULL);
		}
	}
}

/* Reap stops until no more than LEFT threads run, or DEADLINE. The
   threads are counted again only when no status is left to reap (or
   every 64 statuses): once per status was quadratic in the threads. */
static void
wait_stopped(struct tracer *t, const sigset_t *chld, size_t left,
	     uint64_t deadline)
{
	unsigned reaped = 0;
	while (count_running(t) > left) {
		int status;
		pid_t tid;
		while ((tid = waitpid(-1, &status, __WALL | WNOHANG)) > 0) {
			note(t, tid, status);
			if (++reaped % 64 == 0)
				break;
		}
		if (tid > 0)
			continue;
		if (tid < 0 && errno != EINTR)
			break;
		if (reaped && count_running(t) <= left)
			break; /* not to sleep once everything has stopped */
		uint64_t now = ht_monotonic_ms();
		if (now >= deadline) {
			if (!left)
				ht_warn("detach: %zu threads did not stop; they "
					"are let go as they are",
					count_running(t));
			break;
		}
		struct timespec ts = { .tv_nsec = 10 * 1000000L };
		sigtimedwait(chld, NULL, &ts);
	}
}

/* Stop every traced thread, one stop each (see the top): those asleep
   first, then those running (stopall.c's two waves), whose tids go into
   *LATE (malloc'd, *N_LATE of them) to be let go first. */
static void
quiesce(struct tracer *t, pid_t **late, size_t *n_late)
{
	/* Stops reaped already (an attach that failed half-way) first. */
	pid_t qtid;
	int qstatus;
	while (waitq_pop(t, &qtid, &qstatus))
		note(t, qtid, qstatus);
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	uint64_t deadline = ht_monotonic_ms() + QUIESCE_TIMEOUT_MS;
	interrupt_all(t, late, n_late);
	if (*n_late) {
		wait_stopped(t, &chld, *n_late, deadline);
		for (size_t i = 0; i < *n_late; i++) {
			struct tracee *tc = tracee_get(t, (*late)[i]);
			if (tc && !tc->detach_stopped)
				ptrace(PTRACE_INTERRUPT, tc->tid, NULL, NULL);
		}
		/* they stop at once, even after a first wave that timed
		   out */
		if (deadline < ht_monotonic_ms() + 1000)
			deadline = ht_monotonic_ms() + 1000;
	}
	wait_stopped(t, &chld, 0, deadline);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* TC's pc inside one of our slots or trampolines goes back where the
   original code would be. */
static void
move_out_of_scratch(struct tracee *tc)
{
	struct tproc *p = tc->proc;
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0)
		return;
	const struct probe *pr = slot_probe(p, regs.rip);
	if (pr) {
		regs.rip = arch_xol_orig_pc(&pr->d, pr->addr, pr->slot,
					    regs.rip);
	} else if (p->tramp && regs.rip == p->tramp && tc->n_pending &&
		   tc->pending[tc->n_pending - 1].slot + 8 == regs.rsp) {
		/* returned, the trampoline's int3 not run yet */
		regs.rip = tc->pending[--tc->n_pending].orig;
		free(tc->pending[tc->n_pending].pcs);
	} else if (p->call_tramp && regs.rip == p->call_tramp &&
		   tc->in_freeres) {
		regs = tc->freeres_saved;
		tc->in_freeres = false;
	} else {
		return;
	}
	ptrace(PTRACE_SETREGS, tc->tid, NULL, &regs);
}

/* Every return address of TC's pending calls back in its slot. */
static void
restore_returns(struct tracee *tc)
{
	uint64_t tramp = tc->proc->tramp;
	for (size_t i = tc->n_pending; i-- > 0;) {
		const struct pending_call *pc = &tc->pending[i];
		uint64_t v;
		if (mem_read(tc->tid, pc->slot, &v, 8) == 8 && v == tramp)
			mem_write(tc->tid, pc->slot, &pc->orig, 8);
	}
	alloc_pending_clear(tc);
}

static bool
in_scratch(const struct tproc *p, uint64_t addr)
{
	for (size_t i = 0; i < p->n_scratch; i++)
		if (addr >= p->scratch[i].addr &&
		    addr < p->scratch[i].addr + p->scratch[i].size)
			return true;
	return false;
}

/* TC could still run code in P's scratch pages: its pc is there, or a
   saved pc on its stack (a signal frame) is inside a slot. Stale copies
   of the trampoline's address (a popped return) are harmless. */
static bool
may_return_to_scratch(struct tracee *tc)
{
	struct tproc *p = tc->proc;
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0)
		return false;
	if (in_scratch(p, regs.rip))
		return true;
	static uint64_t words[STACK_SCAN / 8];
	ssize_t n = mem_read(tc->tid, regs.rsp & ~7ULL, words, sizeof(words));
	for (ssize_t i = 0; i < n / 8; i++)
		if (slot_probe(p, words[i]))
			return true;
	return false;
}

/* Calls TC back with each stopped thread of P; returns the first one
   FN returns true for, or NULL. */
typedef bool (*thread_fn)(struct tracee *tc);

static struct tracee *
find_thread(struct tracer *t, struct tproc *p, thread_fn fn)
{
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (tc->proc == p && tc->detach_stopped && fn(tc))
			return tc;
	}
	return NULL;
}

static bool
fix_thread(struct tracee *tc)
{
	move_out_of_scratch(tc);
	restore_returns(tc);
	return false; /* visit them all */
}

static bool
any_thread(struct tracee *tc)
{
	(void)tc;
	return true;
}

static bool
injectable(struct tracee *tc)
{
	return tc->detach_injectable;
}

static bool
alive_thread(struct tracee *tc)
{
	return !task_is_zombie(tc->proc->pid, tc->tid);
}

static void
restore_code(struct tproc *p, pid_t tid)
{
	for (size_t i = 0; i < p->n_probes; i++) {
		const struct probe *pr = &p->probes[i];
		int err = mem_write_code(p, tid, pr->addr, pr->d.orig,
					 arch_breakpoint_len);
		if (err)
			ht_warn("detach: process %d: cannot restore the code "
				"at 0x%llx: %s", (int)p->pid,
				(unsigned long long)pr->addr, ht_strerror(err));
	}
}

static void
unmap_scratch(struct tracer *t, struct tproc *p)
{
	if (!p->n_scratch)
		return;
	struct tracee *busy = find_thread(t, p, may_return_to_scratch);
	struct tracee *by = find_thread(t, p, injectable);
	if (busy) {
		/* Harmless: a slot's code runs as the original would. */
		ht_debug("process %d: %zu scratch pages left mapped: thread %d "
			 "may still return into them", (int)p->pid,
			 p->n_scratch, (int)busy->tid);
		return;
	}
	if (!by && !find_thread(t, p, alive_thread))
		return; /* it exited meanwhile */
	if (!by) {
		ht_warn("detach: process %d: %zu scratch pages of heaptrace "
			"left mapped (inert): no thread stopped where munmap "
			"can be run", (int)p->pid, p->n_scratch);
		return;
	}
	uint64_t at = 0;
	int err = scratch_unmap_all(p, by->tid, &at);
	if (err)
		ht_warn("detach: process %d: cannot unmap the scratch page at "
			"0x%llx: %s", (int)p->pid, (unsigned long long)at,
			ht_strerror(err));
}

/* P's threads are all stopped: take every trace of us out of it. */
static void
restore_process(struct tracer *t, struct tproc *p)
{
	find_thread(t, p, fix_thread);
	/* a thread at a real stop writes best (a zombie leader cannot) */
	struct tracee *any = find_thread(t, p, injectable);
	if (!any)
		any = find_thread(t, p, any_thread);
	if (!any)
		return; /* no thread to write through: it is exiting */
	/* The int3s first: threads run out of the inline stub must not
	   meet one. */
	restore_code(p, any->tid);
	size_t n_probes = p->n_probes;
	struct tracee *by = find_thread(t, p, injectable);
	inline_detach(t, p, by ? by->tid : 0);
	if (p->n_probes != n_probes) /* a library probed meanwhile */
		restore_code(p, any->tid);
	unmap_scratch(t, p);
	inject_forget(p, any->tid); /* last: the unmapping injected calls */
	p->n_probes = 0;
	ht_debug("process %d: restored", (int)p->pid);
}

static void
release(struct tracer *t, struct tracee *tc)
{
	ptrace(PTRACE_DETACH, tc->tid, NULL, (void *)(uintptr_t)tc->detach_sig);
	lifecycle_thread_remove(t, tc);
}

/* Every thread let go, those in LATE (running when the detach began)
   first: they stood still the shortest, and are kept no longer. */
static void
release_threads(struct tracer *t, const pid_t *late, size_t n_late)
{
	for (size_t i = 0; i < n_late; i++) {
		struct tracee *tc = tracee_get(t, late[i]);
		if (tc)
			release(t, tc);
	}
	/* The rest, gathered first: releasing one changes the map. */
	size_t n = 0, pos = 0;
	uint64_t key, val;
	struct tracee **all = ht_xcalloc(t->tracees.count + 1, sizeof(*all));
	while (u64map_next(&t->tracees, &pos, &key, &val))
		all[n++] = (struct tracee *)(uintptr_t)val;
	for (size_t i = 0; i < n; i++)
		release(t, all[i]);
	free(all);
}

void
detach_all(struct tracer *t)
{
	if (!t->tracees.count)
		return;
	t->detaching = true;
	pid_t *late;
	size_t n_late;
	quiesce(t, &late, &n_late);
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->procs, &pos, &key, &val))
		restore_process(t, (struct tproc *)(uintptr_t)val);
	/* --leak-check: a process that did not exit is scanned now, every
	   event of it delivered (the inline path's records run out) and
	   every thread still held. */
	pos = 0;
	while (u64map_next(&t->procs, &pos, &key, &val)) {
		struct tproc *p = (struct tproc *)(uintptr_t)val;
		struct tracee *alive = find_thread(t, p, alive_thread);
		if (alive)
			leakstop_on_detach(t, p, alive->tid);
	}
	/* Every process restored (a fork child without a ring of its own
	   needs its parent's inline state), the threads go at once: a
	   thread we injected a system call through keeps the trap flag of
	   its single step until it is resumed, which a heaptrace killed
	   while writing a profile would leave to SIGTRAP. Then the
	   profiles end, then the inline state goes, and with it each
	   ring's last copy here. */
	release_threads(t, late, n_late);
	free(late);
	ht_debug("detached");
	pos = 0;
	while (u64map_next(&t->procs, &pos, &key, &val))
		tracer_end_profile(t, (struct tproc *)(uintptr_t)val);
	pos = 0;
	while (u64map_next(&t->procs, &pos, &key, &val))
		inline_free((struct tproc *)(uintptr_t)val);
}
