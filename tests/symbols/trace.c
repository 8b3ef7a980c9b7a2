/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The symbols tests' tracing helpers; see trace.h. */
#include "trace.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

int failures;

void
check(bool ok, const char *fmt, ...)
{
	va_list ap;

	if (ok)
		return;
	failures++;
	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

void
harness(const char *what)
{
	printf("harness error: %s: %s\n", what, strerror(errno));
	exit(EXIT_HARNESS);
}

void
launch(const char *prog, const char *arg, long options, struct child *c)
{
	int fds[2], st;

	if (pipe(fds) != 0)
		harness("pipe");
	c->pid = fork();
	if (c->pid < 0)
		harness("fork");
	if (c->pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) != 0)
			_exit(EXIT_SKIP);
		execl(prog, prog, arg, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	c->out = fds[0];
	if (waitpid(c->pid, &st, 0) != c->pid)
		harness("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == EXIT_SKIP) {
		printf("SKIP: ptrace is not permitted here\n");
		exit(EXIT_SKIP);
	}
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
		errno = ECHILD;
		harness(prog);
	}
	if (ptrace(PTRACE_SETOPTIONS, c->pid, NULL,
		   (void *)(PTRACE_O_EXITKILL | options)) != 0)
		harness("PTRACE_SETOPTIONS");
}

void
wait_sigstop(pid_t pid)
{
	int st;

	if (waitpid(pid, &st, __WALL) != pid)
		harness("waitpid");
	if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP || (st >> 16) != 0) {
		printf("harness error: pid %d: wait status %#x, not SIGSTOP\n",
		       (int)pid, st);
		exit(EXIT_HARNESS);
	}
}

void
finish(pid_t pid)
{
	int st;

	if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	for (;;) {
		if (waitpid(pid, &st, __WALL) != pid)
			harness("waitpid");
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return;
		if (ptrace(PTRACE_CONT, pid, NULL, NULL) != 0)
			harness("PTRACE_CONT");
	}
}

void
capture_upto(pid_t pid, struct snap *s, size_t limit)
{
	uint64_t addr, end;
	size_t len = 0;

	if (ptrace(PTRACE_GETREGS, pid, NULL, &s->cap.regs) != 0)
		harness("PTRACE_GETREGS");
	if (limit > STACK_COPY)
		limit = STACK_COPY;
	addr = s->cap.regs.rsp;
	end = addr + limit;
	while (addr < end) {
		uint64_t next = (addr | 4095) + 1;
		size_t want = (size_t)((next < end ? next : end) - addr);
		struct iovec local = { s->bytes + len, want };
		struct iovec remote = { (void *)(uintptr_t)addr, want };

		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) !=
		    (ssize_t)want)
			break;
		len += want;
		addr += want;
	}
	if (len == 0)
		harness("process_vm_readv");
	s->cap.stack = s->bytes;
	s->cap.len = len;
	s->cap.stack_addr = s->cap.regs.rsp;
}

void
capture(pid_t pid, struct snap *s)
{
	capture_upto(pid, s, STACK_COPY);
}
