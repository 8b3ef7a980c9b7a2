/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Profiling a process that is already running (`heaptrace attach`): every
   thread is seized (the task list is read again until a pass finds no new
   thread; threads the seized ones create are attached by TRACECLONE), the
   allocators are hooked from one thread stopped, found through the link
   map ld.so keeps (loader.c), every thread being stopped (stopall.c) only
   while code is written (setup_profile), and the session then runs
   the same event loop as `run` until heaptrace is asked to stop (SIGINT,
   SIGTERM, SIGHUP, --duration) or the target exits; detach.c then takes
   everything out again.

   The allocators are hooked as under `run`: through the inline path
   (--backend=auto or inline: the stub and its ring mapped into the
   target, each entry jumped over to it), with every thread given its
   thread-table entry before it runs again, or by int3 probes
   (--backend=ptrace, a function the inline path cannot patch, or when the
   inline path cannot be set up). The stubs never wait for heaptrace: if
   it dies, SIGKILL included, the kernel detaches the threads and the
   stubs pass every call through (ring.h). No seccomp filter is ever
   installed here: without a tracer its SECCOMP_RET_TRACE would make page
   calls fail with ENOSYS after the detach. --pages-as-heap=yes catches
   the page calls through stubs too, or, with --backend=ptrace, resumes
   every thread with PTRACE_SYSCALL instead (tracing-techniques.md §4.3,
   §4.4).

   Calls in flight when the allocators are hooked were never seen
   entering: their returns are not reported, and the blocks they (and
   everything before the attach) made are unknown to the engine, which
   counts a free of an unknown block as nothing. */
#include "tracer/session.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <unistd.h>

#include "common/err.h"
#include "tracer/inline/inline.h"
#include "tracer/leak/leak.h"
#include "tracer/pages/pages.h"
#include "tracer/probes/probes.h"
#include "tracer/target/target.h"

/* Options every seized thread gets; no PTRACE_O_EXITKILL: a tracer that
   dies must not take the process with it. */
#define ATTACH_OPTIONS                                                      \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |   \
	 PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXEC |                     \
	 PTRACE_O_TRACESYSGOOD) /* inject.c tells its syscall stops apart */

#define PF_KTHREAD_FLAG 0x00200000UL /* include/linux/sched.h */
#define SEIZE_PASSES 1000

static volatile sig_atomic_t detach_requested;

static void
on_detach_signal(int sig)
{
	(void)sig;
	detach_requested = 1;
}

/* What /proc/PID/status and /proc/PID/stat say about the target. */
struct target_info {
	char state;
	long tracer_pid;
	long tgid;
	unsigned long flags;
	int n_tasks;
};

static int
count_tasks(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return 0;
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static int
read_target_info(pid_t pid, struct target_info *ti)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	*ti = (struct target_info){ .tgid = pid };
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "State:", 6))
			sscanf(line + 6, " %c", &ti->state);
		else if (!strncmp(line, "TracerPid:", 10))
			ti->tracer_pid = strtol(line + 10, NULL, 10);
		else if (!strncmp(line, "Tgid:", 5))
			ti->tgid = strtol(line + 5, NULL, 10);
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f) {
		size_t n = fread(line, 1, sizeof(line) - 1, f);
		line[n] = 0;
		fclose(f);
		/* field 9, the flags, counted from the state after the name */
		const char *rest = strrchr(line, ')');
		unsigned long v = 0;
		if (rest && sscanf(rest + 1, " %*c %*d %*d %*d %*d %*d %lu",
				   &v) == 1)
			ti->flags = v;
	}
	ti->n_tasks = count_tasks(pid);
	return 0;
}

/* The command name of PID, for messages. */
static void
process_name(pid_t pid, char *buf, size_t len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "re");
	buf[0] = 0;
	if (f) {
		if (fgets(buf, (int)len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

int
tracer_attach_check(pid_t pid, char *err, size_t errlen)
{
	if (pid == getpid()) {
		snprintf(err, errlen, "attach: %d is heaptrace itself",
			 (int)pid);
		return -EINVAL;
	}
	struct target_info ti;
	int rc = read_target_info(pid, &ti);
	if (rc) {
		snprintf(err, errlen, "attach: no process %d%s", (int)pid,
			 rc == -ENOENT ? "" : ": cannot read /proc");
		return -ESRCH;
	}
	if (ti.tgid != pid) {
		snprintf(err, errlen, "attach: %d is a thread of process %ld; "
			 "attach to the process", (int)pid, ti.tgid);
		return -EINVAL;
	}
	if (ti.tgid == getpid()) {
		snprintf(err, errlen, "attach: %d is heaptrace itself",
			 (int)pid);
		return -EINVAL;
	}
	if (ti.flags & PF_KTHREAD_FLAG) {
		snprintf(err, errlen, "attach: process %d is a kernel thread",
			 (int)pid);
		return -EPERM;
	}
	if ((ti.state == 'Z' || ti.state == 'X') && ti.n_tasks <= 1) {
		snprintf(err, errlen, "attach: process %d is a zombie "
			 "(it has exited; its parent has not reaped it)",
			 (int)pid);
		return -ESRCH;
	}
	if (ti.state == 'Z' || ti.state == 'X') {
		/* its maps and memory are no longer readable through PID */
		snprintf(err, errlen, "attach: the main thread of process %d "
			 "has exited (its other threads run on): not supported "
			 "yet", (int)pid);
		return -ENOTSUP;
	}
	if (ti.state == 'T') {
		snprintf(err, errlen, "attach: process %d is stopped (SIGSTOP "
			 "or a terminal stop); continue it first (kill -CONT)",
			 (int)pid);
		return -EAGAIN;
	}
	if (ti.tracer_pid) {
		char name[64];
		process_name((pid_t)ti.tracer_pid, name, sizeof(name));
		snprintf(err, errlen, "attach: process %d is already traced by "
			 "process %ld (%s); only one tracer at a time",
			 (int)pid, ti.tracer_pid, name[0] ? name : "?");
		return -EBUSY;
	}
	return 0;
}

/* kernel.yama.ptrace_scope, or -1 without Yama. */
static int
yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void
explain_denied(pid_t pid, char *err, size_t errlen)
{
	int scope = yama_scope();
	if (scope >= 1)
		snprintf(err, errlen, "attach: permission denied for process "
			 "%d (kernel.yama.ptrace_scope is %d: %s)", (int)pid,
			 scope, scope == 1 ? "only a parent may trace; run as "
			 "root or with CAP_SYS_PTRACE" : scope == 2
			 ? "needs CAP_SYS_PTRACE" : "attaching is disabled");
	else
		snprintf(err, errlen, "attach: permission denied for process "
			 "%d (another user's, or privileged: run as its user "
			 "or root)", (int)pid);
}

/* Seize every task of PID not yet traced; the number seized, or -errno
   when the first one cannot be (ERR says why). EPERM on a later task is
   one TRACECLONE attached already. */
static int
seize_pass(struct tracer *t, struct tproc *p, long options, char *err,
	   size_t errlen)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)p->pid);
	DIR *d = opendir(path);
	if (!d) {
		snprintf(err, errlen, "attach: no process %d", (int)p->pid);
		return -ESRCH;
	}
	int added = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
		if (tracee_get(t, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, NULL, (void *)options) < 0) {
			int e2 = errno;
			if (e2 == ESRCH || (e2 == EPERM && t->tracees.count))
				continue;
			closedir(d);
			if (e2 == EPERM)
				explain_denied(p->pid, err, errlen);
			else
				snprintf(err, errlen, "attach: cannot trace "
					 "process %d: %s", (int)p->pid,
					 strerror(e2));
			return -e2;
		}
		lifecycle_thread_add(t, tid, p);
		added++;
	}
	closedir(d);
	return added;
}

static int
seize_all(struct tracer *t, struct tproc *p, char *err, size_t errlen)
{
	long options = ATTACH_OPTIONS | leakstop_ptrace_options(t->opt);
	inject_session(options, 0);
	for (int pass = 0; pass < SEIZE_PASSES; pass++) {
		int n = seize_pass(t, p, options, err, errlen);
		if (n < 0)
			return n;
		if (n == 0 && t->tracees.count)
			return 0;
		if (n == 0) {
			snprintf(err, errlen, "attach: process %d has no "
				 "thread left to trace", (int)p->pid);
			return -ESRCH;
		}
	}
	snprintf(err, errlen, "attach: process %d keeps creating threads "
		 "faster than they can be seized", (int)p->pid);
	return -EAGAIN;
}

/* A thread of S held at our interrupt stop: syscalls are injected there. */
static pid_t
injectable_thread(const struct stopall *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->threads[i].state == STOPALL_HERE)
			return s->threads[i].tid;
	return 0;
}

/* The first injected system call, which maps P's first scratch page,
   with every thread but SELF held meanwhile: until there is a scratch
   page, calls are injected from a code mapping's padding, where a killed
   session may have left its routine, taken again only once no thread can
   be running it, which only held threads can tell (target/inject.c). */
static int
first_scratch(struct tracer *t, struct tproc *p, pid_t self)
{
	struct stopall others;
	int rc = stopall_begin(t, p, self, &others);
	if (rc)
		return rc;
	rc = inject_find_syscall(p);
	if (!rc)
		rc = probe_ensure_trampolines(p, self);
	stopall_end(&others);
	return rc;
}

/* Probes in (or, for page calls, the current mappings reported), then
   the profile starts. The set-up runs from one thread stopped (one
   asleep, when there is one) while the others run on: patching stops
   them all for the moments the code is written (inline.c, commit_all,
   which gives each thread its thread-table entry the first time), so a
   thread at work stands still for those only, not for the whole set-up
   (reading the link map and the allocators' symbols, mapping the ring).
   With --pages-as-heap=yes every thread is held throughout: the
   mappings reported must be those the page calls caught from then on
   start from. */
static int
setup_profile(struct tracer *t, struct tproc *p, char *err, size_t errlen)
{
	bool hold_all = t->opt->pages_as_heap;
	struct stopall s;
	int rc = hold_all ? stopall_begin(t, p, 0, &s) : stopall_one(t, p, &s);
	if (rc) {
		snprintf(err, errlen, "attach: cannot stop %s thread of "
			 "process %d: %s", hold_all ? "every" : "a", (int)p->pid,
			 ht_strerror(rc));
		return rc;
	}
	pid_t self = injectable_thread(&s);
	/* Page calls go through the inline path too, unless
	   --backend=ptrace: every thread then runs under PTRACE_SYSCALL. */
	bool page_stubs = t->opt->pages_as_heap &&
			  t->opt->backend != HT_BACKEND_PTRACE;
	if ((!t->opt->pages_as_heap && (t->opt->heap || t->opt->stacks)) ||
	    page_stubs) {
		/* Every thread held already: patching must not stop them
		   again. */
		t->holding = hold_all ? &s : NULL;
		rc = !self ? -EAGAIN : hold_all ? 0 : first_scratch(t, p, self);
		if (!rc)
			rc = loader_setup_attach(t, p, self);
		t->holding = NULL;
		if (!self)
			snprintf(err, errlen, "attach: no thread of process %d "
				 "stopped where probes can be planted (is it "
				 "stopped?)", (int)p->pid);
		else if (rc)
			snprintf(err, errlen, "attach: cannot plant probes in "
				 "process %d: %s", (int)p->pid,
				 ht_strerror(rc));
		if (rc) {
			stopall_end(&s);
			return rc;
		}
	}
	if (page_stubs && inline_active(p))
		s.resume_req = t->resume_req = PTRACE_CONT;
	/* The stubs never ask for a thread's entry: the first patching
	   gave every thread its own before it ran again (inline.c). */
	tracer_start_profile(t, p, p->pid);
	if (t->opt->pages_as_heap)
		pagecalls_attach_startup(t, p);
	ht_debug("process %d: attached, %zu threads stopped", (int)p->pid,
		 s.n);
	stopall_end(&s);
	return 0;
}

/* SIGINT, SIGTERM, SIGHUP and --duration's alarm end the session:
   detach. */
static void
catch_detach_signals(unsigned duration, struct sigaction old[4])
{
	/* SA_RESTART: a wait in the middle of an injected call must not be
	   cut short; the loop's idle wait (sigtimedwait) is never restarted,
	   so the request is seen at once. */
	struct sigaction sa = { .sa_handler = on_detach_signal,
				.sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	detach_requested = 0;
	sigaction(SIGINT, &sa, &old[0]);
	sigaction(SIGTERM, &sa, &old[1]);
	sigaction(SIGALRM, &sa, &old[2]);
	sigaction(SIGHUP, &sa, &old[3]);
	if (duration)
		alarm(duration);
}

static void
restore_signals(const struct sigaction old[4])
{
	alarm(0);
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	sigaction(SIGALRM, &old[2], NULL);
	sigaction(SIGHUP, &old[3], NULL);
}

int
tracer_attach(const struct ht_options *opt, pid_t pid,
	      const struct tracer_sink *sink, struct tracer_result *res,
	      char *err, size_t errlen)
{
	int rc = tracer_attach_check(pid, err, errlen);
	if (rc)
		return rc;
	struct tracer t;
	tracer_init(&t, opt, sink);
	t.attached = true;
	t.target = pid;
	t.resume_req = opt->pages_as_heap ? PTRACE_SYSCALL : PTRACE_CONT;
	t.stop_flag = &detach_requested;
	struct sigaction old[4];
	catch_detach_signals(opt->duration, old);

	struct tproc *p = proc_new(&t, pid);
	rc = seize_all(&t, p, err, errlen);
	if (!rc)
		rc = setup_profile(&t, p, err, errlen);
	if (!rc)
		tracer_loop(&t);
	detach_all(&t);
	restore_signals(old);
	*res = t.result;
	tracer_fini(&t);
	return rc;
}
