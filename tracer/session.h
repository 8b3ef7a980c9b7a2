/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The top of the tracer: the session. The event loop (loop.c) with its
   idle wait (idle.c), snapshots on demand (ondemand.c) and periodic ones
   (periodic.c), the ways a session starts (launch.c: `run`; attach.c:
   `attach`) and ends (detach.c), and what creates and drops a process or
   thread across every concern (lifecycle.c). These may call every
   concern below them (proc/, target/, measure/, inline/, probes/, pages/,
   leak/); none of those includes this header. */
#ifndef HT_TRACER_SESSION_H
#define HT_TRACER_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "tracer/proc/proc.h"

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
/* The target's wait STATUS is the session's result. */
void tracer_record_result(struct tracer *t, int status);
/* Watch T's profiles for exec wrappers (--follow-exec), REAL the sink
   reported to: T's sink is replaced by the watching one. */
void tracer_watch_install(struct tracer *t, const struct tracer_sink *real);
/* The session is over: say what the wrapper rule left out, then forget
   (T's sink is the real one again). */
void tracer_watch_finish(struct tracer *t);
/* TID (TC, or NULL if unknown) exited or was killed with STATUS. */
void tracer_on_gone(struct tracer *t, struct tracee *tc, pid_t tid,
		    int status);

/* ---- detach.c: leaving a running process as it was ---- */
/* Let every thread of every traced process go, leaving each exactly as
   it was (code, return addresses, pending signals and system calls),
   and end their profiles. */
void detach_all(struct tracer *t);

/* ---- launch.c: starting the target (run.c: the whole `run`) ---- */
/* Fork the target for ARGV, seize it, and let it exec (after installing
   the seccomp filter with --pages-as-heap=yes); *ERR_FD is to be given to
   launch_result. 0, or -errno with a one-line reason in ERR. */
int launch_spawn(struct tracer *t, char *const argv[], int *err_fd, char *err,
		 size_t errlen);
/* Once the target is gone: 0 when it ran, or -errno with a one-line
   reason in ERR when its exec (or its filter) failed. Closes ERR_FD. */
int launch_result(int err_fd, char *const argv[], char *err, size_t errlen);

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
/* TC, the one thread of a fork child of PARENT held at its first stop,
   could not be set up (WHY, a negative error), its profile ended: its
   code as it was before heaptrace (PARENT's hooks taken out), it runs on
   untraced, and its records go (TC included). */
void lifecycle_release_fork_child(struct tracer *t, struct tracee *tc,
				  const struct tproc *parent, int why);

/* ---- privileges.c: a privileged program run without its privileges ---- */
/* PID has just exec'd (at its exec event stop): when the kernel withheld
   the privileges its program asks for (set-user-ID, set-group-ID, file
   capabilities) because it is traced, say so in one warning. */
void privileges_check_exec(pid_t pid);

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
/* End ondemand_waitpid's wait at once, or its next one: another
   handler's request to the loop. Async-signal-safe; the caller's handler
   must be SA_NODEFER, as it may not return. */
void ondemand_wake(void);
/* When a snapshot was asked for: drain every ring, then give the sink's
   snapshot callback each profiled process with its clock now. */
void ondemand_serve(struct tracer *t);

/* Whether the sink asked, through tracer_request_detach, for the loop
   to end and the processes to be detached from. */
bool loop_detach_requested(void);

/* ---- periodic.c: snapshots every --snapshot-every seconds ---- */
/* A timer raising ondemand's request (SIGUSR1) in heaptrace. */
struct periodic {
	timer_t timer;
	bool armed;
};
/* Ask for a snapshot every MS milliseconds from now (0: never),
   SIGUSR1's action being ondemand's already. 0, or -errno (no timer: none
   is asked for). */
int periodic_start(struct periodic *pt, uint64_t ms);
/* No more requests from PT (nothing when it was not started). */
void periodic_stop(struct periodic *pt);

/* ---- forward.c: SIGTERM, SIGHUP and SIGINT to `heaptrace run` ---- */
#define FORWARD_SIGNALS 3
/* The actions forward_install replaced. */
struct forward_saved {
	struct sigaction act[FORWARD_SIGNALS];
};
/* Catch SIGTERM, SIGHUP and SIGINT for T, a `run` session (the old
   actions into *OLD); T->stop_flag is set when the loop is to stop for a
   detach (forward_detach_asked). */
void forward_install(struct tracer *t, struct forward_saved *old);
/* Between two stops: give each signal caught to the program unless it
   had its own copy (the first), or ask for a detach (a second, or any
   once the program is gone). Cheap when nothing was caught. */
void forward_serve(struct tracer *t);
/* True while a caught signal waits to be looked for in the program: the
   loop must poll, not block, and call forward_idle when no stop waits. */
bool forward_deciding(void);
/* No stop waits to be reaped: decide whether the program had its own
   copy of the signal caught, and forward it if not. */
void forward_idle(struct tracer *t);
/* TC is at a signal-delivery stop of SIG (which it is given). */
void forward_delivered(struct tracer *t, struct tracee *tc, int sig);
/* True when a signal asked for the detach. */
bool forward_detach_asked(void);
/* Detached: SIGINT ignored, SIGTERM and SIGHUP back to their defaults,
   while heaptrace waits for the program. */
void forward_after_detach(void);
/* Put the actions OLD back. */
void forward_restore(const struct forward_saved *old);

#endif
