/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The seccomp filter of --pages-as-heap=yes: the target stops (a
   PTRACE_EVENT_SECCOMP stop at the call's entry) at the system calls that
   map or unmap memory, and at no other: every other call runs at full
   speed. Installed by the target itself, after fork, before exec; it is
   inherited by every descendant and survives exec, which is why the
   tracer follows every descendant and kills them all if it dies
   (PTRACE_O_EXITKILL): a call the filter traces fails with ENOSYS when
   no tracer is there (tracing-techniques.md §4.3).

   x32 calls (bit 30 of the number, same architecture) are traced like
   their x86-64 twins, which have the same numbers for these calls. Calls
   of another architecture (int 0x80 from a 64-bit program) are allowed
   unseen: the tracer handles x86-64 processes only. */
#include "tracer/pages/pages.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define X32_SYSCALL_BIT 0x40000000u

/* Instruction indexes below are counted by hand: keep them in step. */
static const struct sock_filter page_filter[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~X32_SYSCALL_BIT),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 6, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_munmap, 5, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mremap, 4, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_brk, 3, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shmat, 2, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_shmdt, 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
};

static int
set_filter(const struct sock_fprog *prog)
{
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) == 0
		? 0 : -errno;
}

int
seccomp_install_page_filter(void)
{
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(page_filter) /
					sizeof(page_filter[0])),
		.filter = (struct sock_filter *)page_filter,
	};
	/* With CAP_SYS_ADMIN (root) no_new_privs is not needed, and is not
	   set: the program must run as it would without us. Without it the
	   kernel insists; a setuid program traced by an unprivileged tracer
	   gains no privileges anyway. */
	int rc = set_filter(&prog);
	if (rc != -EACCES)
		return rc;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	return set_filter(&prog);
}
