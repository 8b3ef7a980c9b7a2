/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --pages-as-heap=yes: the program's page-level system calls, stopped by a
   seccomp filter (seccomp.c) or at every syscall stop when attached, and
   reported once they completed (pagecalls.c); the inline path's page call
   records are described here too. Above inline/: the ring's own mapping
   is not the program's. */
#ifndef HT_TRACER_PAGES_PAGES_H
#define HT_TRACER_PAGES_PAGES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/event.h"
#include "tracer/proc/proc.h"

/* ---- seccomp.c: the filter of --pages-as-heap=yes ---- */
/* Install in the calling process the filter that stops it at mmap,
   munmap, mremap, brk, shmat and shmdt (no_new_privs set only when the
   kernel requires it). 0 or -errno. */
int seccomp_install_page_filter(void);

/* ---- pagecalls.c: page-level calls (--pages-as-heap=yes) ---- */
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

#endif
