/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Running a system call inside a stopped tracee, in a way that survives
   heaptrace's death at any moment (docs/inline-backend.md, "A target that
   outlives heaptrace"), and the scratch pages such calls map into it.

   The thread's pc is pointed at a syscall instruction, with the call's
   number and arguments in its registers, and it is resumed with
   PTRACE_SYSCALL: to the call's entry stop, then to its exit stop,
   where the result is read and every register put back. Never with
   PTRACE_SINGLESTEP: a tracer that dies leaves a thread's trap flag set
   (the kernel clears syscall tracing when it detaches a dead tracer's
   tracees, not the trap flag), and the program then dies of SIGTRAP.

   While the thread's registers are ours, a heaptrace that dies would leave
   it to run them. So once the process has a scratch page, the syscall
   instruction is the first of a routine there that, after the call, loads
   every register of the thread from a save area written first, and jumps
   back to where the thread was: it runs on as if nothing had happened (an
   interrupted system call is restarted, as the kernel would have), and the
   only trace is the call's own effect (a mapping, an fd). Before the
   process has a scratch page, the routine sits in the zero padding that
   ends an executable file mapping, bytes nothing runs, put back
   (inject_forget) as soon as the first scratch page is there, and again
   for the last call of a detach, which unmaps the routine's own page
   (scratch_unmap_all); a padding a killed session's routine was left in
   is taken again (find_slack).
   Only a process with no such padding injects from a bare syscall
   instruction of its code: a heaptrace killed then leaves the thread
   running on after that instruction with the call's registers.
   orig_rax is set to -1 so that a thread stopped inside an
   interrupted system call does not have that call "restarted" into ours;
   its own call is restarted when its registers are put back. */
#include "tracer/target/target.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"

/* ---- Scratch pages ----

   Anonymous executable pages mapped near the code they serve (by an
   injected mmap, below), holding out-of-line slots, trampolines, the
   inline stub and this file's routine. They are here, with injection,
   because each needs the other: the first page is mapped by an injected
   call, and later injections run from a routine in it. */

/* Room for the inline stub blob (over a page) and many slots; only the
   pages written to are ever backed. */
#define SCRATCH_SIZE 16384
#define REACH (1ULL << 30) /* keep well inside rel32's +-2 GiB */
#define SCRATCH_HINTS 24   /* each side of NEAR, 32 MiB apart */

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static bool
within_reach(uint64_t a, uint64_t b)
{
	return (a > b ? a - b : b - a) < REACH;
}

/* Map a scratch page at HINT, for code near NEAR. 0 and *OUT when it is
   there, 1 when the kernel refused the address, or -errno (the injection
   failed). */
static int
scratch_try(struct tproc *p, pid_t tid, uint64_t hint, uint64_t near,
	    struct scratch **out)
{
	uint64_t args[6] = {
		hint, SCRATCH_SIZE, PROT_READ | PROT_EXEC,
		MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		(uint64_t)-1, 0,
	};
	uint64_t ret;
	int err = inject_syscall(p, tid, SYS_mmap, args, &ret);
	if (err)
		return err;
	if ((int64_t)ret < 0 && (int64_t)ret > -4096)
		return 1;
	if (!within_reach(ret, near))
		return 1; /* an old kernel ignored the flag (left mapped) */
	ht_xgrow((void **)&p->scratch, &p->cap_scratch, p->n_scratch + 1,
		 sizeof(*p->scratch));
	struct scratch *s = &p->scratch[p->n_scratch++];
	*s = (struct scratch){ .addr = ret, .size = SCRATCH_SIZE };
	*out = s;
	ht_debug("process %d: scratch page at 0x%llx", (int)p->pid,
		 (unsigned long long)ret);
	return 0;
}

/* The free room nearest NEAR, when every hint is taken (by the pages of
   killed sessions, say, one per hint): the top of each hole between
   mappings, where the kernel itself would map, so never just above the
   heap, whose break grows up into the hole; not the hole below the main
   stack, which grows down into it. */
struct hole {
	uint64_t near, prev_hi, best;
};

static int
nearest_hole(void *arg, const struct mapping *m)
{
	struct hole *h = arg;
	uint64_t top = m->lo < 0x7ffffffff000ULL ? m->lo : 0x7ffffffff000ULL;
	if (strcmp(m->path, "[stack]") != 0 && top > h->prev_hi &&
	    top - h->prev_hi >= SCRATCH_SIZE) {
		uint64_t at = top - SCRATCH_SIZE;
		uint64_t d = at > h->near ? at - h->near : h->near - at;
		uint64_t best = h->best > h->near ? h->best - h->near
						  : h->near - h->best;
		if (within_reach(at, h->near) && (!h->best || d < best))
			h->best = at;
	}
	if (m->hi > h->prev_hi)
		h->prev_hi = m->hi;
	return 0;
}

static int
scratch_map(struct tproc *p, pid_t tid, uint64_t near, struct scratch **out)
{
	/* Try addresses around NEAR, nearest first, insisting with
	   MAP_FIXED_NOREPLACE; the kernel refuses where something lives
	   (the pages of an earlier session that was killed, too). */
	for (int i = 0; i < 2 * SCRATCH_HINTS; i++) {
		int64_t off = (int64_t)(i / 2 + 1) * (32LL << 20) *
			      (i % 2 ? 1 : -1);
		uint64_t hint = (uint64_t)((int64_t)(near & ~0xfffffULL) + off);
		if (hint < 0x10000 || hint > 0x7ffffffff000ULL)
			continue;
		int rc = scratch_try(p, tid, hint, near, out);
		if (rc <= 0)
			return rc;
	}
	struct hole h = { .near = near, .prev_hi = 0x10000 };
	maps_foreach(p->pid, nearest_hole, &h);
	int rc = h.best ? scratch_try(p, tid, h.best, near, out) : 1;
	return rc <= 0 ? rc : -ENOMEM;
}

int
scratch_alloc(struct tproc *p, pid_t tid, uint64_t near, size_t len,
	      uint64_t *addr)
{
	struct scratch *s = NULL;
	for (size_t i = 0; i < p->n_scratch && !s; i++)
		if (within_reach(p->scratch[i].addr, near) &&
		    p->scratch[i].used + len <= p->scratch[i].size)
			s = &p->scratch[i];
	if (!s) {
		int err = scratch_map(p, tid, near, &s);
		if (err)
			return err;
	}
	*addr = s->addr + s->used;
	s->used += (len + 15) & ~(size_t)15;
	return 0;
}

/* ---- Injected system calls ---- */

/* The routine (x86-64):
     0:  syscall
     2:  lea rsp, [rip + save]          the save area, as a stack to pop
     9:  pop r15 ... pop rdi            15 registers
     32: popfq
     33: mov rsp, [rip + save + 128]
     40: jmp [rip + save + 136]
     46: int3 padding; 56: save: r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax
         rcx rdx rsi rdi, rflags, rsp, rip
   It only reads the page (which stays read-only and executable). */
#define ROUTINE_SAVE 56
#define ROUTINE_LEN (ROUTINE_SAVE + 18 * 8)

static size_t
routine_code(uint8_t *c)
{
	static const uint8_t pops[] = {
		0x41, 0x5f, 0x41, 0x5e, 0x41, 0x5d, 0x41, 0x5c, /* r15-r12 */
		0x5d, 0x5b,                                     /* rbp rbx */
		0x41, 0x5b, 0x41, 0x5a, 0x41, 0x59, 0x41, 0x58, /* r11-r8 */
		0x58, 0x59, 0x5a, 0x5e, 0x5f,   /* rax rcx rdx rsi rdi */
		0x9d,                           /* popfq */
	};
	size_t n = 0;
	c[n++] = 0x0f;
	c[n++] = 0x05;
	int32_t rel = ROUTINE_SAVE - 9;
	c[n++] = 0x48; c[n++] = 0x8d; c[n++] = 0x25; /* lea rsp, [rip+rel] */
	memcpy(c + n, &rel, 4);
	n += 4;
	memcpy(c + n, pops, sizeof(pops));
	n += sizeof(pops);
	rel = ROUTINE_SAVE + 128 - (int32_t)(n + 7);
	c[n++] = 0x48; c[n++] = 0x8b; c[n++] = 0x25; /* mov rsp, [rip+rel] */
	memcpy(c + n, &rel, 4);
	n += 4;
	rel = ROUTINE_SAVE + 136 - (int32_t)(n + 6);
	c[n++] = 0xff; c[n++] = 0x25;                /* jmp [rip+rel] */
	memcpy(c + n, &rel, 4);
	n += 4;
	while (n < ROUTINE_SAVE)
		c[n++] = 0xcc;
	return n;
}

/* R as it resumes: a system call it was stopped in (PTRACE_INTERRUPT in
   a blocking call) is restarted, as the kernel restarts it when no
   handler runs. The kernel would do it itself at the signal stop it was
   taken from, but an injected call ends at a syscall stop, where it does
   not. */
static void
restart_state(struct user_regs_struct *r)
{
	int64_t rax = (int64_t)r->rax;
	if ((int64_t)r->orig_rax < 0)
		return;
	if (rax == -512 || rax == -513 || rax == -514) /* -ERESTART* */
		r->rax = r->orig_rax;
	else if (rax == -516) /* -ERESTART_RESTARTBLOCK */
		r->rax = SYS_restart_syscall;
	else
		return;
	r->rip -= 2;
	r->orig_rax = (uint64_t)-1;
}

/* The routine's save area for R (see the routine). */
static void
resume_state(const struct user_regs_struct *regs, uint64_t out[18])
{
	struct user_regs_struct r = *regs;
	restart_state(&r);
	const uint64_t v[18] = {
		r.r15, r.r14, r.r13, r.r12, r.rbp, r.rbx, r.r11, r.r10,
		r.r9, r.r8, r.rax, r.rcx, r.rdx, r.rsi, r.rdi, r.eflags,
		r.rsp, r.rip,
	};
	memcpy(out, v, sizeof(v));
}

/* Before P has a scratch page (the first injection maps it), the routine
   goes where nothing runs: the zero bytes that end an executable file
   mapping (its segment's padding up to the page's end). A heaptrace killed
   while its routine sat there leaves it there, code and save area: a
   process has only a few such paddings (perl: 5), and once every one held
   a dead session's routine, the next attach injected from a bare syscall
   instruction, and one killed then left the thread to run the program's
   code after that instruction with the injected call's registers (perl
   crashed). So a padding holding nothing but such a routine is taken
   again, unless a thread may still be running it. */
struct slack {
	pid_t pid;
	bool dead_ok; /* a dead session's routine may be replaced */
	uint64_t at;
};

#define SLACK_TAIL (ROUTINE_LEN + 16)
#define STACK_SCAN (256 * 1024) /* bytes above a stack pointer searched for
				   a signal frame's saved pc */

/* TAIL, read at FROM, holds a routine (at *AT) and zeros around it. */
static bool
tail_holds_routine(const uint8_t tail[SLACK_TAIL], uint64_t from,
		   uint64_t *at)
{
	uint8_t code[ROUTINE_SAVE];
	routine_code(code);
	size_t off = (size_t)(((from + 15) & ~15ULL) - from);
	if (memcmp(tail + off, code, sizeof(code)))
		return false;
	for (size_t i = 0; i < SLACK_TAIL; i++)
		if ((i < off || i >= off + ROUTINE_LEN) && tail[i])
			return false;
	*at = from + off;
	return true;
}

/* A thread of PID may still run the routine at AT: its pc is in it (the
   session died after the routine's call began; the thread runs on to its
   last jump), or a word on its stack is (a signal frame saved there, to
   return into it), or its registers cannot be read (not stopped: no
   telling). The thread's registers are read through ptrace: every thread
   of the process is ours and stopped when a session first injects. */
static bool
routine_busy(pid_t pid, uint64_t at)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (!d)
		return true;
	static uint64_t words[STACK_SCAN / 8];
	bool busy = false;
	for (struct dirent *e; !busy && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);
		struct user_regs_struct r;
		if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0) {
			busy = !task_is_zombie(pid, tid); /* zombie: runs
							     nothing */
			continue;
		}
		if (r.rip >= at && r.rip < at + ROUTINE_SAVE)
			busy = true;
		ssize_t n = mem_read(pid, r.rsp & ~7ULL, words, sizeof(words));
		for (ssize_t i = 0; !busy && i < n / 8; i++)
			busy = words[i] >= at && words[i] < at + ROUTINE_SAVE;
	}
	closedir(d);
	return busy;
}

static int
find_slack(void *arg, const struct mapping *m)
{
	struct slack *sl = arg;
	if (m->perms[2] != 'x' || m->path[0] != '/' ||
	    m->hi - m->lo < 4096)
		return 0;
	uint8_t tail[SLACK_TAIL];
	uint64_t from = m->hi - sizeof(tail);
	if (mem_read(sl->pid, from, tail, sizeof(tail)) != sizeof(tail))
		return 0;
	uint64_t dead;
	if (sl->dead_ok && tail_holds_routine(tail, from, &dead) &&
	    !routine_busy(sl->pid, dead)) {
		sl->at = dead;
		return 1;
	}
	for (size_t i = 0; i < sizeof(tail); i++)
		if (tail[i])
			return 0;
	sl->at = (from + 15) & ~15ULL;
	return 1;
}

/* The routine for P: in a scratch page once P has one, else in slack
   (P->inject_slack says so, for inject_forget): a padding of zeros first,
   else one a killed session's routine holds. 0 when there is no room for
   it anywhere. */
static uint64_t
routine_get(struct tproc *p, pid_t tid)
{
	static bool making; /* scratch_alloc may inject: plainly then */
	/* The slack's routine serves only until the first scratch page is
	   there (and while the scratch one is being made): a session
	   killed after that leaves the padding as it found it. */
	if (p->inject_routine &&
	    (p->inject_slack ? !p->n_scratch || making : p->n_scratch > 0))
		return p->inject_routine;
	if (making)
		return 0;
	making = true;
	uint64_t at = 0;
	bool slack = !p->n_scratch;
	if (slack) {
		struct slack sl = { .pid = p->pid };
		maps_foreach(p->pid, find_slack, &sl);
		if (!sl.at) {
			sl.dead_ok = true;
			maps_foreach(p->pid, find_slack, &sl);
		}
		at = sl.at;
	} else if (scratch_alloc(p, tid, p->scratch[0].addr, ROUTINE_LEN,
				 &at)) {
		at = 0;
	}
	making = false;
	uint8_t code[ROUTINE_SAVE];
	size_t n = routine_code(code);
	if (!at || mem_write_code(p, tid, at, code, n)) {
		ht_debug("process %d: no room for the injection routine: "
			 "system calls injected from a bare syscall "
			 "instruction", (int)p->pid);
		return 0;
	}
	if (p->inject_slack)
		inject_forget(p, tid); /* a scratch page now: slack back */
	p->inject_routine = at;
	p->inject_slack = slack;
	return at;
}

void
inject_forget(struct tproc *p, pid_t tid)
{
	if (!p->inject_slack)
		return;
	static const uint8_t zeros[ROUTINE_LEN];
	mem_write_code(p, tid, p->inject_routine, zeros, sizeof(zeros));
	p->inject_slack = false;
	p->inject_routine = 0;
}

/* ---- Unmapping the scratch pages ---- */

static bool in_last_unmap; /* for test_die_in_inject */

static int
scratch_unmap(struct tproc *p, pid_t tid, const struct scratch *s)
{
	uint64_t args[6] = { s->addr, s->size };
	uint64_t ret;
	int err = inject_syscall(p, tid, SYS_munmap, args, &ret);
	return err ? err : (int64_t)ret < 0 ? (int)(int64_t)ret : 0;
}

int
scratch_unmap_all(struct tproc *p, pid_t tid, uint64_t *failed_at)
{
	/* The page holding the routine goes last, and not through that
	   routine: every other munmap needs it (its save area is written
	   before each call), and a heaptrace that died inside the munmap of
	   the routine's own page would leave the thread to return into
	   nothing. So the routine moves to a code padding first (or, in a
	   process without one, the call is made from a bare syscall
	   instruction), which inject_forget gives back. */
	struct scratch home = { 0 };
	int first = 0;
	for (size_t i = 0; i < p->n_scratch; i++) {
		const struct scratch *s = &p->scratch[i];
		if (!p->inject_slack && p->inject_routine >= s->addr &&
		    p->inject_routine < s->addr + s->size) {
			home = *s;
			continue;
		}
		int err = scratch_unmap(p, tid, s);
		if (err && !first) {
			first = err;
			*failed_at = s->addr;
		}
	}
	/* Forgotten, mapped or not: the routine is looked for in slack
	   from now on. */
	p->n_scratch = 0;
	if (!home.addr)
		return first;
	p->inject_routine = 0;
	in_last_unmap = true;
	int err = scratch_unmap(p, tid, &home);
	in_last_unmap = false;
	if (err && !first) {
		first = err;
		*failed_at = home.addr;
	}
	return first;
}

/* Resume TID with PTRACE_SYSCALL until its next syscall stop of kind OP
   (PTRACE_SYSCALL_INFO_ENTRY or _EXIT): a thread interrupted inside a
   blocking call first reports that call's exit. Signals that arrive
   meanwhile are remembered in *PENDING_SIG (one is enough: the kernel
   queues the rest) for re-delivery by the caller. */
static int
to_syscall_stop(pid_t tid, int op, int *pending_sig)
{
	for (;;) {
		if (ptrace(PTRACE_SYSCALL, tid, NULL, NULL) < 0)
			return -errno;
		int status;
		if (waitpid(tid, &status, __WALL) < 0)
			return -errno;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return -ESRCH;
		if (!WIFSTOPPED(status) || (status >> 16) != 0)
			continue; /* an event stop: go on */
		int sig = WSTOPSIG(status) & 0x7f;
		if (sig != SIGTRAP) {
			*pending_sig = sig;
			continue;
		}
		struct __ptrace_syscall_info info;
		if (ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(info),
			   &info) > 0 && info.op == op)
			return 0;
	}
}

/* Test hook (tests/run/survive.sh): with HEAPTRACE_TEST_DIE_IN_INJECT=N
   in its environment, heaptrace SIGKILLs itself at the syscall-entry stop
   of its Nth injected call (case attach-inject), the moment where only
   the routine can put the thread back; with =unmap, at that of a
   detach's munmap of the routine's own scratch page (case detach-inject),
   where the thread must not be left to return into that page. */
static void
test_die_in_inject(void)
{
	static long left = -1;
	static bool at_unmap;
	if (left < 0) {
		const char *n = getenv("HEAPTRACE_TEST_DIE_IN_INJECT");
		at_unmap = n && strcmp(n, "unmap") == 0;
		left = n && !at_unmap ? strtol(n, NULL, 10) : 0;
	}
	if ((left > 0 && --left == 0) || (at_unmap && in_last_unmap))
		raise(SIGKILL);
}

/* ---- The target's own seccomp filter ----

   An injected call meets the target's seccomp filters like the target's
   own calls (the kernel runs them after the syscall-entry stop): a denial
   fails it, a kill action kills the process, a trap sends it SIGSYS. With
   CAP_SYS_ADMIN the filters are lifted for heaptrace's call alone
   (PTRACE_O_SUSPEND_SECCOMP set on the thread before it and cleared
   before the thread runs anything of its own, so the program's calls
   always meet its filters; a heaptrace that dies in between leaves the
   thread detached, and the kernel clears the flag with the rest of its
   ptrace state). Without it, nothing is injected into such a process:
   which calls its filter kills for cannot be known (reading a filter
   needs CAP_SYS_ADMIN too), and a filter that only denies would still
   make the call fail. Filters heaptrace runs under itself (a
   container's) are left out: the program inherits them (run) or shares
   them (attach, in the same container), and heaptrace makes the calls
   it injects under them too (inject_session). */

#ifndef PTRACE_O_SUSPEND_SECCOMP
#define PTRACE_O_SUSPEND_SECCOMP 0x00200000
#endif

static long session_options;
/* Filters a target may have that are not its own: heaptrace's page
   filter, and those heaptrace itself runs under (a container's, a
   service manager's), which its processes inherit (run) or share
   (attach, in the same container): they allow what heaptrace does. */
static long session_filters;

/* The number after KEY in a /proc/PID/status text, or -1. */
static long
status_field(const char *text, const char *key)
{
	const char *at = strstr(text, key);
	return at ? strtol(at + strlen(key), NULL, 10) : -1;
}

/* /proc/PID/status's seccomp mode and filter count (-1: not said, an
   old kernel) of process PID (0: heaptrace); false when unreadable. */
static bool
seccomp_status(pid_t pid, long *mode, long *filters)
{
	char path[64], text[4096];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	*mode = status_field(text, "\nSeccomp:");
	*filters = status_field(text, "\nSeccomp_filters:");
	return true;
}

void
inject_session(long options, int own_filters)
{
	long mode, filters;
	session_options = options;
	session_filters = own_filters;
	if (!seccomp_status(0, &mode, &filters) || mode != 2)
		return;
	/* The one call heaptrace injects and does not make itself: made
	   here first, under the same filters (a kill action kills
	   heaptrace, not the program; a denial makes them the program's
	   own, not to be met). */
	int fd = memfd_create("heaptrace-ring", MFD_CLOEXEC);
	if (fd < 0)
		return;
	close(fd);
	session_filters += filters > 0 ? filters : 1;
}

/* Whether P has a seccomp filter of its own: strict mode, or more
   filters than session_filters (an old kernel that does not count them:
   any filter when heaptrace has none). A yes is kept: a filter is never
   removed, and outlives fork and exec. */
static bool
has_own_seccomp(struct tproc *p)
{
	long mode, filters;
	if (p->own_seccomp)
		return true;
	if (!seccomp_status(p->pid, &mode, &filters))
		return false; /* gone: the call fails by itself */
	p->own_seccomp = mode == 1 ||
			 (mode == 2 && (filters < 0 ? session_filters == 0
						    : filters > session_filters));
	return p->own_seccomp;
}

/* TID's filters lifted for one call (ON), or back. 0, -HT_E_SECCOMP when
   heaptrace may not lift them, or -errno. */
static int
seccomp_suspend(pid_t tid, bool on)
{
	long opts = session_options | (on ? PTRACE_O_SUSPEND_SECCOMP : 0);
	if (ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)opts) == 0)
		return 0;
	/* EPERM: no CAP_SYS_ADMIN, or heaptrace itself runs under a
	   filter; EINVAL: a kernel without CONFIG_CHECKPOINT_RESTORE. */
	return on && (errno == EPERM || errno == EINVAL) ? -HT_E_SECCOMP
							 : -errno;
}

static int inject_unfiltered(struct tproc *p, pid_t tid, long nr,
			     const uint64_t args[6], uint64_t *ret);

int
inject_syscall(struct tproc *p, pid_t tid, long nr, const uint64_t args[6],
	       uint64_t *ret)
{
	if (!has_own_seccomp(p))
		return inject_unfiltered(p, tid, nr, args, ret);
	int err = seccomp_suspend(tid, true);
	if (err) {
		ht_debug("process %d: no system call injected: %s",
			 (int)p->pid, ht_strerror(-err));
		return err;
	}
	err = inject_unfiltered(p, tid, nr, args, ret);
	int back = seccomp_suspend(tid, false);
	return err ? err : back == -ESRCH ? 0 : back;
}

/* inject_syscall, for a call no filter of the target's will see. */
static int
inject_unfiltered(struct tproc *p, pid_t tid, long nr, const uint64_t args[6],
		  uint64_t *ret)
{
	struct user_regs_struct saved, r;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0)
		return -errno;
	uint64_t routine = routine_get(p, tid);
	r = saved;
	if (routine) {
		/* Written before the registers point there. */
		uint64_t state[18];
		resume_state(&saved, state);
		int err = mem_write_code(p, tid, routine + ROUTINE_SAVE, state,
					 sizeof(state));
		if (err)
			return err;
	}
	r.rax = (uint64_t)nr;
	r.orig_rax = (uint64_t)-1;
	r.rip = routine ? routine : p->syscall_insn;
	r.rdi = args[0];
	r.rsi = args[1];
	r.rdx = args[2];
	r.r10 = args[3];
	r.r8 = args[4];
	r.r9 = args[5];
	if (ptrace(PTRACE_SETREGS, tid, NULL, &r) < 0)
		return -errno;
	int pending = 0;
	int err = to_syscall_stop(tid, PTRACE_SYSCALL_INFO_ENTRY, &pending);
	if (!err)
		test_die_in_inject();
	if (!err)
		err = to_syscall_stop(tid, PTRACE_SYSCALL_INFO_EXIT, &pending);
	if (err)
		return err;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) < 0)
		return -errno;
	*ret = r.rax;
	restart_state(&saved);
	if (ptrace(PTRACE_SETREGS, tid, NULL, &saved) < 0)
		return -errno;
	if (pending)
		syscall(SYS_tgkill, p->pid, tid, pending); /* re-raise it */
	return 0;
}

int
inject_leave_exec(pid_t tid)
{
	/* The execve's own syscall-exit stop follows its event stop: no
	   single step, whose trap flag a tracer that died during it would
	   leave set. */
	int pending = 0;
	int err = to_syscall_stop(tid, PTRACE_SYSCALL_INFO_EXIT, &pending);
	if (!err && pending)
		syscall(SYS_tkill, tid, pending); /* re-raise it */
	return err;
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
