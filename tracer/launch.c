/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting the target: checking that the program can be run at all (so a
   typo gets a clear error, not a profile of nothing), then forking a child
   that waits until the tracer has seized it before it execs (and, with
   --pages-as-heap=yes, installs the seccomp filter first: seccomp.c). */
#include "tracer/session.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "tracer/leak/leak.h"
#include "tracer/pages/pages.h"
#include "tracer/target/target.h"

/* What failed in the child before the program ran. */
enum launch_stage { LAUNCH_EXEC, LAUNCH_SECCOMP };

/* Resolve NAME through PATH as execvp would, into OUT. */
static int
find_in_path(const char *name, char *out, size_t len)
{
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, F_OK) ? -errno : 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int rc = -ENOENT;
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "", name);
		if (access(out, X_OK) == 0)
			return 0;
		if (errno == EACCES)
			rc = -EACCES;
		path += n;
		if (*path == ':')
			path++;
	}
	return rc;
}

/* How much of a file bash reads to tell a script from a binary. */
#define SHELL_SAMPLE 80

/* Whether a file starting with HEAD (N bytes read) is one no shell would
   run: neither ELF nor #! (those are the kernel's), and a NUL byte in its
   first line: bash's rule, dash refuses it too (POSIX lets a shell refuse
   a file that is not text, with status 126). Anything else execvp hands
   to /bin/sh on ENOEXEC, as sh and env do: a script without a #! line is
   the shell's, and what is profiled is /bin/sh running it. */
static bool
is_binary_non_elf(const unsigned char *head, size_t n)
{
	if (n >= 4 && memcmp(head, "\177ELF", 4) == 0)
		return false;
	if (n >= 2 && head[0] == '#' && head[1] == '!')
		return false;
	for (size_t i = 0; i < n && head[i] != '\n'; i++)
		if (head[i] == '\0')
			return true;
	return false;
}

int
tracer_check_program(char *const argv[], char *err, size_t errlen)
{
	char path[PATH_MAX];
	int rc = find_in_path(argv[0], path, sizeof(path));
	if (rc) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 rc == -ENOENT ? "no such program" : ht_strerror(rc));
		return rc;
	}
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot run '%s': not a regular file",
			 argv[0]);
		return -EACCES;
	}
	if (access(path, X_OK) < 0) {
		snprintf(err, errlen, "cannot run '%s': not executable",
			 argv[0]);
		return -EACCES;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char head[SHELL_SAMPLE] = { 0 };
	ssize_t n = fd >= 0 ? read(fd, head, sizeof(head)) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", argv[0],
			 strerror(errno));
		return -EACCES;
	}
	if (is_binary_non_elf(head, (size_t)n)) {
		snprintf(err, errlen,
			 "cannot run '%s': not an ELF executable, and binary "
			 "(not a shell script)", argv[0]);
		return -HT_E_FORMAT;
	}
	return 0;
}

/* Options every traced task gets (new ones inherit them): every
   descendant is followed. No PTRACE_O_EXITKILL: like strace or gdb, a
   heaptrace that dies leaves the program running (the inline path's
   stubs then pass every call through; ring.h). */
#define TRACE_OPTIONS                                                       \
	(PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK |   \
	 PTRACE_O_TRACEVFORKDONE | PTRACE_O_TRACEEXEC |                     \
	 PTRACE_O_TRACESYSGOOD) /* inject.c tells its syscall stops apart */

/* The stops of --pages-as-heap=yes: the filter's, then the syscall exit
   (told from a SIGTRAP by TRACESYSGOOD). The filter cannot be removed and
   its calls fail with ENOSYS once no tracer answers them, so there the
   program dies with heaptrace (EXITKILL) rather than run on broken. */
#define PAGE_TRACE_OPTIONS                                                  \
	(PTRACE_O_TRACESECCOMP | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL)

/* In the child: wait for the tracer, then exec ARGV. A failure is sent
   down ERR_FD as {stage, errno}. */
static void
child_exec(char *const argv[], bool page_filter, int sync_fd, int err_fd)
{
	char c;
	if (read(sync_fd, &c, 1) != 1)
		_exit(127);
	int report[2] = { LAUNCH_EXEC, 0 };
	if (page_filter) {
		int rc = seccomp_install_page_filter();
		if (rc) {
			report[0] = LAUNCH_SECCOMP;
			report[1] = -rc;
			ssize_t w = write(err_fd, report, sizeof(report));
			(void)w;
			_exit(127);
		}
	}
	/* A file the kernel refuses with ENOEXEC (a script without #!) is
	   run by execvp as `/bin/sh FILE ARGS...` (POSIX; glibc does). */
	execvp(argv[0], argv);
	report[1] = errno;
	ssize_t w = write(err_fd, report, sizeof(report));
	(void)w;
	_exit(127);
}

int
launch_spawn(struct tracer *t, char *const argv[], int *err_fd, char *err,
	     size_t errlen)
{
	int sync[2], errp[2];
	if (pipe2(sync, O_CLOEXEC) < 0 || pipe2(errp, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -errno;
	}
	bool pages = t->opt->pages_as_heap;
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -errno;
	}
	if (pid == 0) {
		close(sync[1]);
		close(errp[0]);
		child_exec(argv, pages, sync[0], errp[1]);
	}
	close(sync[0]);
	close(errp[1]);
	long options = TRACE_OPTIONS | (pages ? PAGE_TRACE_OPTIONS : 0) |
		       leakstop_ptrace_options(t->opt);
	inject_session(options, pages ? 1 : 0); /* its page filter */
	if (ptrace(PTRACE_SEIZE, pid, NULL, (void *)options) < 0) {
		int e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		snprintf(err, errlen, "cannot trace the program: %s%s",
			 strerror(e),
			 e == EPERM ? " (is ptrace forbidden here?)" : "");
		close(sync[1]);
		close(errp[0]);
		return -e;
	}
	t->target = pid;
	struct tproc *p = proc_new(t, pid);
	lifecycle_thread_add(t, pid, p);
	ssize_t w = write(sync[1], "x", 1);
	(void)w;
	close(sync[1]);
	*err_fd = errp[0];
	return 0;
}

int
launch_result(int err_fd, char *const argv[], char *err, size_t errlen)
{
	int report[2] = { 0, 0 };
	ssize_t n = read(err_fd, report, sizeof(report));
	close(err_fd);
	if (n != (ssize_t)sizeof(report))
		return 0;
	if (report[0] == LAUNCH_SECCOMP)
		snprintf(err, errlen,
			 "cannot install the seccomp filter of "
			 "--pages-as-heap=yes: %s", strerror(report[1]));
	else
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strerror(report[1]));
	return -report[1];
}
