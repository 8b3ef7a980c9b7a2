/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Holding every thread of a process still while its code is rewritten (an
   inline patch: no thread may run the bytes being replaced), its vfork
   children's too, which run in its memory.

   Each thread that may be running gets a PTRACE_INTERRUPT, and we wait for
   its interrupt stop (PTRACE_EVENT_STOP with SIGTRAP). Whatever else
   waitpid reports meanwhile is the event loop's: it goes to the wait queue
   (waitq.c), in order, and a thread that reported such a stop stays
   stopped there, for the loop to resume when it handles that status. Not
   interrupted: the caller's thread (stopped at the stop being handled), a
   thread whose status the queue already holds (stopped, or gone), a thread
   not yet at its first stop (it runs no code before the loop resumes it),
   and a zombie leader (it never stops again). A thread waiting in vfork
   for its child to exec is interrupted but not waited for: the child may
   be held at a stop only the loop will resume, and the thread cannot run
   user code before it stops (VFORK_DONE, or our interrupt). stopall_end
   resumes exactly the threads that stopped for us.

   An interrupt sent to a thread that was already in a ptrace-stop stays
   pending until that thread is resumed, and then gives one more
   PTRACE_EVENT_STOP: the loop resumes it like any other, and
   tracee.interrupt_pending says one may come (it matters where the loop
   single-steps a thread itself: out of exec, stopall_settle). */
#include "tracer/proc/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/monotonic.h"
#include "common/xalloc.h"

/* Long enough for busy threads on an overloaded machine to be scheduled
   (4 spinning threads took up to 340 ms to stop on 2 CPUs with a load of
   16); a thread that cannot stop (in an uninterruptible sleep) costs this
   once, and the functions keep their int3 probes. */
#define STOP_TIMEOUT_MS 5000

bool
status_is_group_stop(int status)
{
	if (!WIFSTOPPED(status) || (status >> 16) != PTRACE_EVENT_STOP)
		return false;
	int sig = WSTOPSIG(status);
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN ||
	       sig == SIGTTOU;
}

static bool
is_interrupt_stop(int status)
{
	return WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP &&
	       !status_is_group_stop(status);
}


/* Thread TID's state letter in /proc (R, S, D, Z...), 'X' when gone. */
static char
task_state(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 'X'; /* gone already */
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	const char *paren = strrchr(buf, ')'); /* the name may hold spaces */
	return paren && paren[1] == ' ' ? paren[2] : '?';
}

bool
task_is_zombie(pid_t pid, pid_t tid)
{
	char st = task_state(pid, tid);
	return st == 'Z' || st == 'X';
}

bool
task_at_work(const struct tproc *p, pid_t tid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/syscall", (int)p->pid,
		 (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	if (!strncmp(buf, "running", 7))
		return true;
	/* "NR ARG0..ARG5 SP PC" of the system call it is blocked in: one the
	   stub makes (waiting for room in the ring, or for an answer) is
	   work held up by heaptrace, not sleep. */
	const char *pc = strrchr(buf, ' ');
	uint64_t at = pc ? strtoull(pc + 1, NULL, 16) : 0;
	for (size_t i = 0; i < p->n_scratch; i++)
		if (at >= p->scratch[i].addr &&
		    at < p->scratch[i].addr + p->scratch[i].size)
			return true;
	return false;
}

static void
add_thread(struct stopall *s, pid_t tid, enum stopall_state state)
{
	ht_xgrow((void **)&s->threads, &s->cap, s->n + 1, sizeof(*s->threads));
	s->threads[s->n++] = (struct stopall_thread){ .tid = tid,
						      .state = state };
}

/* S's thread TID through INDEX (tid -> its place in S's array + 1). */
static struct stopall_thread *
find_thread(struct stopall *s, const struct u64map *index, pid_t tid)
{
	const uint64_t *at = u64map_get(index, (uint64_t)tid);
	return at ? &s->threads[*at - 1] : NULL;
}

static size_t
count_waiting(const struct stopall *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += s->threads[i].state == STOPALL_WAITING;
	return n;
}

/* Q's code is P's: Q is P, or a vfork child of P running in its memory
   (inline_vfork_child gives it P's ring). */
static bool
runs_in(const struct tproc *q, const struct tproc *p)
{
	return q == p || (q && p->inl && q->inl == p->inl);
}

static void
interrupt_thread(struct stopall *s, struct tracee *tc)
{
	if (ptrace(PTRACE_INTERRUPT, tc->tid, NULL, NULL) == 0)
		add_thread(s, tc->tid, tc->in_vfork ? STOPALL_PARKED
						    : STOPALL_WAITING);
	/* else it is exiting: the loop gets its exit status */
}

/* Interrupt every thread running P's code that may be running, but SELF
   and those at work now (task_at_work), which go into *LATE (malloc'd,
   *N_LATE of them) to be interrupted once the others have stopped. */
static void
interrupt_threads(struct tracer *t, struct tproc *p, pid_t self,
		  struct stopall *s, pid_t **late, size_t *n_late)
{
	size_t pos = 0, cap = 0;
	uint64_t key, val;
	*late = NULL;
	*n_late = 0;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (!runs_in(tc->proc, p) || tc->tid == self ||
		    tc->first_stop_pending)
			continue;
		if (waitq_holds(t, tc->tid)) {
			add_thread(s, tc->tid, STOPALL_ELSEWHERE);
		} else if (tc->tid == p->pid &&
			   task_is_zombie(p->pid, tc->tid)) {
			continue;
		} else if (!tc->in_vfork && task_at_work(p, tc->tid)) {
			ht_xgrow((void **)late, &cap, *n_late + 1,
				 sizeof(**late));
			(*late)[(*n_late)++] = tc->tid;
		} else {
			interrupt_thread(s, tc);
		}
	}
}

/* The threads of LATE still traced and not stopped meanwhile. */
static void
interrupt_late(struct tracer *t, struct stopall *s, const pid_t *late,
	       size_t n_late)
{
	for (size_t i = 0; i < n_late; i++) {
		struct tracee *tc = tracee_get(t, late[i]);
		if (!tc)
			continue;
		if (waitq_holds(t, tc->tid))
			add_thread(s, tc->tid, STOPALL_ELSEWHERE);
		else
			interrupt_thread(s, tc);
	}
}

/* An exec in P: every other thread went with the old image, and the
   leader's tid now names the thread that exec'd, at its exec stop, which
   the loop handles. Nothing is left to patch or resume. */
static int
on_exec_seen(struct stopall *s, struct tracee *tc)
{
	for (size_t i = 0; i < s->n; i++)
		s->threads[i].state = STOPALL_GONE;
	tc->interrupt_pending = true;
	return -ECANCELED;
}

/* TID reported STATUS while we wait for P's interrupt stops. */
static int
note_status(struct tracer *t, struct tproc *p, struct stopall *s,
	    struct stopall_thread *th, pid_t tid, int status)
{
	struct tracee *tc = tracee_get(t, tid);
	bool asked = th && (th->state == STOPALL_WAITING ||
			    th->state == STOPALL_PARKED);
	if (asked && is_interrupt_stop(status)) {
		th->state = STOPALL_HERE;
		if (tc)
			tc->interrupt_pending = false;
		return 0;
	}
	waitq_push(t, tid, status);
	if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_EXEC && tc &&
	    tc->proc == p)
		return on_exec_seen(s, tc);
	if (!th)
		return 0; /* another process, or a thread not interrupted */
	if (asked && WIFSTOPPED(status) && tc)
		tc->interrupt_pending = true;
	th->state = WIFSTOPPED(status) ? STOPALL_ELSEWHERE : STOPALL_GONE;
	return 0;
}

/* Collect the interrupt stops of S's waiting threads, keeping every other
   status for the loop. SIGCHLD is blocked meanwhile, so that a stop that
   comes between a waitpid and the sleep ends the sleep. Linear in the
   threads: each status finds its thread through an index, and the
   threads still waited for are counted, not counted again. */
static int
wait_stops(struct tracer *t, struct tproc *p, struct stopall *s)
{
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	struct u64map index;
	u64map_init(&index);
	for (size_t i = 0; i < s->n; i++)
		u64map_put(&index, (uint64_t)s->threads[i].tid, i + 1);
	size_t waiting = count_waiting(s);
	uint64_t deadline = ht_monotonic_ms() + STOP_TIMEOUT_MS;
	int err = 0;
	while (!err && waiting) {
		int status;
		pid_t tid = waitpid(-1, &status, __WALL | WNOHANG);
		if (tid > 0) {
			struct stopall_thread *th = find_thread(s, &index, tid);
			bool was = th && th->state == STOPALL_WAITING;
			err = note_status(t, p, s, th, tid, status);
			if (err == -ECANCELED)
				waiting = 0; /* every thread went with the exec */
			else if (was && th->state != STOPALL_WAITING)
				waiting--;
			continue;
		}
		if (tid < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		uint64_t now = ht_monotonic_ms();
		if (now >= deadline) {
			err = -ETIMEDOUT;
			break;
		}
		uint64_t left = deadline - now;
		struct timespec ts = {
			.tv_sec = (time_t)(left / 1000),
			.tv_nsec = (long)(left % 1000) * 1000000,
		};
		sigtimedwait(&chld, NULL, &ts);
	}
	u64map_fini(&index);
	sigprocmask(SIG_SETMASK, &old, NULL);
	return err;
}

int
stopall_begin(struct tracer *t, struct tproc *p, pid_t self,
	      struct stopall *s)
{
	*s = (struct stopall){ .resume_req = t->resume_req };
	uint64_t t0 = ht_monotonic_ms();
	/* Two waves: the threads asleep first, which take long to stop all
	   (each has to be woken and scheduled: 60 ms for a thousand on two
	   CPUs), then those at work (task_at_work), which stop at once. A
	   thread at work then stands still for the second wave only, plus
	   what is done with everything held, and stopall_end resumes it
	   first. */
	pid_t *late;
	size_t n_late;
	interrupt_threads(t, p, self, s, &late, &n_late);
	size_t first = s->n;
	int err = count_waiting(s) ? wait_stops(t, p, s) : 0;
	uint64_t t1 = ht_monotonic_ms();
	if (!err && n_late) {
		first = s->n;
		interrupt_late(t, s, late, n_late);
		err = count_waiting(s) ? wait_stops(t, p, s) : 0;
	}
	free(late);
	if (s->n)
		ht_debug("process %d: %zu other threads held in %llu ms, the "
			 "last %zu (running) in %llu ms", (int)p->pid, s->n,
			 (unsigned long long)(ht_monotonic_ms() - t0), s->n - first,
			 (unsigned long long)(ht_monotonic_ms() - t1));
	/* The interrupt stops not seen here reach the loop, which resumes
	   them. */
	for (size_t i = 0; i < s->n; i++) {
		enum stopall_state st = s->threads[i].state;
		struct tracee *tc = tracee_get(t, s->threads[i].tid);
		if ((st == STOPALL_WAITING || st == STOPALL_PARKED) && tc)
			tc->interrupt_pending = true;
	}
	if (!err)
		return 0;
	ht_debug("process %d: cannot stop every thread: %s", (int)p->pid,
		 ht_strerror(err));
	stopall_end(s);
	return err;
}

/* A thread of P to stop alone: one asleep when there is one (a thread at
   work would stand still for as long as it is held), not a zombie
   leader, none whose status the queue holds. 0 when there is none. */
static pid_t
one_to_stop(struct tracer *t, struct tproc *p)
{
	pid_t any = 0;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (tc->proc != p || tc->first_stop_pending || tc->in_vfork ||
		    waitq_holds(t, tc->tid))
			continue;
		char st = task_state(p->pid, tc->tid);
		if (st == 'Z' || st == 'X')
			continue;
		if (!task_at_work(p, tc->tid))
			return tc->tid;
		if (!any)
			any = tc->tid;
	}
	return any;
}

int
stopall_one(struct tracer *t, struct tproc *p, struct stopall *s)
{
	*s = (struct stopall){ .resume_req = t->resume_req };
	for (int tries = 0; tries < 8; tries++) {
		pid_t tid = one_to_stop(t, p);
		if (!tid)
			return -ESRCH;
		struct tracee *tc = tracee_get(t, tid);
		interrupt_thread(s, tc);
		int err = count_waiting(s) ? wait_stops(t, p, s) : 0;
		if (err) {
			stopall_end(s);
			return err;
		}
		for (size_t i = 0; i < s->n; i++)
			if (s->threads[i].state == STOPALL_HERE)
				return 0;
		/* it exited, or stopped for something else: another */
	}
	stopall_end(s);
	return -EAGAIN;
}

void
stopall_end(struct stopall *s)
{
	/* The last stopped first: those that were running. */
	for (size_t i = s->n; i-- > 0;)
		if (s->threads[i].state == STOPALL_HERE)
			ptrace((enum __ptrace_request)s->resume_req,
			       s->threads[i].tid, NULL, NULL);
	free(s->threads);
	*s = (struct stopall){ 0 };
}

int
stopall_settle(struct tracer *t, struct tracee *tc)
{
	int other_sig = 0;
	for (int tries = 0; tries < 4; tries++) {
		if (ptrace(PTRACE_SINGLESTEP, tc->tid, NULL, NULL) < 0)
			return -errno;
		int status;
		if (waitpid(tc->tid, &status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(status)) {
			waitq_push(t, tc->tid, status); /* for the loop */
			return -ESRCH;
		}
		if ((status >> 16) == PTRACE_EVENT_STOP) {
			/* the pending interrupt, before the step's trap */
			tc->interrupt_pending = false;
			continue;
		}
		if ((status >> 16) != 0 || WSTOPSIG(status) != SIGTRAP) {
			if ((status >> 16) == 0)
				other_sig = WSTOPSIG(status);
			continue;
		}
		if (other_sig) /* delivered once the thread runs on */
			syscall(SYS_tgkill, tc->proc ? tc->proc->pid : tc->tid,
				tc->tid, other_sig);
		return 0;
	}
	return -EAGAIN;
}
