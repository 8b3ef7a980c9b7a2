/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a system call inside a stopped tracee: point its pc at a syscall
   instruction that already exists in its code, single-step over it, read
   the result and put every register back. orig_rax is set to -1 so that a
   thread stopped inside an interrupted system call does not have that call
   "restarted" into ours; restoring the saved registers restores the
   original restart exactly. */
#include "tracer_priv.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"

/* Single-step TID once; signals that arrive meanwhile are remembered in
   *PENDING_SIG (one is enough: the kernel queues the rest) for
   re-delivery by the caller. */
static int
step_once(pid_t tid, int *pending_sig)
{
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0)
			return -errno;
		int status;
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status))
			continue;
		int sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0)
			return 0;
		if ((status >> 16) != 0)
			continue; /* an event stop: step again */
		if (sig != SIGTRAP)
			*pending_sig = sig;
	}
}

int
inject_syscall(struct tproc *p, pid_t tid, long nr, const uint64_t args[6],
	       uint64_t *ret)
{
	struct user_regs_struct saved, r;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0)
		return -errno;
	r = saved;
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rip = p->syscall_insn;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r) < 0)
		return -errno;
	int pending = 0;
	int err = step_once(tid, &pending);
	if (err)
		return err;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
		return -errno;
	*ret = r.rax;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &saved) < 0)
		return -errno;
	if (pending)
		syscall(SYS_tgkill, p->pid, tid, pending); /* re-raise it */
	return 0;
}

int
inject_step_out(pid_t tid)
{
	if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0)
		return -errno;
	int status;
	if (waitpid(tid, &status, __WALL) < 0)
		return -errno;
	if (!WIFSTOPPED(status))
		return -ESRCH;
	if (WSTOPSIG(status) != SIGTRAP)
		ht_debug("signal %d during a step out of the kernel",
			 WSTOPSIG(status));
	return 0;
}

/* Scan executable mapping M for the bytes of a syscall instruction; they
   need not start an instruction the program uses, only be executable. */
static int
scan_for_syscall(void *arg, const struct mapping *m)
{
	struct tproc *p = arg;
	if (m->perms[2] != 'x' || strcmp(m->path, "[vsyscall]") == 0)
		return 0;
	uint8_t buf[4096];
	for (uint64_t a = m->lo; a < m->hi; a += sizeof(buf) - 1) {
		ssize_t n = mem_read(p->pid, a, buf, sizeof(buf));
		if (n < 2)
			break;
		for (ssize_t i = 0; i + 1 < n; i++) {
			if (buf[i] == 0x0f && buf[i + 1] == 0x05) {
				p->syscall_insn = a + (uint64_t)i;
				return 1;
			}
		}
	}
	return 0;
}

int
inject_find_syscall(struct tproc *p)
{
	p->syscall_insn = 0;
	int rc = maps_foreach(p->pid, scan_for_syscall, p);
	return rc ? rc : p->syscall_insn ? 0 : -ENOENT;
}
