/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The survival tests' harness (tests/run/survive.sh): runs a command
   (heaptrace), SIGKILLs it after a given delay, then waits for whatever
   it leaves behind and reports how each process ended.

   A shell cannot do that: once heaptrace is killed, the program it
   started is reparented, and only its new parent learns its exit status
   (did it exit 7, or die of SIGTRAP?), or reaps it at all; and PID 1
   need not reap orphans (in a container it often does not), so
   /proc/PID would not even go away. So this process makes itself a child
   subreaper (PR_SET_CHILD_SUBREAPER): every process orphaned below it
   becomes its child, whose exit status it gets from waitpid, exactly as a
   parent does. Each process is named by its comm, read while it is a
   zombie, before it is reaped: a child of heaptrace's that had not yet
   exec'd the program still has heaptrace's comm.

   The kill goes to every process below us whose executable is COMMAND's
   (found through /proc/PID/exe), not only to the process we forked:
   heaptrace is killed whichever of its processes traces the program
   (were the program one day the forked process's parent, killing that
   pid would kill the program, not heaptrace), and a forked child still
   running heaptrace's code (before its exec) dies as part of heaptrace.

   usage: reaper [--kill-after MS] [--timeout S] [--limit S]
                 [--tracee PID] REPORT -- COMMAND [ARGS...]

   --kill-after MS  SIGKILL heaptrace MS milliseconds after COMMAND was
                    started (by default it is left to end by itself)
   --timeout S      after the kill (or, without one, once COMMAND's own
                    process ended), the time the processes left have to
                    end [30]; past it they are a stall
   --limit S        the time allowed in all [120]; past it what is left
                    is a stall too
   --tracee PID     at the kill, note PID's TracerPid (whether a tracer
                    was attached to it then)

   REPORT gets one line per event, with the comm last (it may hold
   spaces); STATUS is the shell's: N for exit(N), 128+S for signal S.

       killed MS N                  N processes of COMMAND's executable
                                    SIGKILLed, MS ms after the start
       exited MS STATUS             COMMAND's process ended by itself
                                    before the kill time: no kill
       tracee PID TRACERPID         at the kill (--tracee)
       proc PID STATUS COMM         a process reaped (COMMAND's too)
       stall PID STATE THREADS WCHAN COMM
                                    still there at the timeout: its state
                                    letter, its threads' state letters
                                    and where it sleeps; then SIGKILLed
                                    and reaped

   Exit status: 0, 3 when there was a stall, 2 on a usage or system
   error. Stdin, stdout and stderr are COMMAND's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int report_fd = -1;
static volatile sig_atomic_t terminated;

static void
on_term(int sig)
{
	(void)sig;
	terminated = 1;
}

static int64_t
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int
shell_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

/* /proc/PID/NAME into BUF (at most LEN - 1 bytes); "?" when it cannot be
   read. With FIRST_LINE, only its first line. */
static void
read_proc(pid_t pid, const char *name, char *buf, size_t len,
	  bool first_line)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, len - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0) {
		snprintf(buf, len, "?");
		return;
	}
	buf[n] = 0;
	if (first_line)
		buf[strcspn(buf, "\n")] = 0;
	if (!buf[0])
		snprintf(buf, len, "-");
}

/* State letter and parent of PID, from /proc/PID/stat (parsed from the
   last ')': the comm before it may hold spaces and parentheses). */
static bool
proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char buf[1024];
	read_proc(pid, "stat", buf, sizeof(buf), true);
	char *rp = strrchr(buf, ')');
	int pp;
	if (!rp || sscanf(rp + 1, " %c %d", state, &pp) != 2)
		return false;
	*ppid = pp;
	return true;
}

/* PID's TracerPid (0: not traced), -1 when it cannot be read. */
static int
tracer_pid(pid_t pid)
{
	char buf[4096];
	read_proc(pid, "status", buf, sizeof(buf), false);
	char *tp = strstr(buf, "TracerPid:");
	return tp ? atoi(tp + 10) : -1;
}

/* The state letters of PID's threads, e.g. "SSRt". */
static void
thread_states(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (d) {
		struct dirent *e;
		while ((e = readdir(d)) && n + 1 < len) {
			pid_t tid = atoi(e->d_name);
			char st;
			pid_t pp;
			if (tid > 0 && proc_stat(tid, &st, &pp))
				buf[n++] = st;
		}
		closedir(d);
	}
	buf[n] = 0;
	if (!n)
		snprintf(buf, len, "-");
}

/* Whether PID is below us (its parents lead to us). */
static bool
below_us(pid_t pid)
{
	pid_t self = getpid();
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		char st;
		pid_t pp;
		if (!proc_stat(pid, &st, &pp))
			return false;
		if (pp == self)
			return true;
		pid = pp;
	}
	return false;
}

/* Whether PID's parent runs EXE: PID is then a fork of heaptrace's, the
   program before its exec, which goes on its own when heaptrace dies
   (and may have exec'd the program between a look at its exe and a
   kill: the program's own death would be the harness's doing). */
static bool
parent_runs(pid_t pid, const char *exe)
{
	char st, path[64], target[PATH_MAX];
	pid_t pp;
	if (!proc_stat(pid, &st, &pp))
		return false;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pp);
	ssize_t len = readlink(path, target, sizeof(target) - 1);
	if (len <= 0)
		return false;
	target[len] = 0;
	return strcmp(target, exe) == 0;
}

/* SIGKILL every process below us running EXE, but SKIP and forks of
   such a process; the number killed. */
static int
kill_exe(const char *exe, pid_t skip)
{
	int n = 0;
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = atoi(e->d_name);
		char path[64], target[PATH_MAX];
		if (pid <= 0 || pid == skip)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = 0;
		if (strcmp(target, exe) || !below_us(pid) ||
		    parent_runs(pid, exe))
			continue;
		if (kill(pid, SIGKILL) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* Report as stalled and SIGKILL every child of ours still running. */
static void
kill_children(void)
{
	pid_t self = getpid();
	DIR *d = opendir("/proc");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		pid_t pid = atoi(e->d_name);
		char st, comm[64], wchan[128], threads[256];
		pid_t pp;
		if (pid <= 0 || !proc_stat(pid, &st, &pp) || pp != self ||
		    st == 'Z')
			continue;
		read_proc(pid, "comm", comm, sizeof(comm), true);
		read_proc(pid, "wchan", wchan, sizeof(wchan), true);
		thread_states(pid, threads, sizeof(threads));
		dprintf(report_fd, "stall %d %c %s %s %s\n", (int)pid, st,
			threads, wchan, comm);
		kill(pid, SIGKILL);
	}
	closedir(d);
}

static void
usage(void)
{
	fprintf(stderr, "usage: reaper [--kill-after MS] [--timeout S] "
			"[--limit S] [--tracee PID] REPORT -- COMMAND "
			"[ARGS...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	long kill_after = -1, timeout = 30, limit = 120;
	pid_t tracee = 0;
	int i = 1;
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2) &&
	       strcmp(argv[i], "--");
	     i += 2) {
		long v = atol(argv[i + 1]);
		if (!strcmp(argv[i], "--kill-after"))
			kill_after = v;
		else if (!strcmp(argv[i], "--timeout"))
			timeout = v;
		else if (!strcmp(argv[i], "--limit"))
			limit = v;
		else if (!strcmp(argv[i], "--tracee"))
			tracee = (pid_t)v;
		else
			usage();
	}
	if (i + 2 >= argc || strcmp(argv[i + 1], "--"))
		usage();
	char **cmd = argv + i + 2;
	char exe[PATH_MAX];
	if (!strchr(cmd[0], '/') || !realpath(cmd[0], exe)) {
		fprintf(stderr, "reaper: %s: give COMMAND by its path\n",
			cmd[0]);
		return 2;
	}
	report_fd = open(argv[i], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			 0644);
	if (report_fd < 0) {
		perror(argv[i]);
		return 2;
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L)) {
		perror("reaper: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	/* told to stop (the test's time limit): kill it all, reap, leave */
	struct sigaction sa = { .sa_handler = on_term };
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	int64_t t0 = now_us();
	pid_t ht = fork();
	if (ht < 0) {
		perror("reaper: fork");
		return 2;
	}
	if (ht == 0) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		execv(exe, cmd);
		perror(exe);
		_exit(127);
	}
	int64_t kill_at = kill_after >= 0 ? t0 + kill_after * 1000 : INT64_MAX;
	int64_t deadline = t0 + (int64_t)limit * 1000000;
	bool ht_gone = false, kill_done = false, stalled = false;
	for (;;) {
		int64_t now = now_us();
		if (!kill_done && !ht_gone && now >= kill_at) {
			if (tracee > 0)
				dprintf(report_fd, "tracee %d %d\n", (int)tracee,
					tracer_pid(tracee));
			/* Other heaptrace processes first, while the forked
			   one still runs: a fork of it (the program before
			   its exec) has it as parent then, and is left to
			   go on its own. Then the forked process, whatever
			   it runs (it may not have exec'd heaptrace yet). */
			int n = kill_exe(exe, ht);
			n += kill(ht, SIGKILL) == 0;
			dprintf(report_fd, "killed %lld %d\n",
				(long long)(now - t0) / 1000, n);
			kill_done = true;
			deadline = now + (int64_t)timeout * 1000000;
		}
		if (terminated || (now >= deadline && !stalled)) {
			/* a stall, or the test is being stopped: SIGKILL
			   heaptrace, then all that came to us, and reap it
			   all in the loop below */
			stalled = !terminated;
			terminated = 0;
			kill_exe(exe, 0);
			kill_children();
			deadline = now + 10 * 1000000;
		} else if (stalled && now >= deadline) {
			dprintf(report_fd, "stall - - - - processes that "
					   "SIGKILL does not end\n");
			return 3;
		} else if (stalled) {
			kill_children(); /* orphans that came to us since */
		}
		siginfo_t si;
		memset(&si, 0, sizeof(si));
		int r = waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT);
		if (r < 0 && errno == ECHILD)
			break;
		if (r < 0 && errno != EINTR) {
			perror("reaper: waitid");
			return 2;
		}
		if (r == 0 && si.si_pid) {
			pid_t pid = si.si_pid;
			char comm[64];
			int st;
			read_proc(pid, "comm", comm, sizeof(comm), true);
			if (waitpid(pid, &st, 0) != pid)
				continue;
			dprintf(report_fd, "proc %d %d %s\n", (int)pid,
				shell_status(st), comm);
			if (pid == ht) {
				ht_gone = true;
				if (!kill_done) {
					dprintf(report_fd, "exited %lld %d\n",
						(long long)(now - t0) / 1000,
						shell_status(st));
					if (!stalled)
						deadline = now +
							   (int64_t)timeout *
								   1000000;
				}
			}
			continue;
		}
		/* 200 us between looks; to the microsecond for the kill */
		int64_t nap = 200;
		if (!kill_done && !ht_gone && kill_at - now < nap)
			nap = kill_at > now ? kill_at - now : 0;
		struct timespec ts = { 0, (long)nap * 1000 };
		nanosleep(&ts, NULL);
	}
	return stalled ? 3 : 0;
}
