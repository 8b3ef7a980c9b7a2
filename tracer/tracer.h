/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer: runs a target under ptrace, follows its threads, forks and
   execs, and reports every completed allocator call as an event. How calls
   are intercepted is a backend's business (probes/, inline/); what comes out
   is the same struct ht_event whatever the backend. */
#ifndef HT_TRACER_TRACER_H
#define HT_TRACER_TRACER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "common/event.h"
#include "common/options.h"
#include "common/unwind_rule.h"
#include "tracer/leak/leakroots.h"

/* The stack as captured at an allocator's entry, for unwinding. Borrowed
   for the duration of the callback. */
struct tracer_capture {
	struct user_regs_struct regs;
	const uint8_t *stack; /* LEN bytes copied from STACK_ADDR (= regs.rsp) */
	size_t len;
	uint64_t stack_addr;
	bool running;         /* the thread ran on since: memory outside the
				 copy is no longer what it was */
};

/* A process stopped for the leak check (--leak-check): every thread of it
   stopped, its memory as the program left it. Borrowed for the callback;
   read the process through TID (its leader may be a zombie already). */
struct tracer_leak_view {
	pid_t tid;               /* a stopped thread of the process */
	const uint64_t *regs;    /* root registers: the general registers of
				    the threads memcheck would count alive
				    (at an exit, the one that ended it) */
	size_t nregs;
	const uint64_t *sps;     /* stack pointers of its threads, those that
				    exited included: a stack counts from its
				    lowest one up (leakroots.h) */
	size_t nsps;
	const struct leakroots_range *own; /* heaptrace's own pages in it */
	size_t nown;
	bool exiting;            /* at its exit (else: heaptrace detaches) */
};

/* What the tracer tells its user. CTX is passed back to every member; no
   member but STUB_RULE and ALLOCATOR may be NULL. Callbacks run while the
   reporting thread is stopped. */
struct tracer_sink {
	void *ctx;
	/* Process PID starts a profile: the target once exec'd (PARENT 0), a
	   forked child of PARENT (which inherits PARENT's state), or a process
	   that exec'd with --trace-children=yes (PARENT == PID). TIME is the
	   start time in the profile's unit (ms or instructions). */
	void (*process_start)(void *ctx, pid_t pid, pid_t parent, uint64_t time);
	/* PID's set of loaded objects changed (libraries mapped, dlopen). */
	void (*modules_changed)(void *ctx, pid_t pid);
	/* Unwind CAP, captured at an allocator's entry in PID, into at most
	   MAX code addresses, innermost first. Returns how many. */
	unsigned (*unwind)(void *ctx, pid_t pid,
			   const struct tracer_capture *cap, uint64_t *pcs,
			   unsigned max);
	/* How UNWIND steps from a frame whose lookup pc is LOOKUP_PC (its pc
	   for the innermost frame, the return address minus one for others)
	   in PID to its caller, into *OUT, for the inline path to unwind in
	   the target: the rule must give exactly the frames UNWIND would.
	   Returns 0, or -ENOTSUP when it cannot be written so (stacks through
	   that frame then come to UNWIND as copies), or another negative
	   error (this stack only is copied). NULL: stacks are always copied. */
	int (*stub_rule)(void *ctx, pid_t pid, uint64_t lookup_pc,
			 struct ht_unwind_rule *out);
	/* The lookup pcs whose rules STUB_RULE can give at once (kept from
	   an earlier run), as a malloc'd array in *OUT; their number. May
	   be NULL. */
	size_t (*known_rule_pcs)(void *ctx, pid_t pid, uint64_t **out);
	/* PID's malloc was found: glibc's (libc.so.6, or a static glibc)
	   when GLIBC, else another allocator's (jemalloc, tcmalloc, the
	   program's own). Once per program image, before its first event,
	   possibly before its process_start (static executables). May be
	   NULL. */
	void (*allocator)(void *ctx, pid_t pid, bool glibc);
	/* One completed allocator call in PID, with the stack unwound at its
	   entry (none for frees: Massif needs no stack for them). */
	void (*event)(void *ctx, pid_t pid, const struct ht_event *ev);
	/* The heap bytes PID's profile counts now (mem_heap_B), after the
	   events reported so far: what the exec-wrapper rule measures. NULL:
	   no exec is taken for a wrapper's. */
	uint64_t (*heap_bytes)(void *ctx, pid_t pid);
	/* PID's profile is complete: it exited, was killed, exec'd or was
	   detached from, at TIME (its clock, as for process_start).
	   BACKEND names how its allocator calls were caught. */
	void (*process_end)(void *ctx, pid_t pid, uint64_t time,
			    const char *backend);
	/* PID's profile ends unwritten, in place of its process_end (a
	   small program --follow-exec=work reached). May be NULL: then
	   every profile is written. */
	void (*process_drop)(void *ctx, pid_t pid);
	/* A snapshot of PID's profile so far was asked for (SIGUSR1 sent
	   to heaptrace): every call PID made before the request has been
	   reported. TIME is PID's clock now, as for process_start. Called
	   between events, for each profiled process in turn. May be NULL. */
	void (*snapshot)(void *ctx, pid_t pid, uint64_t time);
	/* --leak-check: PID is stopped for the scan, every call it made
	   already reported (events, then this, then its process_end). Once
	   per process: at its exit (not at an exec), or for an attached
	   process at the detach when it did not exit before. May be NULL. */
	void (*leak_check)(void *ctx, pid_t pid,
			   const struct tracer_leak_view *view);
};

/* How the target ended. */
struct tracer_result {
	int exit_status; /* what heaptrace should exit with: the target's status,
			    or 128+N when signal N killed it */
	bool signaled;
	int signal;
};

/* Check that ARGV[0] names something execvp can run: exists (through
   PATH when it has no slash), is a regular executable file, and is an ELF
   file, a #! script or a text file (run by /bin/sh, as a shell would; a
   binary non-ELF file is refused). Returns 0, or -errno / -HT_E_FORMAT
   with a one-line reason in ERR. */
int tracer_check_program(char *const argv[], char *err, size_t errlen);

/* Run ARGV under the tracer with OPT, reporting to SINK, until the target
   and every traced descendant are gone, or a second SIGTERM, SIGHUP or
   SIGINT to heaptrace (the first is the target's) makes it detach and
   wait for the target untraced. Returns 0 and fills *RES, or a negative
   error with a one-line reason in ERR (nothing could be run). */
int tracer_run(const struct ht_options *opt, char *const argv[],
	       const struct tracer_sink *sink, struct tracer_result *res,
	       char *err, size_t errlen);

/* 0 when PID looks like a process heaptrace can attach to (it exists,
   is not heaptrace, a thread id, a kernel thread or a zombie, and has no
   tracer yet), else a negative error with a one-line reason in ERR.
   Permissions are known only by trying (tracer_attach). */
int tracer_attach_check(pid_t pid, char *err, size_t errlen);

/* Profile the running process PID with OPT (the ptrace backend whatever
   its --backend), reporting to SINK, until SIGINT, SIGTERM or SIGHUP
   reaches heaptrace, OPT->duration seconds pass, or the process exits;
   then detach, leaving it as it was, and end its profile. Returns 0 and fills
   *RES (exit status 0 when detached), or a negative error with a one-line
   reason in ERR (the process is left untouched). */
int tracer_attach(const struct ht_options *opt, pid_t pid,
		  const struct tracer_sink *sink, struct tracer_result *res,
		  char *err, size_t errlen);

/* From a sink's callback: end the session after the callback, as a
   signal to detach would (tracer_attach detaches and returns; tracer_run
   detaches, then waits for the program, untraced, to end). */
void tracer_request_detach(void);

/* True when this machine can count a process's user-space instructions
   (--time-unit=i); otherwise heaptrace records milliseconds. */
bool tracer_instructions_available(void);


#endif
