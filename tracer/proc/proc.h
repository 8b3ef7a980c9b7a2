/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Processes and threads: the records the whole tracer works on (the
   session, each traced process, each traced thread), their tables, the
   wait statuses reaped out of turn, and every thread of a process held
   still. The bottom of the tracer: nothing here calls a concern above it
   (tests/tools/file-graph checks it). Each concern keeps its state in
   these records; the types the tables copy at a fork (probes, scratch
   pages) are defined here, the others with their concern. */
#ifndef HT_TRACER_PROC_PROC_H
#define HT_TRACER_PROC_PROC_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "common/u64map.h"
#include "tracer/arch/arch.h"
#include "tracer/tracer.h"

struct inline_client;
struct inline_proc;
struct py_interp;
struct page_call;
struct pending_call;
struct stopall;

/* What a probe is for (probes/probe.c). */
enum probe_role {
	PROBE_ALLOC,       /* allocation: entry stop plus a return probe */
	PROBE_FREE,        /* deallocation: entry stop only */
	PROBE_DEBUG_STATE, /* ld.so's _dl_debug_state: libraries changed */
	PROBE_EXIT,        /* libc's _exit: run the freeres functions first */
};

/* One breakpoint: the int3 stays in place for the probe's whole life; the
   displaced instruction runs from SLOT (or is emulated). */
struct probe {
	uint64_t addr;
	enum probe_role role;
	enum ht_alloc_fn fn;
	uint64_t obj_lo, obj_hi; /* the object holding the probed function */
	bool hold;               /* PROBE_FREE reported at its entry yet kept
				    pending until it returns, so that what it
				    calls is internal (CPython's PyObject_Free,
				    PyMem_Free, which may call free) */
	uint64_t slot;           /* XOL slot address, 0 when emulated */
	struct arch_displaced d;
};

/* A page of XOL slots (and the return trampoline) mapped into the target
   (target/inject.c). */
struct scratch {
	uint64_t addr;
	size_t size;
	size_t used;
};

/* Allocator symbols probes/loader.c looks for (malloc family, C++ operators,
   CPython's PyObject_* and PyMem_*). */
#define LOADER_MAX_SYMBOLS 48

/* Bytes of one bucket of a set of sampled addresses
   (tracer/inline/sample.h), each with one byte more (its count). */
#define SAMPLED_BUCKET_BYTES 64

/* One traced process (thread group) and its probes. Forked children get
   their own copy: the same addresses, their own memory. */
struct tproc {
	pid_t pid;
	int mem_fd;               /* /proc/PID/mem, for writing code */
	struct probe *probes;
	size_t n_probes, cap_probes;
	struct u64map probe_at;   /* address -> index in PROBES */
	struct scratch *scratch;
	size_t n_scratch, cap_scratch;
	uint64_t tramp;           /* return trampoline (an int3 in scratch) */
	uint64_t call_tramp;      /* where injected function calls return */
	uint64_t syscall_insn;    /* a "syscall" instruction in the target */
	uint64_t inject_routine;  /* inject.c's routine, 0 until made */
	bool inject_slack;        /* ... in a code mapping's padding, to be
				     zeroed again (inject_forget) */
	bool own_seccomp;         /* has a seccomp filter of its own (kept
				     across fork and exec, as the filter) */
	uint64_t r_debug;         /* ld.so's struct r_debug, 0 if static */
	uint64_t freeres[2];      /* __gnu_cxx::__freeres, __libc_freeres */
	bool bound[LOADER_MAX_SYMBOLS]; /* per loader.c symbol: an object
					   defined it already (first wins) */
	bool exit_bound;
	struct u64map objects_seen; /* link_map l_addr values already scanned */
	bool setup_done;          /* probes planted once after exec */
	bool profiling;           /* between process_start and process_end */
	bool detaching;           /* exec without --trace-children */
	struct py_interp *python; /* the CPython it runs (tracer/python/),
				     NULL when none or no Python frames */
	struct inline_proc *inl;  /* the inline path's state, or NULL */
	int inline_refused;       /* setting up the inline path failed: why
				     (a negative error), else 0 */
	int n_threads;
	uint32_t ordinal;         /* processes traced before it (sampling
				     streams: tracer/inline/sample.h) */
	uint32_t n_threads_seen;  /* threads it had so far (ptrace path's
				     sampling streams) */
	struct sample_bucket *sampled; /* --sampling-interval on the ptrace
				     path without a ring: its own set of
				     sampled addresses (tracer/probes/
				     sampled.c), else NULL */
	uint32_t sampled_shift;
	uint32_t sampled_full;    /* RING_F_SET_FULL: that set overflowed,
				     every free is reported */
	int64_t insn_base;        /* instructions counted outside live threads'
				     counters (exited threads, the parent before
				     a fork, minus the count before an exec) */
	uint64_t brk;             /* --pages-as-heap: the program break as
				     last seen (start_brk after exec) */
	/* --leak-check (leak/leakstop.c): */
	int n_exit_stopped;       /* threads past their exit stop */
	uint64_t *exit_sps;       /* their stack pointers there */
	size_t n_exit_sps, cap_exit_sps;
	uint64_t ender_regs[LEAKROOTS_NREGS]; /* exit_group's caller's */
	bool have_ender_regs;
	bool leak_checked;        /* the scan was made */
};

/* Where a thread's stack ends (--stacks=yes), cached from its mapping. */
struct stack_bounds {
	uint64_t lo, hi;          /* the mapping that held its stack pointer */
	uint64_t last;            /* the last size reported, + 1 (0: none) */
};

/* One traced thread. */
struct tracee {
	pid_t tid;
	struct tproc *proc;       /* NULL until its creator's event arrived */
	bool held;                /* first stop seen before the creator's event */
	bool first_stop_pending;  /* its initial PTRACE_EVENT_STOP is to come */
	bool interrupt_pending;   /* an interrupt of stopall.c may still give
				     one more PTRACE_EVENT_STOP */
	bool in_vfork;            /* resumed from its vfork event: blocked in
				     the kernel until the child execs or
				     exits, then stops (VFORK_DONE) */
	bool in_freeres;          /* running injected freeres calls */
	bool exit_stopped;        /* its PTRACE_EVENT_EXIT stop was seen */
	int insn_fd;              /* its instruction counter, or -1 */
	uint64_t tcb;             /* its thread pointer, once the stub asked */
	struct tproc *ring_parent; /* a fork child still to get its own ring */
	struct user_regs_struct freeres_saved;
	int freeres_next;
	struct pending_call *pending;
	size_t n_pending, cap_pending;
	struct page_call *page_call; /* at a page call's entry, or NULL */
	struct stack_bounds stack;
	/* Detaching (detach.c): */
	bool detach_stopped;      /* held at a stop, to be let go */
	bool detach_injectable;   /* that stop is one a syscall can be
				     injected from (not inside the kernel's
				     syscall path) */
	int detach_sig;           /* a signal its stop swallowed, passed on */
	/* --sampling-interval on the ptrace path: */
	bool sample_ready;        /* the two below are set */
	int64_t sample_left;      /* bytes to its next sample point */
	uint64_t sample_rng;      /* its PRNG state */
};

/* Wait statuses the event loop is still to handle (waitq.c). */
struct waitq {
	struct waitq_item {
		pid_t tid;
		int status;
	} *items;
	size_t head, n, cap;
};

/* The whole session. */
struct tracer {
	const struct ht_options *opt;
	const struct tracer_sink *sink;
	pid_t target;             /* the process we forked */
	struct u64map tracees;    /* tid -> struct tracee * */
	struct u64map procs;      /* pid -> struct tproc * */
	uint32_t n_procs_made;    /* processes traced so far: the next one's
				     ordinal */
	struct waitq waitq;       /* statuses reaped out of turn */
	struct tracer_result result;
	bool target_done;
	bool started;             /* the target's first exec happened */
	uint64_t t0_ms;
	unsigned max_pcs;
	uint64_t *pcs_scratch;
	bool attached;            /* a running process (attach.c), not ours */
	bool detaching;           /* detach.c holds every thread: new ones
				     stay at their first stop */
	int resume_req;           /* PTRACE_CONT, or PTRACE_SYSCALL when
				     attached with --pages-as-heap=yes */
	const volatile sig_atomic_t *stop_flag; /* nonzero: leave the loop
						   (attach: detach now) */
	struct stopall *holding;  /* every thread of a process is held by
				     this stopall already (attach's set-up):
				     patching must not stop them again */
	const struct inline_client *inline_client; /* tracer_init's */
};

/* ---- process.c: the tables of processes and threads ----
   These create, copy and free the records and the memory they own; the
   other concerns' state in them is lifecycle.c's (session.h). */
/* A new process PID, with no thread yet, in T's table. */
struct tproc *proc_new(struct tracer *t, pid_t pid);
/* A copy of PARENT for its fork CHILD (probes, scratch pages and objects
   seen are the same in its memory), in T's table; no thread, no ring, not
   profiled. */
struct tproc *proc_fork(struct tracer *t, struct tproc *parent, pid_t child);
/* Take P out of T's table and free it (NULL: nothing). */
void proc_free(struct tracer *t, struct tproc *p);
/* Reset P for a new program image (exec): no probes, scratch pages,
   objects or hooks of the old one. */
void proc_exec_reset(struct tproc *p);
/* The thread TID, or NULL when it is not traced. */
struct tracee *tracee_get(struct tracer *t, pid_t tid);
/* A new thread TID of P (NULL: not known yet) in T's table. */
struct tracee *tracee_add(struct tracer *t, pid_t tid, struct tproc *p);
/* Take TC out of T's table and free it. */
void tracee_remove(struct tracer *t, struct tracee *tc);

/* ---- waitq.c: wait statuses reaped out of turn ---- */
/* Keep STATUS of TID for the event loop, after those kept before. */
void waitq_push(struct tracer *t, pid_t tid, int status);
/* Take the oldest kept status into *TID, *STATUS; false when none. */
bool waitq_pop(struct tracer *t, pid_t *tid, int *status);
/* True when a kept status is TID's (it is stopped there, or gone). */
bool waitq_holds(const struct tracer *t, pid_t tid);
/* True when no status is kept. */
bool waitq_empty(const struct tracer *t);
/* Drop every kept status and the queue's memory. */
void waitq_free(struct tracer *t);

/* ---- stopall.c: every thread of a process held still ---- */
enum stopall_state {
	STOPALL_WAITING,   /* interrupted, its stop not seen yet */
	STOPALL_PARKED,    /* interrupted in a vfork wait: it stops before
			      running user code, not waited for */
	STOPALL_HERE,      /* at our interrupt stop: stopall_end resumes it */
	STOPALL_ELSEWHERE, /* at a stop the wait queue holds: the loop's */
	STOPALL_GONE,      /* exited, or taken by an exec */
};
/* The other threads of a process, as stopall_begin left them. */
struct stopall {
	struct stopall_thread {
		pid_t tid;
		enum stopall_state state;
	} *threads;
	size_t n, cap;
	int resume_req;    /* how stopall_end resumes them (tracer's) */
};
/* Stop every thread running P's code (its own, its vfork children's) but
   SELF (itself at a stop); every other status reaped meanwhile goes to the
   wait queue. 0 with each thread's state in *S, or negative (-ETIMEDOUT,
   -ECANCELED at an exec) with everything it stopped resumed. */
int stopall_begin(struct tracer *t, struct tproc *p, pid_t self,
		  struct stopall *s);
/* Stop one thread of P (one asleep when there is one), as stopall_begin
   would, into *S: a thread to inject system calls from while the others
   run. 0, or negative with nothing stopped. */
int stopall_one(struct tracer *t, struct tproc *p, struct stopall *s);
/* Resume the threads stopall_begin stopped, and free S. */
void stopall_end(struct stopall *s);
/* TC is at its exec stop with an interrupt of ours perhaps pending:
   single-step it out of the system call, taking that interrupt's stop on
   the way (a signal met meanwhile is sent again). 0 or -errno. */
int stopall_settle(struct tracer *t, struct tracee *tc);
/* True when thread TID of PID is a zombie (or gone): a leader that
   called pthread_exit stays one while other threads live; it accepts an
   interrupt but never stops. */
bool task_is_zombie(pid_t pid, pid_t tid);
/* True when thread TID of P is at work: running on a CPU or runnable, or
   blocked in a system call made from heaptrace's code in P (the inline
   stub waiting for room in its ring or for an answer); false when it
   sleeps in a system call of its own (or cannot be told). */
bool task_at_work(const struct tproc *p, pid_t tid);
/* True when STATUS reports a group-stop (PTRACE_EVENT_STOP, stop
   signal). */
bool status_is_group_stop(int status);

#endif
