/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer's own structures: traced processes, their threads, probes and
   pending allocator calls. Only tracer/ includes this. */
#ifndef HT_TRACER_TRACER_PRIV_H
#define HT_TRACER_TRACER_PRIV_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "arch/arch.h"
#include "common/u64map.h"
#include "tracer.h"

/* What a probe is for. */
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

/* A page of XOL slots (and the return trampoline) mapped into the target. */
struct scratch {
	uint64_t addr;
	size_t size;
	size_t used;
};

/* An allocator call whose return we wait for. */
struct pending_call {
	uint64_t slot;   /* stack address holding the hijacked return address */
	uint64_t orig;   /* the real return address */
	enum ht_alloc_fn fn;
	bool at_entry;   /* reported at its entry (a held free): nothing to
			    report at its return */
	uint64_t args[3];
	uint64_t obj_lo, obj_hi; /* object of the called function: calls it
				    makes into probed code are internal */
	uint64_t *pcs;   /* stack unwound at entry (owned) */
	unsigned npcs;
};

/* Allocator symbols loader.c looks for (malloc family, C++ operators,
   CPython's PyObject_* and PyMem_*). */
#define LOADER_MAX_SYMBOLS 48

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
	uint64_t r_debug;         /* ld.so's struct r_debug, 0 if static */
	uint64_t freeres[2];      /* __gnu_cxx::__freeres, __libc_freeres */
	bool bound[LOADER_MAX_SYMBOLS]; /* per loader.c symbol: an object
					   defined it already (first wins) */
	bool exit_bound;
	struct u64map objects_seen; /* link_map l_addr values already scanned */
	bool setup_done;          /* probes planted once after exec */
	bool profiling;           /* between process_start and process_end */
	bool detaching;           /* exec without --trace-children */
	struct inline_proc *inl;  /* the inline path's state, or NULL */
	bool inline_refused;      /* setting up the inline path failed */
	int n_threads;
	int64_t insn_base;        /* instructions counted outside live threads'
				     counters (exited threads, the parent before
				     a fork, minus the count before an exec) */
	uint64_t brk;             /* --pages-as-heap: the program break as
				     last seen (start_brk after exec) */
	/* --leak-check (leakstop.c): */
	int n_exit_stopped;       /* threads past their exit stop */
	uint64_t *exit_sps;       /* their stack pointers there */
	size_t n_exit_sps, cap_exit_sps;
	uint64_t ender_regs[LEAKROOTS_NREGS]; /* exit_group's caller's */
	bool have_ender_regs;
	bool leak_checked;        /* the scan was made */
};

/* A page-level system call stopped at its entry (--pages-as-heap=yes),
   waiting for its exit stop to be reported with its result. */
struct page_call {
	long nr;                  /* __NR_mmap ... (x32 bit cleared) */
	uint64_t args[6];
	uint64_t shm_size;        /* shmdt: the size of the segment at args[0] */
	uint64_t *pcs;            /* stack unwound at the entry (owned) */
	unsigned npcs;
	uint64_t sp;              /* the stack pointer at the call */
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

/* ---- loop.c: the event loop ---- */
/* Set up T for a session of OPT reporting to SINK. */
void tracer_init(struct tracer *t, const struct ht_options *opt,
		 const struct tracer_sink *sink);
/* Free everything T holds (the target is not touched). */
void tracer_fini(struct tracer *t);
/* Handle every stop until no thread is traced, or *T->stop_flag is set
   (then with the wait queue empty). */
void tracer_loop(struct tracer *t);
/* P's profile starts (process_start), PARENT as the sink takes it. */
void tracer_start_profile(struct tracer *t, struct tproc *p, pid_t parent);
/* P's profile ends (process_end) if it was started. */
void tracer_end_profile(struct tracer *t, struct tproc *p);
/* TC is at a clone/fork/vfork EVENT stop: register the new task. */
void tracer_on_new_task(struct tracer *t, struct tracee *tc, int event);
/* P exec'd in thread KEEP: forget its other threads. */
void tracer_drop_other_threads(struct tracer *t, struct tproc *p, pid_t keep);
/* TID (TC, or NULL if unknown) exited or was killed with STATUS. */
void tracer_on_gone(struct tracer *t, struct tracee *tc, pid_t tid,
		    int status);

/* ---- leakstop.c: when the leak check scans ---- */
/* PTRACE_O_TRACEEXIT when OPT asks for a leak check, else 0. */
long leakstop_ptrace_options(const struct ht_options *opt);
/* TC is at its PTRACE_EVENT_EXIT stop: when it is the last thread of its
   process to get there, the sink's leak_check sees the process. Resumes
   TC. */
void leakstop_on_exit_stop(struct tracer *t, struct tracee *tc);
/* P is about to be let go (detach), TID one of its threads, all held:
   the sink's leak_check sees P unless it saw it already. */
void leakstop_on_detach(struct tracer *t, struct tproc *p, pid_t tid);
/* Forget P's leak check state (exec, free). */
void leakstop_reset(struct tproc *p);
/* CHILD was just forked from PARENT: its own leak check state, with the
   exited threads' stacks PARENT had (the same memory). */
void leakstop_fork(struct tproc *child, const struct tproc *parent);

/* ---- attach.c / detach.c: profiling a running process ---- */
/* Let every thread of every traced process go, leaving each exactly as
   it was (code, return addresses, pending signals and system calls),
   and end their profiles. */
void detach_all(struct tracer *t);

/* ---- launch.c: starting the target ---- */
/* What failed in the child before the program ran. */
enum launch_stage { LAUNCH_EXEC, LAUNCH_SECCOMP };
/* Fork the target for ARGV, seize it, and let it exec (after installing
   the seccomp filter with --pages-as-heap=yes); *ERR_FD is to be given to
   launch_result. 0, or -errno with a one-line reason in ERR. */
int launch_spawn(struct tracer *t, char *const argv[], int *err_fd, char *err,
		 size_t errlen);
/* Once the target is gone: 0 when it ran, or -errno with a one-line
   reason in ERR when its exec (or its filter) failed. Closes ERR_FD. */
int launch_result(int err_fd, char *const argv[], char *err, size_t errlen);

/* ---- seccomp.c: the filter of --pages-as-heap=yes ---- */
/* Install in the calling process the filter that stops it at mmap,
   munmap, mremap, brk, shmat and shmdt (no_new_privs set only when the
   kernel requires it). 0 or -errno. */
int seccomp_install_page_filter(void);

/* ---- pagecalls.c: page-level calls (--pages-as-heap=yes) ---- */
/* TC is at a PTRACE_EVENT_SECCOMP stop: remember the call and its stack,
   and resume TC to its exit stop (or on, when not profiled). */
void pagecalls_on_seccomp(struct tracer *t, struct tracee *tc);
/* TC is at a syscall stop (SIGTRAP | 0x80): report the call begun at its
   seccomp stop if it succeeded, and resume TC. False when no call was
   pending (not ours). */
bool pagecalls_on_syscall_exit(struct tracer *t, struct tracee *tc);
/* P was just exec'd (TID at its exec stop): report the mappings the
   kernel made (executable, ld.so, initial stack) and read the break. */
void pagecalls_startup(struct tracer *t, struct tproc *p, pid_t tid);
/* Drop TC's call waiting for its exit, if any. */
void pagecalls_clear(struct tracee *tc);
/* Attached with --pages-as-heap=yes, TC is at a syscall entry or exit
   stop (PTRACE_SYSCALL): remember a page call at its entry, report it at
   its exit, and resume TC. */
void pagecalls_on_syscall_stop(struct tracer *t, struct tracee *tc);
/* Attached to P: report every mapping it has now as a start-up mapping,
   and its break. */
void pagecalls_attach_startup(struct tracer *t, struct tproc *p);

/* A page call of P recorded by the inline path (attached with
   --pages-as-heap=yes): FN (enum ring_page_fn) with ARGS returned RV
   (entry records: 0). Describe it as *EV (kind, addresses, sizes); false
   when it failed or changed nothing. */
bool pagecalls_describe_inline(struct tproc *p, unsigned fn,
			       const uint64_t args[3], uint64_t rv,
			       struct ht_event *ev);

/* ---- stacksample.c: stack sizes (--stacks=yes) ---- */
/* Report TC's stack size with stack pointer SP (an HT_EV_STACK event)
   when it changed since its last report; before TC's event at TIME. */
void stacksample_report(struct tracer *t, struct tracee *tc, uint64_t sp,
		   uint64_t time);

/* ---- maps.c: the target's mappings ---- */
/* One line of /proc/PID/maps. PATH is "" for an anonymous mapping, and is
   borrowed for the callback only. */
struct mapping {
	uint64_t lo, hi, offset;
	char perms[5];
	const char *path;
};
/* Called for each mapping; a nonzero return stops the walk (positive:
   found, negative: an error maps_foreach returns). */
typedef int (*maps_fn)(void *arg, const struct mapping *m);
/* Parse LINE (NUL terminated; its newline is cut) into *M, whose path
   points into LINE. False when it is no maps line. */
bool maps_parse_line(char *line, struct mapping *m);
/* Walk PID's mappings in address order. Returns 0 or -errno. */
int maps_foreach(pid_t pid, maps_fn fn, void *arg);

/* ---- mem.c: the target's memory ---- */
/* Read LEN bytes at ADDR of process PID; returns bytes read (maybe short
   at an unmapped page), or -errno. */
ssize_t mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Write LEN bytes at ADDR of writable memory (stack, data). 0 or -errno. */
int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* Write LEN bytes at ADDR even into read-only code (through P->mem_fd or
   PTRACE_POKEDATA). 0 or -errno. */
int mem_write_code(struct tproc *p, pid_t tid, uint64_t addr, const void *buf,
		   size_t len);

/* ---- inject.c: system calls run by a stopped thread ---- */
/* Make TID (stopped at a breakpoint, signal or interrupt stop) execute
   syscall NR with ARGS, then restore its registers. Returns 0 and the
   syscall's result in *RET, or -errno when the thread vanished. */
int inject_syscall(struct tproc *p, pid_t tid, long nr, const uint64_t args[6],
		   uint64_t *ret);
/* TID is at its exec event stop, inside execve: take it to the call's
   exit stop, from where syscalls can be injected. (A fork child's first
   stop is already past its syscall's exit: it needs nothing.) 0 or
   -errno. */
int inject_leave_exec(pid_t tid);
/* Put back the bytes the injection routine borrowed in P's code padding,
   if it did (TID stopped). */
void inject_forget(struct tproc *p, pid_t tid);
/* Find a "syscall" instruction in an executable mapping of P. 0 or
   -ENOENT. */
int inject_find_syscall(struct tproc *p);
/* Room for LEN bytes of code within rel32 reach of NEAR in P, mapping a
   scratch page when needed (TID stopped safely). 0 or -errno. */
int scratch_alloc(struct tproc *p, pid_t tid, uint64_t near, size_t len,
		  uint64_t *addr);

/* ---- probe.c: breakpoints ---- */
/* Plant a probe at ADDR in P (TID stopped at a safe stop, for injecting a
   scratch page within reach when needed). Returns 0 or -errno/-HT_E_*. */
int probe_plant(struct tproc *p, pid_t tid, uint64_t addr, enum probe_role role,
		enum ht_alloc_fn fn, uint64_t obj_lo, uint64_t obj_hi);
/* The probe at ADDR, or NULL. */
struct probe *probe_find(struct tproc *p, uint64_t addr);

/* Which of P's int3s a thread trapping with its pc just past AT + 1 hit. */
enum trap_site {
	TRAP_NOT_OURS,
	TRAP_RETURN,      /* the return trampoline (alloc_return) */
	TRAP_CALL_RETURN, /* the call trampoline (exit-time frees) */
	TRAP_PROBE,       /* an allocator entry probe: *PR */
};
/* Classify the int3 at AT; *PR gets the probe for TRAP_PROBE. */
enum trap_site probe_trap_site(struct tproc *p, uint64_t at,
			       struct probe **pr);
/* Ensure P has its return and call trampolines (TID stopped safely). */
int probe_ensure_trampolines(struct tproc *p, pid_t tid);
/* Continue TID past probe PR: set REGS to run the displaced instruction. */
int probe_step_over(struct tproc *p, pid_t tid, const struct probe *pr,
		    struct user_regs_struct *regs);

/* ---- loader.c: finding the allocator once libraries are mapped ---- */
/* After exec of P (TID at the exec stop): hook ld.so, or plant the
   allocator probes right away in a static executable. */
int loader_setup_exec(struct tracer *t, struct tproc *p, pid_t tid);
/* Attached to P (TID at an interrupt stop, every thread stopped): hook
   ld.so for later dlopens and plant the allocator probes of every object
   already loaded, or of a static executable. */
int loader_setup_attach(struct tracer *t, struct tproc *p, pid_t tid);
/* ld.so reported a change (TID at the _dl_debug_state probe, STOPPED; or
   waiting in its stub for the answer, running): plant probes in newly
   consistent objects, stopping P's threads first when TID runs. */
int loader_debug_state(struct tracer *t, struct tproc *p, pid_t tid,
		       bool stopped);

/* ---- alloc.c: allocator entry and return stops ---- */
/* TID hit allocator probe PR with REGS. */
int alloc_entry(struct tracer *t, struct tracee *tc, const struct probe *pr,
		struct user_regs_struct *regs);
/* TID returned through the trampoline with REGS. */
int alloc_return(struct tracer *t, struct tracee *tc,
		 struct user_regs_struct *regs);
/* TID hit libc's _exit: in compat mode, run the freeres functions first. */
int alloc_exit_hook(struct tracer *t, struct tracee *tc, const struct probe *pr,
		    struct user_regs_struct *regs);
/* TID came back from an injected freeres call. */
int alloc_call_return(struct tracer *t, struct tracee *tc,
		      struct user_regs_struct *regs);
/* Drop TC's pending calls. */
void alloc_pending_clear(struct tracee *tc);

/* ---- inline.c: the inline event path ---- */
struct inline_proc;
/* What a ring carries that the inline path delivers but does not
   interpret: records whose meaning is a concern above it. The session
   sets it (tracer_init) before any ring is made. */
struct inline_client {
	/* A NOTIFY record: ld.so changed its link map, TID waiting in its
	   stub (loader_debug_state). */
	int (*debug_state)(struct tracer *t, struct tproc *p, pid_t tid,
			   bool stopped);
	/* A page call record: describe it as *EV, false for none
	   (pagecalls_describe_inline). */
	bool (*describe_page)(struct tproc *p, unsigned fn,
			      const uint64_t args[3], uint64_t rv,
			      struct ht_event *ev);
};
/* Give P a ring and the stub blob (near NEAR); TID stopped safely. */
int inline_setup(struct tracer *t, struct tproc *p, pid_t tid, uint64_t near);
/* One allocator entry for inline_patch. */
struct inline_target {
	uint64_t addr;
	size_t func_len;          /* its ELF size, 0 unknown */
	enum ht_alloc_fn fn;
	uint64_t lo, hi;          /* the object holding it */
	int hook;                 /* 0: an allocator; RING_CLASS_NOTIFY
				     (_dl_debug_state), RING_CLASS_EXIT
				     (_exit, --massif-compat=yes), or a page
				     call's class (RING_CLASS_PAGE...) */
	unsigned hook_fn;         /* a page call's enum ring_page_fn */
	int err;                  /* set: 0 patched, negative: keep an int3 */
};
/* Patch each of the N TARGETS of P to record through the ring (TID
   stopped safely), P's other threads stopped once around all the writes;
   each target's ERR says how it went. */
void inline_patch(struct tracer *t, struct tproc *p, pid_t tid,
		  struct inline_target *targets, size_t n);
/* True when P records through a ring. */
bool inline_active(const struct tproc *p);
/* Deliver P's committed records, waiting up to WAIT_NS for one being
   written. Returns how many. */
long inline_drain(struct tracer *t, struct tproc *p, uint64_t wait_ns);
/* inline_drain of every process, without waiting. */
long inline_drain_all(struct tracer *t);
/* Bytes recorded in every ring and not drained yet. */
uint64_t inline_pending_all(struct tracer *t);
/* TC is stopped (attach, its first stop, a fork child's first stop):
   give it its thread-table entry (thread pointer, tid, stack bounds) so
   that its stubs record from its first call without asking anyone.
   A no-op when its process has no ring. */
void inline_thread_known(struct tracer *t, struct tracee *tc);
/* Detaching (detach.c), every thread of P stopped: drain P's ring, let
   the stubs pass every call straight through, take the patches out, and
   unmap what no thread can still reach (docs/inline-backend.md,
   "Detaching"). TID: a stopped thread to inject system calls from, 0 if
   none. */
void inline_detach(struct tracer *t, struct tproc *p, pid_t tid);
/* TC is exiting: drain, and forget its thread-table entry. */
void inline_thread_gone(struct tracer *t, struct tracee *tc);
/* Give CHILD, a fork of PARENT held at its first stop TID, a ring of its
   own at the same address. 0 or -errno. */
int inline_fork_child(struct tracer *t, struct tproc *parent,
		      struct tproc *child, pid_t tid);
/* TC (stopped at PTRACE_EVENT_VFORK) vforked CHILD, which runs in TC's
   process's memory until it execs or exits: it shares that ring, and its
   records there go to CHILD's profile, never to the parent's. */
void inline_vfork_child(struct tracee *tc, struct tproc *child);
/* TC runs again after its vfork (PTRACE_EVENT_VFORK_DONE): its records are
   its own again. */
void inline_vfork_done(struct tracee *tc);
/* Where P's ring is mapped in P: [*LO, *HI). False when it has none. */
bool inline_ring_extent(const struct tproc *p, uint64_t *lo, uint64_t *hi);
/* The doorbell of the ring P owns (ring.h), or NULL. */
uint32_t *inline_doorbell(struct tproc *p);
/* P's exit-time frees (P->freeres) are known: the _exit stub calls
   them (--massif-compat=yes). */
void inline_exit_frees(struct tproc *p);
/* P's code changed at some addresses (libraries mapped): the stubs' rules
   are asked for again. */
void inline_modules_changed(struct tproc *p);
/* Print P's inline counters (--stats=yes). */
void inline_report(struct tproc *p);
/* Free P's inline state (the target's copy goes with its image; a ring
   shared with vfork children lasts until the last of them is done). */
void inline_free(struct tproc *p);

/* ---- idle.c: the event loop's idle wait ---- */
#define IDLE_MAX_RINGS 127 /* futex_waitv takes 128 words */
/* What an idle wait waits on: rings' doorbells and SIGCHLD, each with
   the value it had when armed (struct futex_waitv's layout). */
struct idle_wait {
	struct {
		uint64_t val, uaddr;
		uint32_t flags, reserved;
	} v[IDLE_MAX_RINGS + 1];
	size_t n;
};
/* Give SIGCHLD the handler idle waits need (the old action into *OLD). */
void idle_install(struct sigaction *old);
/* Put SIGCHLD's action OLD back. */
void idle_restore(const struct sigaction *old);
/* Read the words an idle wait watches: before looking for work, so that
   what comes after wakes the wait. */
void idle_arm(struct tracer *t, struct idle_wait *w);
/* Sleep up to US microseconds, or until a stop, or a doorbell, since W
   was armed; SIGCHLD (CHLD) is blocked around it. */
void idle_wait(const struct idle_wait *w, const sigset_t *chld, unsigned us);

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
/* Resume the threads stopall_begin stopped, and free S. */
void stopall_end(struct stopall *s);
/* TC is at its exec stop with an interrupt of ours perhaps pending:
   single-step it out of the system call, taking that interrupt's stop on
   the way, as inject_step_out would without one. 0 or -errno. */
int stopall_settle(struct tracer *t, struct tracee *tc);
/* True when thread TID of PID is a zombie (or gone): a leader that
   called pthread_exit stays one while other threads live; it accepts an
   interrupt but never stops. */
bool task_is_zombie(pid_t pid, pid_t tid);
/* True when STATUS reports a group-stop (PTRACE_EVENT_STOP, stop
   signal). */
bool status_is_group_stop(int status);

/* ---- process.c: processes and threads ---- */
struct tproc *proc_new(struct tracer *t, pid_t pid);
struct tproc *proc_fork(struct tracer *t, struct tproc *parent, pid_t child);
void proc_free(struct tracer *t, struct tproc *p);
/* Reset P for a new program image (exec). */
void proc_exec_reset(struct tproc *p);
struct tracee *tracee_get(struct tracer *t, pid_t tid);
struct tracee *tracee_add(struct tracer *t, pid_t tid, struct tproc *p);
void tracee_remove(struct tracer *t, struct tracee *tc);

/* ---- lifecycle.c: a process or thread across every concern ---- */
/* A new thread TID of P (NULL: not known yet), its counter opened. */
struct tracee *lifecycle_thread_add(struct tracer *t, pid_t tid,
				    struct tproc *p);
/* TC is gone or let go: drop its state in every concern, then its
   record. */
void lifecycle_thread_remove(struct tracer *t, struct tracee *tc);
/* PARENT forked CHILD: its record, a copy of PARENT's. */
struct tproc *lifecycle_proc_fork(struct tracer *t, struct tproc *parent,
				  pid_t child);
/* P has a new program image (exec): reset every concern's state. */
void lifecycle_proc_exec(struct tproc *p);
/* P is gone or let go: drop its state in every concern, then its record
   (NULL: nothing). */
void lifecycle_proc_free(struct tracer *t, struct tproc *p);

/* ---- clock.c: the session's clock ---- */
/* Milliseconds since the tracer started. */
uint64_t tracer_now_ms(const struct tracer *t);

/* ---- perfcount.c: the instruction clock ---- */
/* Open TC's instruction counter when the clock is instructions. */
void perfcount_thread_start(struct tracer *t, struct tracee *tc);
/* Fold TC's final count into its process and close the counter. */
void perfcount_thread_end(struct tracee *tc);
/* Instructions P has executed. */
uint64_t perfcount_process(struct tracer *t, const struct tproc *p);
/* The current time of P in the session's unit (ms or instructions); 0 when
   the unit is bytes, which the engine counts itself. */
uint64_t tracer_clock(struct tracer *t, const struct tproc *p);

/* ---- ondemand.c: snapshots asked for with SIGUSR1 ---- */
/* Make SIGUSR1 ask for a snapshot (the previous action into *OLD). */
void ondemand_install(struct sigaction *old);
/* Put SIGUSR1's action OLD back. */
void ondemand_restore(const struct sigaction *old);
/* True when a snapshot was asked for and not served yet. */
bool ondemand_pending(void);
/* waitpid(-1, STATUS, __WALL), blocking, ended early (-1, EINTR) by a
   snapshot request, including one that came just before it. */
pid_t ondemand_waitpid(int *status);
/* When a snapshot was asked for: drain every ring, then give the sink's
   snapshot callback each profiled process with its clock now. */
void ondemand_serve(struct tracer *t);

#endif
