/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reaching into a stopped target: its mappings, its memory, system calls
   run by one of its threads, and the scratch pages those map for our
   code. Below every concern that reads or patches the target; calls only
   proc/. (ELF files on disk: elfsym.h.) */
#ifndef HT_TRACER_TARGET_TARGET_H
#define HT_TRACER_TARGET_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/proc/proc.h"

/* ---- maps.c: the target's mappings ---- */
/* One line of /proc/PID/maps. PATH is "" for an anonymous mapping, and is
   borrowed for the callback only. */
struct mapping {
	uint64_t lo, hi, offset;
	char perms[5];
	const char *path;
};
/* Called for each mapping; a nonzero return stops the walk (positive:
   found, negative: an error maps_foreach returns). */
typedef int (*maps_fn)(void *arg, const struct mapping *m);
/* Parse LINE (NUL terminated; its newline is cut) into *M, whose path
   points into LINE. False when it is no maps line. */
bool maps_parse_line(char *line, struct mapping *m);
/* Walk PID's mappings in address order. Returns 0 or -errno. */
int maps_foreach(pid_t pid, maps_fn fn, void *arg);
/* The extent [*LO, *HI) of the file PATH's mappings in PID (PATH as
   ld.so named it: resolved to its real path, as /proc/PID/maps names
   it); both 0 when none. */
void maps_extent(pid_t pid, const char *path, uint64_t *lo, uint64_t *hi);
/* PID's mappings' extents read once, for many look-ups (one per thread)
   while they cannot change (every thread stopped). */
struct maps_snap {
	struct maps_range {
		uint64_t lo, hi;
		bool main_stack; /* "[stack]": grows down on demand */
	} *r;
	size_t n, cap;
};
/* Read PID's mappings into *S (empty on failure). 0 or -errno. */
int maps_snap_load(pid_t pid, struct maps_snap *s);
/* The mapping of S holding ADDR, or NULL. */
const struct maps_range *maps_snap_find(const struct maps_snap *s,
					uint64_t addr);
/* Free what S owns; S is empty afterwards. */
void maps_snap_free(struct maps_snap *s);

/* ---- mem.c: the target's memory ---- */
/* Read LEN bytes at ADDR of process PID; returns bytes read (maybe short
   at an unmapped page), or -errno. */
ssize_t mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Write LEN bytes at ADDR of writable memory (stack, data). 0 or -errno. */
int mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* Write LEN bytes at ADDR even into read-only code (through P->mem_fd or
   PTRACE_POKEDATA). 0 or -errno. */
int mem_write_code(struct tproc *p, pid_t tid, uint64_t addr, const void *buf,
		   size_t len);

/* ---- inject.c: system calls run by a stopped thread, scratch pages ---- */
/* The ptrace OPTIONS every tracee of this session was seized with, and
   how many seccomp filters heaptrace installed in them itself (OWN: 1
   under run --pages-as-heap=yes, else 0); inject_syscall puts OPTIONS
   back after lifting a target's own filter. */
void inject_session(long options, int own_filters);
/* Make TID (stopped at a breakpoint, signal or interrupt stop) execute
   syscall NR with ARGS, then restore its registers. A process with a
   seccomp filter of its own has it lifted for the call alone
   (PTRACE_O_SUSPEND_SECCOMP, CAP_SYS_ADMIN), or is left untouched:
   -HT_E_SECCOMP. Returns 0 and the syscall's result in *RET, or -errno
   when the thread vanished. */
int inject_syscall(struct tproc *p, pid_t tid, long nr, const uint64_t args[6],
		   uint64_t *ret);
/* TID is at its exec event stop, inside execve: take it to the call's
   exit stop, from where syscalls can be injected. (A fork child's first
   stop is already past its syscall's exit: it needs nothing.) 0 or
   -errno. */
int inject_leave_exec(pid_t tid);
/* Put back the bytes the injection routine borrowed in P's code padding,
   if it did (TID stopped). */
void inject_forget(struct tproc *p, pid_t tid);
/* Find a "syscall" instruction in an executable mapping of P. 0 or
   -ENOENT. */
int inject_find_syscall(struct tproc *p);
/* Room for LEN bytes of code within rel32 reach of NEAR in P, mapping a
   scratch page when needed (TID stopped safely). 0 or -errno. */
int scratch_alloc(struct tproc *p, pid_t tid, uint64_t near, size_t len,
		  uint64_t *addr);
/* Unmap every scratch page of P through TID (stopped at a real stop), and
   forget them all. 0, or the first failure's -errno and its page in
   *FAILED_AT. Call inject_forget after it. */
int scratch_unmap_all(struct tproc *p, pid_t tid, uint64_t *failed_at);

#endif
