/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --pages-as-heap=yes: the program's page-level system calls, caught by
   the seccomp filter (seccomp.c), reported as HT_EV_MMAP, HT_EV_MUNMAP,
   HT_EV_MREMAP and HT_EV_BRK once they completed; plus, at exec, the
   mappings the kernel made with no call at all (tracing-techniques.md
   §4.2, "Gap"). The engine applies Massif's page rules: this file reports
   calls as the kernel took them.

   Each call costs two stops: the filter's at its entry, where its stack is
   captured (the caller's frames are intact there, as for an allocator's
   entry), then, resumed with PTRACE_SYSCALL once, its exit, where the
   result says whether it happened; then the thread is continued as usual,
   so no other system call stops. */
#include "tracer/pages/pages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "tracer/inline/inline.h"
#include "tracer/inline/ring.h"
#include "tracer/measure/measure.h"
#include "tracer/target/target.h"

#define X32_SYSCALL_BIT 0x40000000UL
#define PAGE_SIZE_4K 4096ULL

/* Bytes of stack copied at each call; the unwinder reads the rest from
   the stopped thread itself. */
#define STACK_CAPTURE (16 * 1024)

/* The kernel's error returns are -4095..-1. */
static bool
syscall_failed(uint64_t rv)
{
	return rv > (uint64_t)-4096;
}

void
pagecalls_clear(struct tracee *tc)
{
	if (!tc->page_call)
		return;
	free(tc->page_call->pcs);
	free(tc->page_call);
	tc->page_call = NULL;
}

/* The mapping that starts at ADDR, for the size of a SysV segment. */
struct mapping_at {
	uint64_t addr, size;
};

static int
match_start(void *arg, const struct mapping *m)
{
	struct mapping_at *w = arg;
	if (m->lo != w->addr)
		return 0;
	w->size = m->hi - m->lo;
	return 1;
}

static uint64_t
mapping_size_at(pid_t pid, uint64_t addr)
{
	struct mapping_at w = { .addr = addr };
	maps_foreach(pid, match_start, &w);
	return w.size;
}

/* TC's stack at the call, unwound from REGS: PCS[0] is the syscall
   instruction (2 bytes before the pc at the stop), as for an allocator
   probe's entry. */
static void
unwind_call(struct tracer *t, struct tracee *tc,
	    const struct user_regs_struct *regs, struct page_call *pc)
{
	static uint8_t stack[STACK_CAPTURE];
	ssize_t n = mem_read(tc->tid, regs->rsp, stack, sizeof(stack));
	struct tracer_capture cap = {
		.regs = *regs, .stack = stack, .len = n > 0 ? (size_t)n : 0,
		.stack_addr = regs->rsp,
	};
	cap.regs.rip = regs->rip - 2;
	unsigned k = t->sink->unwind(t->sink->ctx, tc->proc->pid, &cap,
				     t->pcs_scratch, t->max_pcs);
	pc->pcs = ht_xmalloc((k ? k : 1) * sizeof(*pc->pcs));
	memcpy(pc->pcs, t->pcs_scratch, k * sizeof(*pc->pcs));
	pc->npcs = k;
}

/* Resume TC as the session resumes every thread (PTRACE_CONT, or
   PTRACE_SYSCALL when attached). */
static void
resume_thread(const struct tracer *t, const struct tracee *tc)
{
	ptrace((enum __ptrace_request)t->resume_req, tc->tid, NULL, NULL);
}

/* Remember TC's page call stopped at its entry with REGS (its stack
   unwound now); false when there is nothing to watch (brk(0) only asks
   where the break is). */
static bool
remember_call(struct tracer *t, struct tracee *tc,
	      const struct user_regs_struct *regs)
{
	long nr = (long)(regs->orig_rax & ~X32_SYSCALL_BIT);
	if (nr == __NR_brk && regs->rdi == 0)
		return false;
	struct page_call *pc = ht_xcalloc(1, sizeof(*pc));
	pc->nr = nr;
	pc->args[0] = regs->rdi;
	pc->args[1] = regs->rsi;
	pc->args[2] = regs->rdx;
	pc->args[3] = regs->r10;
	pc->args[4] = regs->r8;
	pc->args[5] = regs->r9;
	pc->sp = regs->rsp;
	if (nr == __NR_shmdt)
		pc->shm_size = mapping_size_at(tc->proc->pid, pc->args[0]);
	unwind_call(t, tc, regs, pc);
	tc->page_call = pc;
	return true;
}

void
pagecalls_on_seccomp(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	struct user_regs_struct regs;
	pagecalls_clear(tc);
	if (!p || !p->profiling ||
	    ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) < 0 ||
	    !remember_call(t, tc, &regs)) {
		resume_thread(t, tc);
		return;
	}
	if (ptrace(PTRACE_SYSCALL, tc->tid, NULL, NULL) < 0)
		pagecalls_clear(tc); /* gone: its exit is reported next */
}

/* The calls the seccomp filter stops at (seccomp.c), x32 bit cleared. */
static bool
is_page_call(long nr)
{
	return nr == __NR_mmap || nr == __NR_munmap || nr == __NR_mremap ||
	       nr == __NR_brk || nr == __NR_shmat || nr == __NR_shmdt;
}

void
pagecalls_on_syscall_stop(struct tracer *t, struct tracee *tc)
{
	/* Entry and exit stops look alike: the kernel says which this is
	   (an exit may come first, of a call begun before we attached). */
	struct __ptrace_syscall_info info;
	long n = ptrace(PTRACE_GET_SYSCALL_INFO, tc->tid,
			(void *)sizeof(info), &info);
	if (n > 0 && info.op == PTRACE_SYSCALL_INFO_EXIT &&
	    pagecalls_on_syscall_exit(t, tc))
		return;
	pagecalls_clear(tc);
	struct user_regs_struct regs;
	if (n > 0 && info.op == PTRACE_SYSCALL_INFO_ENTRY && tc->proc &&
	    tc->proc->profiling &&
	    is_page_call((long)(info.entry.nr & ~X32_SYSCALL_BIT)) &&
	    ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) == 0)
		remember_call(t, tc, &regs);
	resume_thread(t, tc);
}

/* Describe the completed call PC that returned RV in P as *EV. False when
   it failed or changed nothing. */
static bool
describe_call(struct tproc *p, const struct page_call *pc, uint64_t rv,
	      struct ht_event *ev)
{
	if (pc->nr != __NR_brk && syscall_failed(rv))
		return false;
	switch (pc->nr) {
	case __NR_mmap:
		ev->kind = HT_EV_MMAP;
		ev->addr = rv;
		ev->size = pc->args[1];
		return true;
	case __NR_shmat:
		ev->kind = HT_EV_MMAP;
		ev->addr = rv;
		ev->size = mapping_size_at(p->pid, rv);
		return ev->size != 0;
	case __NR_munmap:
		ev->kind = HT_EV_MUNMAP;
		ev->addr = pc->args[0];
		ev->size = pc->args[1];
		return true;
	case __NR_shmdt:
		ev->kind = HT_EV_MUNMAP;
		ev->addr = pc->args[0];
		ev->size = pc->shm_size;
		return ev->size != 0;
	case __NR_mremap:
		ev->kind = HT_EV_MREMAP;
		ev->old_addr = pc->args[0];
		ev->old_size = pc->args[1];
		ev->addr = rv;
		ev->size = pc->args[2];
		return true;
	case __NR_brk:
		/* brk never fails: it returns the break, moved or not. */
		if (rv == p->brk)
			return false;
		ev->kind = HT_EV_BRK;
		ev->old_addr = p->brk;
		ev->addr = rv;
		p->brk = rv;
		return true;
	}
	return false;
}

bool
pagecalls_describe_inline(struct tproc *p, unsigned fn, const uint64_t args[3],
			  uint64_t rv, struct ht_event *ev)
{
	static const long nr_of[RING_PAGE_N] = {
		[RING_PAGE_MMAP] = __NR_mmap, [RING_PAGE_MUNMAP] = __NR_munmap,
		[RING_PAGE_MREMAP] = __NR_mremap, [RING_PAGE_BRK] = __NR_brk,
		[RING_PAGE_SHMAT] = __NR_shmat, [RING_PAGE_SHMDT] = __NR_shmdt,
	};
	if (fn >= RING_PAGE_N)
		return false;
	struct page_call pc = {
		.nr = nr_of[fn],
		.args = { args[0], args[1], args[2] },
	};
	/* The wrappers' conventions, as the system calls': brk(addr) gives
	   0 when the break moved to ADDR (else it stayed); munmap and shmdt
	   are recorded at their entry (taken as done), and a segment's size
	   is read while it is still attached, if it is. */
	if (pc.nr == __NR_brk) {
		if (!args[0])
			return false;
		rv = rv == 0 ? args[0] : p->brk;
	}
	if (pc.nr == __NR_shmdt)
		pc.shm_size = mapping_size_at(p->pid, args[0]);
	return describe_call(p, &pc, rv, ev);
}

/* A new executable mapping of a file is a library (or code) loaded: the
   symbol session re-reads the modules. */
static bool
maps_code(const struct page_call *pc)
{
	return pc->nr == __NR_mmap && (pc->args[2] & PROT_EXEC) &&
	       !(pc->args[3] & MAP_ANONYMOUS);
}

bool
pagecalls_on_syscall_exit(struct tracer *t, struct tracee *tc)
{
	struct page_call *pc = tc->page_call;
	if (!pc)
		return false;
	struct user_regs_struct regs;
	struct tproc *p = tc->proc;
	if (ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) == 0 && p->profiling) {
		struct ht_event ev = {
			.tid = (uint32_t)tc->tid, .pcs = pc->pcs,
			.npcs = pc->npcs,
		};
		if (describe_call(p, pc, regs.rax, &ev)) {
			if (maps_code(pc))
				t->sink->modules_changed(t->sink->ctx, p->pid);
			ev.time = tracer_clock(t, p);
			t->sink->event(t->sink->ctx, p->pid, &ev);
		}
	}
	pagecalls_clear(tc);
	resume_thread(t, tc);
	return true;
}

/* ---- Start-up ---- */

/* Which of the mappings present at exec are reported, as Valgrind's
   start-up segments: every one of the program's (executable, ld.so,
   their bss), and of the initial stack only the pages in use (Valgrind
   builds a client stack of just that size); not the kernel's [vvar] and
   [vdso], which Valgrind does not count, nor [vsyscall]. */
struct startup {
	struct tracer *t;
	struct tproc *p;
	uint64_t sp;
	uint64_t time;
};

static bool
kernel_mapping(const char *path)
{
	return strcmp(path, "[vvar]") == 0 || strcmp(path, "[vdso]") == 0 ||
	       strcmp(path, "[vsyscall]") == 0 ||
	       strncmp(path, "[vvar_", 6) == 0;
}

static int
report_startup(void *arg, const struct mapping *m)
{
	struct startup *s = arg;
	if (kernel_mapping(m->path))
		return 0;
	uint64_t lo = m->lo;
	if (strcmp(m->path, "[stack]") == 0 && s->sp >= m->lo && s->sp < m->hi)
		lo = s->sp & ~(PAGE_SIZE_4K - 1);
	ht_debug("process %d: start-up mapping 0x%llx-0x%llx %s",
		 (int)s->p->pid, (unsigned long long)lo,
		 (unsigned long long)m->hi, m->path);
	static const uint64_t startup_pc = 0;
	struct ht_event ev = {
		.kind = HT_EV_MMAP, .addr = lo, .size = m->hi - lo,
		.tid = (uint32_t)s->p->pid, .time = s->time,
		.pcs = &startup_pc, .npcs = 1,
	};
	s->t->sink->event(s->t->sink->ctx, s->p->pid, &ev);
	return 0;
}

/* The program break at exec: start_brk, field 47 of /proc/PID/stat (the
   kernel sets brk = start_brk there). 0 when unreadable. */
static uint64_t
read_start_brk(pid_t pid)
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	/* Fields after the command name (which may hold spaces), from
	   field 3, the state. */
	char *rest = strrchr(buf, ')'), *save = NULL;
	int field = 3;
	for (char *tok = rest ? strtok_r(rest + 1, " ", &save) : NULL; tok;
	     tok = strtok_r(NULL, " ", &save), field++)
		if (field == 47)
			return strtoull(tok, NULL, 10);
	return 0;
}

void
pagecalls_startup(struct tracer *t, struct tproc *p, pid_t tid)
{
	struct user_regs_struct regs;
	struct startup s = {
		.t = t, .p = p, .time = tracer_clock(t, p),
	};
	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) == 0)
		s.sp = regs.rsp;
	int err = maps_foreach(p->pid, report_startup, &s);
	if (err)
		ht_warn("process %d: cannot read its mappings: %s",
			(int)p->pid, ht_strerror(err));
	p->brk = read_start_brk(p->pid);
	/* The initial break, for the engine to measure brk calls from (no
	   page moves: the break is where the heap will start). */
	static const uint64_t startup_pc = 0;
	struct ht_event ev = {
		.kind = HT_EV_BRK, .old_addr = p->brk, .addr = p->brk,
		.tid = (uint32_t)p->pid, .time = s.time,
		.pcs = &startup_pc, .npcs = 1,
	};
	if (p->brk)
		t->sink->event(t->sink->ctx, p->pid, &ev);
}

/* Attached: every mapping but the kernel's is a start-up mapping; the
   heap's pages are the break's, reported as a move from start_brk to the
   end of [heap]. */
struct attach_startup {
	struct startup s;
	uint64_t heap_end;
};

/* M is heaptrace's: a scratch page or the inline ring, mapped by the
   attach itself, not by the program. */
static bool
ours(const struct tproc *p, const struct mapping *m)
{
	for (size_t i = 0; i < p->n_scratch; i++)
		if (m->lo < p->scratch[i].addr + p->scratch[i].size &&
		    p->scratch[i].addr < m->hi)
			return true;
	uint64_t lo, hi;
	return inline_ring_extent(p, &lo, &hi) && m->lo < hi && lo < m->hi;
}

static int
report_current(void *arg, const struct mapping *m)
{
	struct attach_startup *a = arg;
	if (ours(a->s.p, m))
		return 0;
	if (strcmp(m->path, "[heap]") == 0) {
		a->heap_end = m->hi;
		return 0;
	}
	return report_startup(&a->s, m);
}

void
pagecalls_attach_startup(struct tracer *t, struct tproc *p)
{
	struct attach_startup a = {
		.s = { .t = t, .p = p, .time = tracer_clock(t, p) },
	};
	int err = maps_foreach(p->pid, report_current, &a);
	if (err)
		ht_warn("process %d: cannot read its mappings: %s",
			(int)p->pid, ht_strerror(err));
	p->brk = read_start_brk(p->pid);
	if (!p->brk)
		return;
	static const uint64_t startup_pc = 0;
	struct ht_event ev = {
		.kind = HT_EV_BRK, .old_addr = p->brk, .addr = p->brk,
		.tid = (uint32_t)p->pid, .time = a.s.time,
		.pcs = &startup_pc, .npcs = 1,
	};
	t->sink->event(t->sink->ctx, p->pid, &ev);
	if (a.heap_end > p->brk) {
		ev.addr = a.heap_end;
		t->sink->event(t->sink->ctx, p->pid, &ev);
		p->brk = a.heap_end;
	}
}
