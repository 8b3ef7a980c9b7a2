/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The inline event path, tracer side (docs/inline-backend.md): a ring
   shared with the target, the stub blob and one trampoline per patched
   allocator written into the target's scratch pages, each allocator's
   entry overwritten by a jmp to its trampoline, and the ring drained into
   the same events the breakpoint path reports. Functions that cannot be
   patched safely keep an int3 probe; the two paths mix freely because both
   are drained or handled in ring/stop order (every stop of a process first
   drains its ring). */
#include "tracer/inline/inline_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/err.h"
#include "common/synthframe.h"
#include "common/xalloc.h"
#include "tracer/inline/consumer.h"
#include "tracer/inline/pymemo.h"
#include "tracer/inline/stub_blob.h"
#include "tracer/inline/tramp.h"
#include "tracer/inline/tsc.h"
#include "tracer/measure/measure.h"
#include "tracer/python/python.h"
#include "tracer/target/target.h"

/* The thread table's first segment: at least this many entries, and
   twice the threads the process has when its ring is made (a segment is
   at most half full), so that they all fit in it. */
#define THREAD_CAP_MIN 1024
/* Threads a process can have when /proc does not say. */
#define THREADS_MAX_DEFAULT (1u << 22)
/* Rule-table entries (32 bytes each), at most half of them used: lookup
   pcs met in stacks, a few hundred for perl, thousands for a compiler.
   When it is full it is emptied and filled again. */
#define RULE_CAP 65536
/* Sampling: the stubs walk a stack in thousands of calls and no rules are
   preloaded (rules_preload), so far fewer are published (cc1 -O2 at
   512K: 1,300), while each lands on a page of its own of the table (the
   hash spreads them over all of it), which the tracer and the stubs
   then fault in: a quarter of the table, 512 KiB. */
#define RULE_CAP_SAMPLED 16384
/* Stack bytes read at a rule-table miss to publish the rules of the frames
   above the one missed too. */
#define LOOKAHEAD_STACK (64 * 1024)
/* Code after a RULE question's return address whose calls get their
   rules too (rule_prefetch), while the rule table is at most this share
   full (it is emptied at half). */
#define PREFETCH_CODE 256
#define PREFETCH_FILL 4
/* Stack bytes copied per allocation, at most: enough for the frames the
   tree needs in deep programs, while a shallow stack costs only what it
   holds (the stub copies up to the stack's top, no further). A small ring
   caps it at a quarter of the ring. */
#define STACK_COPY 16384
#define RECORD_WAIT_NS 2000000ULL /* a thread mid-record finishes quickly */

static uint32_t
stack_copy(const struct tracer *t)
{
	uint32_t quarter = t->opt->ring_size / 4;
	return quarter < STACK_COPY ? quarter : STACK_COPY;
}

static uint32_t
read_sysctl(const char *path)
{
	FILE *f = fopen(path, "re");
	unsigned long v = 0;
	if (f) {
		if (fscanf(f, "%lu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The most threads a process can have: the system's limits on threads
   and on thread ids, as they are now. */
static uint32_t
threads_max(void)
{
	static uint32_t max;
	if (!max) {
		uint32_t th = read_sysctl("/proc/sys/kernel/threads-max");
		uint32_t ids = read_sysctl("/proc/sys/kernel/pid_max");
		max = th && ids ? (th < ids ? th : ids) : th ? th : ids;
		if (!max)
			max = THREADS_MAX_DEFAULT;
	}
	return max;
}

/* The first segment of P's thread table. */
static uint32_t
thread_cap(const struct tproc *p)
{
	uint32_t cap = THREAD_CAP_MIN;
	while (cap < (1u << 20) && cap / 2 < (uint32_t)p->n_threads)
		cap *= 2;
	return cap;
}

/* How the stubs use their walk memos: HEAPTRACE_WALK_MEMO=no|yes|check
   (tests and benchmarks compare them; docs/inline-backend.md, "The walk
   memo"), yes when unset or anything else. */
static enum ring_memo_mode
walk_memo_mode(void)
{
	const char *v = getenv("HEAPTRACE_WALK_MEMO");
	if (v && strcmp(v, "no") == 0)
		return RING_MEMO_OFF;
	if (v && strcmp(v, "check") == 0)
		return RING_MEMO_CHECK;
	return RING_MEMO_ON;
}

/* A ring for process P, into IP: stubs walk stacks when the sink can give
   them rules and a walk as deep as the unwinder's fits, else copy them;
   they stamp calls with the TSC when the clock is milliseconds and the TSC
   can be trusted (else records are timed when drained). */
static int
ring_new(const struct tracer *t, struct tproc *p, struct inline_proc *ip,
	 int fd)
{
	int err = tracer_ring_new_on(fd, t->opt->ring_size, thread_cap(p),
				     threads_max(),
				     t->opt->sampling_interval ? RULE_CAP_SAMPLED
							       : RULE_CAP,
				     stack_copy(t),
				     &ip->ring);
	if (err)
		return err;
	if (t->opt->sampling_interval &&
	    tracer_ring_sampling_set(ip->ring, t->opt->sampling_interval,
				     t->opt->sampling_seed, p->ordinal) != 0) {
		tracer_ring_free(ip->ring);
		ip->ring = NULL;
		return -EINVAL;
	}
	if (t->sink->stub_rule &&
	    tracer_ring_walk_set(ip->ring, t->max_pcs) != 0)
		ht_debug("stacks too deep for the stubs to walk: copied");
	tracer_ring_memo_set(ip->ring, walk_memo_mode());
	if (t->opt->time_unit == HT_TIME_MS && tsc_usable())
		tracer_ring_stamp(ip->ring);
	ip->drain_time = t->opt->time_unit == HT_TIME_MS && !tsc_usable();
	ip->owner = p;
	ip->refs = 1;
	return 0;
}

/* ---- Mapping the ring into the target ---- */

static int
inject(struct tproc *p, pid_t tid, long nr, uint64_t a0, uint64_t a1,
       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t *ret)
{
	uint64_t args[6] = { a0, a1, a2, a3, a4, a5 };
	int err = inject_syscall(p, tid, nr, args, ret);
	if (err)
		return err;
	if ((int64_t)*ret < 0 && (int64_t)*ret > -4096)
		return (int)(int64_t)*ret;
	return 0;
}

static void
close_in_target(struct tproc *p, pid_t tid, uint64_t fd)
{
	uint64_t ignored;
	inject(p, tid, SYS_close, fd, 0, 0, 0, 0, 0, &ignored);
}

/* The ring's file, made by P itself (memfd_create, its name written into
   a scratch page) and opened here as /proc/<P>/fd/<n>: *TARGET_FD is
   P's descriptor, *FD ours. The target never reaches into heaptrace's
   files, which a process of another user could not (a daemon's workers
   run as nobody), and nothing in it names heaptrace. */
static int
ring_file_in_target(struct tproc *p, pid_t tid, uint64_t *target_fd, int *fd)
{
	static const char name[] = "heaptrace-ring";
	uint64_t name_addr;
	int err = scratch_alloc(p, tid, p->syscall_insn, sizeof(name),
				&name_addr);
	if (!err)
		err = mem_write_code(p, tid, name_addr, name, sizeof(name));
	if (!err)
		err = inject(p, tid, SYS_memfd_create, name_addr, MFD_CLOEXEC,
			     0, 0, 0, 0, target_fd);
	if (err)
		return err;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)p->pid,
		 (int)*target_fd);
	*fd = open(path, O_RDWR | O_CLOEXEC);
	if (*fd >= 0)
		return 0;
	err = -errno;
	close_in_target(p, tid, *target_fd);
	return err;
}

/* P maps IP's ring (its descriptor TARGET_FD, closed here whatever
   happens) at AT, or anywhere when AT is 0. */
static int
map_ring_at(struct tproc *p, pid_t tid, struct inline_proc *ip, uint64_t at,
	    uint64_t target_fd)
{
	struct tracer_ring_layout l;
	tracer_ring_layout(ip->ring, &l);
	uint64_t fd = target_fd, base, r;
	int err = inject(p, tid, SYS_mmap, at, l.map_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | (at ? MAP_FIXED : 0),
			 (uint64_t)-1, 0, &base);
	/* Not populated: allocating and zeroing the whole ring up front
	   cost 7-13 ms of every start-up, where a short program touches a
	   few of its pages and a long one pays a fault per page once. */
	if (!err)
		err = inject(p, tid, SYS_mmap, base, l.file_len,
			     PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_FIXED, fd, 0, &r);
	if (!err)
		err = inject(p, tid, SYS_mmap, base + l.file_len, l.size,
			     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
			     fd, l.data_off, &r); /* touched only by wrapping records */
	close_in_target(p, tid, fd);
	if (err)
		return err;
	ip->ring_addr = base;
	return 0;
}

/* IP's ring, made with P (ring_file_in_target); mapped by map_ring_at. */
static int
ring_new_in_target(struct tracer *t, struct tproc *p, pid_t tid,
		   struct inline_proc *ip, uint64_t *target_fd)
{
	int fd;
	int err = ring_file_in_target(p, tid, target_fd, &fd);
	if (err)
		return err;
	err = ring_new(t, p, ip, fd);
	if (err)
		close_in_target(p, tid, *target_fd);
	return err;
}

static int
write_blob(struct tproc *p, pid_t tid, struct inline_proc *ip, uint64_t near)
{
	int err = scratch_alloc(p, tid, near, STUB_BLOB_LEN, &ip->blob);
	if (err)
		return err;
	uint8_t blob[STUB_BLOB_LEN];
	memcpy(blob, stub_blob, sizeof(blob));
	memcpy(blob + STUB_BLOB_RING, &ip->ring_addr, sizeof(ip->ring_addr));
	return mem_write_code(p, tid, ip->blob, blob, sizeof(blob));
}

int
inline_setup(struct tracer *t, struct tproc *p, pid_t tid, uint64_t near)
{
	if (p->inl)
		return 0;
	struct inline_proc *ip = ht_xcalloc(1, sizeof(*ip));
	uint64_t target_fd;
	int err = ring_new_in_target(t, p, tid, ip, &target_fd);
	if (err) {
		free(ip);
		return err;
	}
	err = map_ring_at(p, tid, ip, 0, target_fd);
	if (!err)
		err = write_blob(p, tid, ip, near);
	if (err) {
		tracer_ring_free(ip->ring);
		free(ip);
		return err;
	}
	p->inl = ip;
	return 0;
}

/* ---- Patching ---- */

/* A target made ready while the threads run: its first instructions
   relocated into a scratch area near it, so that with the threads stopped
   only the trampoline and the jump remain to be written. */
struct prepared {
	struct inline_target *tg;
	uint64_t syscall_pc;      /* a page call's, or 0 */
	uint64_t area;            /* the trampoline, then the relocated copy */
	struct arch_relocated rel;
};

static uint64_t
copy_addr(const struct prepared *pr)
{
	return pr->area + TRACER_TRAMP_MAX;
}

static bool
already_patched(const struct inline_proc *ip, uint64_t addr)
{
	for (unsigned i = 0; i < ip->n_patches; i++)
		if (ip->patches[i].addr == addr)
			return true;
	return false;
}

/* The first of TARGETS[0..I] at TARGETS[I]'s address (memalign and
   aligned_alloc share code): only that one is patched. */
static size_t
first_at(const struct inline_target *targets, size_t i)
{
	size_t j = 0;
	while (targets[j].addr != targets[i].addr)
		j++;
	return j;
}

/* Read PR's function, relocate the instructions its jump will cover and
   write their copy into a scratch area. 0, or negative when the function
   keeps an int3. */
static int
prepare_target(struct tproc *p, pid_t tid, struct prepared *pr)
{
	const struct inline_target *tg = pr->tg;
	uint8_t code[4096];
	size_t want = tg->func_len && tg->func_len < sizeof(code)
		? tg->func_len : sizeof(code);
	ssize_t n = mem_read(tid, tg->addr, code, want); /* a live thread */
	/* A function may be shorter than 16 bytes: a lone jmp (jemalloc's
	   operator delete tail-jumps to free) is patched like any other. */
	if (n < (ssize_t)(want < 16 ? want : 16))
		return n < 0 ? (int)n : -EFAULT;
	int err = scratch_alloc(p, tid, tg->addr,
				TRACER_TRAMP_MAX + ARCH_RELOC_MAX, &pr->area);
	if (err)
		return err;
	char why[160];
	err = arch_relocate_prologue(code, (size_t)n, tg->addr,
				     ARCH_PATCH_JMP_LEN, copy_addr(pr),
				     &pr->rel, why, sizeof(why));
	if (!err && tg->func_len)
		err = arch_patch_range_is_safe(code, (size_t)n, tg->addr,
					       pr->rel.covered, why,
					       sizeof(why));
	if (!err && (tg->hook == RING_CLASS_PAGE ||
		     tg->hook == RING_CLASS_PAGE_ENTRY) &&
	    arch_find_syscall(code, (size_t)n, tg->addr, &pr->syscall_pc))
		pr->syscall_pc = 0;
	if (err) {
		ht_debug("%s at 0x%llx keeps its int3: %s",
			 ht_alloc_fn_name(tg->fn), (unsigned long long)tg->addr,
			 why);
		return err;
	}
	return mem_write_code(p, tid, copy_addr(pr), pr->rel.code, pr->rel.len);
}

/* Stopped thread TID must not resume strictly inside the bytes a jump of
   READY[0..N) replaces: one there goes on at the same instruction of the
   relocated copy, which runs the rest of the prologue and jumps back
   (that call is not recorded: it began before the patch). A thread at
   the entry itself takes the jump. MOVABLE false: TID's registers belong
   to the stop being handled, so it cannot be moved. A target TID keeps
   from being patched gets its error in ERRS[i]. Its registers are read
   once for all the targets: a thousand threads times ten functions was
   ten thousand reads with every thread held. */
static void
move_thread_out(pid_t tid, const struct prepared *ready, size_t n,
		bool movable, int *errs)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0) {
		if (errno == ESRCH)
			return; /* gone: runs nothing */
		for (size_t i = 0; i < n; i++)
			if (!errs[i])
				errs[i] = -errno;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct prepared *pr = &ready[i];
		uint64_t addr = pr->tg->addr;
		if (errs[i] || regs.rip <= addr ||
		    regs.rip >= addr + pr->rel.covered)
			continue;
		uint64_t to, from = regs.rip;
		if (!movable ||
		    arch_relocated_pc_to_copy(&pr->rel, addr, copy_addr(pr),
					      regs.rip, &to) != 1) {
			errs[i] = -EBUSY;
			return;
		}
		regs.rip = to;
		if (ptrace(PTRACE_SETREGS, tid, NULL, &regs) < 0) {
			errs[i] = -errno;
			return;
		}
		ht_debug("thread %d: pc 0x%llx inside the patch of %s: moved "
			 "to its copy, 0x%llx", (int)tid,
			 (unsigned long long)from,
			 ht_alloc_fn_name(pr->tg->fn), (unsigned long long)to);
		return; /* the ranges do not overlap */
	}
}

/* Every stopped thread of the process (SELF and those S holds) out of the
   bytes READY's jumps replace. Threads S left running cannot reach user
   code before they stop (stopall.c). */
static void
move_threads_out(pid_t self, const struct stopall *s,
		 const struct prepared *ready, size_t n, int *errs)
{
	/* SELF is among S's threads when S was made without one (attach):
	   its stop is ours, so it can be moved like the others. */
	for (size_t i = 0; i < s->n; i++)
		if (s->threads[i].tid == self)
			self = 0;
	if (self)
		move_thread_out(self, ready, n, false, errs);
	for (size_t i = 0; i < s->n; i++)
		if (s->threads[i].state == STOPALL_HERE ||
		    s->threads[i].state == STOPALL_ELSEWHERE)
			move_thread_out(s->threads[i].tid, ready, n, true,
					errs);
}

/* Make PR the next patch of IP: its trampoline, then the jump over its
   function's entry. No thread may run there meanwhile. */
static int
commit_target(struct tproc *p, pid_t tid, struct inline_proc *ip,
	      const struct prepared *pr)
{
	const struct inline_target *tg = pr->tg;
	if (ip->n_patches >= RING_MAX_FNS)
		return -ENOSPC;
	unsigned idx = ip->n_patches;
	int err = tg->hook
		? tracer_ring_hook_set(ip->ring, idx, (enum ring_class)tg->hook,
				       tg->hook_fn, tg->addr, copy_addr(pr),
				       tg->lo, tg->hi)
		: tracer_ring_fn_set(ip->ring, idx, tg->fn, tg->addr,
				     copy_addr(pr), tg->lo, tg->hi);
	if (err)
		return err;
	uint8_t tramp[TRACER_TRAMP_MAX];
	size_t tlen = tracer_tramp_encode(tramp, pr->area,
					  ip->blob + STUB_BLOB_FAST, idx);
	/* The jump over the entry, int3 in the rest of the covered bytes:
	   nothing may run them, and a bug would trap rather than run junk. */
	uint8_t patch[ARCH_RELOC_MAX_COVERED];
	memset(patch, 0xcc, pr->rel.covered);
	err = mem_write_code(p, tid, pr->area, tramp, tlen);
	if (!err)
		err = arch_encode_patch_jump(tg->addr, pr->area, patch);
	if (!err)
		err = mem_write_code(p, tid, tg->addr, patch, pr->rel.covered);
	if (err)
		return err;
	struct inline_patch *pa = &ip->patches[idx];
	*pa = (struct inline_patch){
		.addr = tg->addr, .covered = pr->rel.covered,
		.orig_code = copy_addr(pr), .tramp = pr->area, .fn = tg->fn,
		.hook = tg->hook, .hook_fn = tg->hook_fn,
		.syscall_pc = pr->syscall_pc, .obj_lo = tg->lo, .obj_hi = tg->hi,
	};
	memcpy(pa->orig, pr->rel.orig, pr->rel.covered);
	ip->n_patches++;
	ht_debug("process %d: %s at 0x%llx patched inline (%zu bytes)",
		 (int)p->pid, tg->hook == RING_CLASS_NOTIFY ? "_dl_debug_state"
			      : tg->hook == RING_CLASS_EXIT ? "_exit"
			      : tg->hook ? "a page call"
			      : ht_alloc_fn_name(tg->fn),
		 (unsigned long long)tg->addr, pr->rel.covered);
	return 0;
}

/* Stop P's other threads once, move them out of every prepared range, and
   write the patches. A target not committed keeps its int3. */
static void
commit_all(struct tracer *t, struct tproc *p, pid_t tid, struct prepared *ready,
	   size_t n)
{
	/* Attaching, every thread is held already (t->holding). */
	struct stopall own, *s = t->holding ? t->holding : &own;
	int err = t->holding ? 0 : stopall_begin(t, p, tid, &own);
	if (!err)
		ht_debug("process %d: patching %zu functions, %zu other "
			 "threads stopped", (int)p->pid, n, s->n);
	int *errs = ht_xcalloc(n, sizeof(*errs));
	for (size_t i = 0; i < n; i++)
		errs[i] = err;
	if (!err)
		move_threads_out(tid, s, ready, n, errs);
	for (size_t i = 0; i < n; i++)
		ready[i].tg->err = errs[i] ? errs[i]
					   : commit_target(p, tid, p->inl,
							   &ready[i]);
	free(errs);
	/* The first patches: the threads there were before the ring (an
	   attach's) get their entries while they cannot run, so that no
	   stub asks for one. */
	if (!err && !p->inl->entries_given) {
		inline_threads_known(t, p);
		p->inl->entries_given = true;
	}
	if (!err && !t->holding)
		stopall_end(&own);
}

static void rules_preload(struct tracer *t, struct tproc *p,
			  struct inline_proc *ip);

void
inline_patch(struct tracer *t, struct tproc *p, pid_t tid,
	     struct inline_target *targets, size_t n)
{
	struct inline_proc *ip = p->inl;
	struct prepared *ready = ht_xcalloc(n ? n : 1, sizeof(*ready));
	size_t n_ready = 0;
	for (size_t i = 0; i < n; i++) {
		struct inline_target *tg = &targets[i];
		tg->err = ip ? 0 : -ENOTSUP;
		if (!ip || already_patched(ip, tg->addr) ||
		    first_at(targets, i) < i)
			continue;
		ready[n_ready].tg = tg;
		tg->err = prepare_target(p, tid, &ready[n_ready]);
		if (!tg->err)
			n_ready++;
	}
	if (n_ready)
		commit_all(t, p, tid, ready, n_ready);
	for (size_t i = 0; i < n; i++) /* an alias shares its first's fate */
		if (ip && !already_patched(ip, targets[i].addr))
			targets[i].err = targets[first_at(targets, i)].err;
	free(ready);
	if (ip && ip->n_patches)
		rules_preload(t, p, ip);
}

bool
inline_active(const struct tproc *p)
{
	return p->inl && p->inl->n_patches;
}

/* ---- Unwinding rules and thread entries for the stubs ---- */

/* The stack mapping holding SP in MAPS: a thread's copies must stay
   inside it. The main thread's stack grows down on demand, so its low
   bound is as far as the kernel lets it grow. 0, 0 when none holds it. */
static void
stack_bounds(const struct maps_snap *maps, uint64_t sp, uint64_t *lo,
	     uint64_t *hi)
{
	const struct maps_range *m = maps_snap_find(maps, sp);
	*lo = m ? m->lo : 0;
	*hi = m ? m->hi : 0;
	if (m && m->main_stack)
		*lo = m->hi > (64ULL << 20) ? m->hi - (64ULL << 20) : 0;
}

/* The sink's rule in the stubs' terms. */
static void
ring_rule_from(const struct ht_unwind_rule *sr, struct ring_rule *ru)
{
	static const uint8_t how[] = {
		[HT_LOC_UNDEF] = RING_LOC_UNDEF,
		[HT_LOC_SAME] = RING_LOC_SAME,
		[HT_LOC_CFA] = RING_LOC_CFA,
		[HT_LOC_AT_CFA] = RING_LOC_AT_CFA,
	};
	*ru = (struct ring_rule){
		.kind = sr->fp ? RING_RULE_FP : RING_RULE_CFI,
		.cfa_reg = sr->cfa_rbp ? RING_REG_RBP : RING_REG_RSP,
		.cfa_off = sr->cfa_off,
		.rsp = how[sr->rsp.how],
		.rsp_off = sr->rsp.off,
		.rbp = how[sr->rbp.how],
		.rbp_off = sr->rbp.off,
		.ra = how[sr->ra.how],
		.ra_off = sr->ra.off,
	};
}

/* Publish the rule of lookup pc PC (RING_RULE_COPY when the stubs cannot
   follow it). Returns false when there is none to publish. */
static bool
rule_publish(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	     uint64_t pc)
{
	struct ht_unwind_rule sr;
	struct ring_rule ru = { .kind = RING_RULE_COPY };
	int err = t->sink->stub_rule(t->sink->ctx, p->pid, pc, &sr);
	if (err == 0 && sr.rsp.how <= HT_LOC_AT_CFA &&
	    sr.rbp.how <= HT_LOC_AT_CFA && sr.ra.how <= HT_LOC_AT_CFA)
		ring_rule_from(&sr, &ru);
	else if (err != -ENOTSUP)
		return false;
	err = tracer_ring_rule_set(ip->ring, pc, &ru);
	if (err == -ENOSPC) {
		tracer_ring_rules_reset(ip->ring);
		ip->rules = 0;
		err = tracer_ring_rule_set(ip->ring, pc, &ru);
	}
	if (err)
		return false;
	ip->rules++;
	return true;
}

/* Walk W (a copy of a stack, from lookup pc AT) as the stubs would, and
   publish the rule of every frame on the way that has none. */
static void
publish_along(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	      uint64_t at, struct ring_walk *w)
{
	struct ring_header *h = tracer_ring_header(ip->ring);
	for (uint32_t k = 0; at && k < h->walk_max; k++) {
		const struct ring_rule *ru = ring_rule_lookup(h, at);
		if (!ru && rule_publish(t, p, ip, at))
			ru = ring_rule_lookup(h, at);
		if (!ru || ru->kind == RING_RULE_COPY ||
		    ring_walk_step(w, ru) <= 0 || w->ra == 0)
			break;
		at = w->ra - 1;
	}
}

/* A stack the stub copied because a frame's rule was missing: walk it
   as the stubs would, over the copy, and publish the rule of every frame
   on the way that has none, so that the next stack through these frames
   is walked in the target (the stub never waits for a rule). */
static void
rules_from_copy(struct tracer *t, struct tproc *p, struct inline_proc *ip,
		const struct tracer_capture *cap)
{
	uint64_t rsp = cap->regs.rsp;
	struct ring_walk w = {
		.rsp = rsp,
		.rbp = cap->regs.rbp,
		.ra = cap->regs.rip,
		.known = RING_WALK_RSP | RING_WALK_RBP | RING_WALK_RA,
		.lo = rsp,
		.hi = rsp + cap->len,
		.bias = (uint64_t)(uintptr_t)cap->stack - rsp,
	};
	uint64_t at = cap->regs.rip; /* the innermost frame: at its pc */
	publish_along(t, p, ip, at, &w);
}

/* Give TC, whose thread pointer is TCB and stack pointer SP, its entry,
   its stack found in MAPS (NULL: read now). */
static void
thread_entry_set(struct inline_proc *ip, struct tracee *tc, uint64_t tcb,
		 uint64_t sp, const struct maps_snap *maps)
{
	struct tproc *p = tc->proc;
	struct maps_snap own = { 0 };
	if (!maps)
		maps_snap_load(p->pid, &own);
	uint64_t lo, hi;
	stack_bounds(maps ? maps : &own, sp, &lo, &hi);
	maps_snap_free(&own);
	int err = tracer_ring_thread_set(ip->ring, tcb, (uint32_t)tc->tid, lo,
					 hi);
	if (err) {
		ht_debug("thread %d: no thread-table entry (%s): its calls "
			 "go unrecorded", (int)tc->tid, ht_strerror(err));
		return;
	}
	/* A vfork child's entry is its parent thread's (the same thread
	   pointer), which keeps it when the child leaves. */
	if (ip->owner == p)
		tc->tcb = tcb;
}

/* TC's entry from its registers (it is stopped), its stack found in MAPS
   (NULL: read now). */
static void
thread_known(struct tracee *tc, const struct maps_snap *maps)
{
	struct inline_proc *ip = tc->proc ? tc->proc->inl : NULL;
	struct user_regs_struct regs;
	/* Before its thread pointer is set up (exec), its first NOTIFY
	   brings it. */
	if (ip && ptrace(PTRACE_GETREGS, tc->tid, NULL, &regs) == 0 &&
	    regs.fs_base)
		thread_entry_set(ip, tc, regs.fs_base, regs.rsp, maps);
}

void
inline_thread_known(struct tracer *t, struct tracee *tc)
{
	(void)t;
	thread_known(tc, NULL);
}

void
inline_threads_known(struct tracer *t, struct tproc *p)
{
	if (!p->inl)
		return;
	/* One reading of the mappings for all: a process of a thousand
	   threads has two thousand mappings, and reading them per thread
	   was most of an attach's pause. */
	struct maps_snap maps;
	maps_snap_load(p->pid, &maps);
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->tracees, &pos, &key, &val)) {
		struct tracee *tc = (struct tracee *)(uintptr_t)val;
		if (tc->proc == p && !tc->first_stop_pending)
			thread_known(tc, &maps);
	}
	maps_snap_free(&maps);
}

/* The rule of lookup pc AT, asked for by a stub whose walk stands at W
   on thread TID's stack: publish it and, since the frames above are
   usually as new, walk on over a copy of that stack (the thread waits in
   its stub: the stack above the frame does not move) by the rules the
   stubs follow, publishing those met on the way, so that a new stack
   costs one question rather than one per new frame. */
static void
rule_lookahead(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	       pid_t tid, uint64_t at, struct ring_walk w)
{
	uint64_t len = w.hi > w.lo ? w.hi - w.lo : 0;
	if (len > LOOKAHEAD_STACK)
		len = LOOKAHEAD_STACK;
	uint8_t *copy = ht_xmalloc(LOOKAHEAD_STACK);
	ssize_t n = len ? mem_read(tid, w.lo, copy, len) : 0;
	w.hi = w.lo + (uint64_t)(n > 0 ? n : 0);
	w.bias = (uint64_t)(uintptr_t)copy - w.lo;
	publish_along(t, p, ip, at, &w);
	free(copy);
}

/* The RULE question for lookup pc AT (a return address minus one) was
   answered: publish the rules of the calls in the code that follows that
   return address too. A question holds its thread for a round trip of
   tens of microseconds, and most questions of a program with many call
   sites are for a call a little after one asked about before, in the
   same function (node: 3 500 questions, about 2 000 with this; cc1:
   3 600, 2 400). The calls are guessed from the code's bytes: a rule for an
   address that is no return address is never looked up, so a wrong
   guess costs a table entry; none are added once the table is half as
   full as it may get, so that they never bring its emptying (and the
   questions that follow) much closer. */
static void
rule_prefetch(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	      pid_t tid, uint64_t at)
{
	struct ring_header *h = tracer_ring_header(ip->ring);
	if (ip->rules >= h->rule_cap / PREFETCH_FILL)
		return;
	/* Code the stubs cannot walk through (a JIT's, the stub page of an
	   earlier heaptrace): no module, each of whose pcs would cost the
	   sink a re-reading of the process's mappings. */
	const struct ring_rule *asked = ring_rule_lookup(h, at);
	if (!asked || asked->kind == RING_RULE_COPY)
		return;
	uint8_t code[PREFETCH_CODE];
	ssize_t n = mem_read(tid, at + 1, code, sizeof(code));
	if (n <= 0)
		return;
	uint64_t ret[PREFETCH_CODE / 2];
	size_t k = arch_guess_call_returns(code, (size_t)n, at + 1, ret,
					   sizeof(ret) / sizeof(*ret));
	for (size_t i = 0; i < k; i++) {
		uint64_t pc = ret[i] - 1;
		if (!ring_rule_lookup(h, pc))
			rule_publish(t, p, ip, pc);
	}
}

/* Publish the rules the sink knows without compiling (an earlier run
   left them in the symbol cache), when the table holds none yet (a new
   ring, or one emptied because the modules changed): a program run again
   asks no question for the frames it met before. Up to the share of the
   table rule_prefetch keeps to, leaving room for new frames. Not when
   sampling: the stubs then walk a few hundred stacks where the preload
   published up to thousands of rules (git log -p at 512K: 700-2,900,
   against about 30 questions without them), each written into a page of
   the table that had to be allocated, 1.5-2 ms of a short run's CPU. */
static void
rules_preload(struct tracer *t, struct tproc *p, struct inline_proc *ip)
{
	if (!t->sink->known_rule_pcs || !t->sink->stub_rule ||
	    !p->profiling || ip->rules || t->opt->sampling_interval)
		return;
	struct ring_header *h = tracer_ring_header(ip->ring);
	uint64_t *pcs;
	size_t n = t->sink->known_rule_pcs(t->sink->ctx, p->pid, &pcs);
	for (size_t i = 0; i < n && ip->rules < h->rule_cap / PREFETCH_FILL;
	     i++)
		if (!ring_rule_lookup(h, pcs[i]))
			rule_publish(t, p, ip, pcs[i]);
	free(pcs);
}

/* A RULE question (ring.h): the rule, and those above it. Before the
   profile starts the records are dropped anyway: no answer but "go on"
   (the stub then copies). */
static void
on_rule(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	const struct tracer_ring_item *it)
{
	const struct ring_record *rec = it->rec;
	if (t->sink->stub_rule && p->profiling && it->npcs == 3) {
		struct ring_walk w = {
			.rsp = rec->args[2],
			.rbp = rec->result,
			.ra = it->pcs[0],
			.known = (uint32_t)it->pcs[1] &
				 (RING_WALK_RSP | RING_WALK_RBP | RING_WALK_RA),
			.lo = rec->args[2],
			.hi = it->pcs[2],
		};
		rule_lookahead(t, p, ip, (pid_t)rec->tid, rec->args[1], w);
	}
	tracer_ring_notify_ack(ip->ring, rec->args[0]);
	/* After the answer: the thread need not wait for these. */
	if (t->sink->stub_rule && p->profiling && it->npcs == 3)
		rule_prefetch(t, p, ip, (pid_t)rec->tid, rec->args[1]);
}

/* ---- NOTIFY: ld.so changed the link map ---- */

/* REC's thread of P waits in its stub for an answer: to a NOTIFY (it
   called _dl_debug_state: read the link map as a debugger would at its
   breakpoint, so that probes go into new objects and the stubs' rules are
   forgotten) or to a THREAD request (it has no entry). Either way the
   thread gets its entry if it has none and its thread pointer is set up
   (ld.so's first calls run before). Every record before REC is
   delivered. */
static void
on_notify(struct tracer *t, struct tproc *p, struct inline_proc *ip,
	  const struct ring_record *rec)
{
	uint64_t pos = rec->args[0];
	if (rec->kind == RING_REC_NOTIFY) {
		t->inline_client->debug_state(t, p, (pid_t)rec->tid, false);
		rules_preload(t, p, ip);
	}
	struct tracee *tc = tracee_get(t, (pid_t)rec->tid);
	/* Insert or update: an exec leaves TC's old thread pointer behind. */
	if (tc && tc->proc == p && rec->args[1])
		thread_entry_set(ip, tc, rec->args[1], rec->args[2], NULL);
	tracer_ring_notify_ack(ip->ring, pos);
}

/* ---- Draining ---- */

struct drain_ctx {
	struct tracer *t;
	struct inline_proc *ip;
};

/* The process whose call thread TID recorded in IP's ring: a vfork
   child's, whose records carry its tid (inline_vfork_child), else the
   ring's own. NULL when that process is gone. */
static struct tproc *
record_proc(const struct inline_proc *ip, uint32_t tid)
{
	for (size_t i = 0; i < ip->n_vforks; i++)
		if (ip->vforks[i].tid == tid)
			return ip->vforks[i].proc;
	return ip->owner;
}

/* The session's clock (tracer_clock) at the call IT records: its stamp
   when the clock is milliseconds and the ring stamps, else the drain's
   time. */
static uint64_t
record_clock(struct tracer *t, const struct tproc *p,
	     const struct tracer_ring_item *it)
{
	if (t->opt->time_unit != HT_TIME_MS || !it->time_ns)
		return tracer_clock(t, p);
	/* Whole milliseconds since the start, as tracer_now_ms counts. */
	uint64_t ms = it->time_ns / 1000000;
	return ms > t->t0_ms ? ms - t->t0_ms : 0;
}

/* REC's questions: a stub waits for the answer to a NOTIFY, a THREAD or
   a RULE; a stack copied for want of a rule teaches the stubs its
   frames' rules. */
static void
answer(struct tracer *t, struct tproc *p, struct inline_proc *ip,
       const struct tracer_ring_item *it)
{
	switch (it->rec->kind) {
	case RING_REC_NOTIFY:
	case RING_REC_THREAD:
		on_notify(t, p, ip, it->rec);
		break;
	case RING_REC_RULE:
		on_rule(t, p, ip, it);
		break;
	default:
		if (it->copied == RING_COPY_RULE && t->sink->stub_rule &&
		    p->profiling)
			rules_from_copy(t, p, ip, &it->cap);
		break;
	}
}

/* The innermost frame of REC's stack, whose function's entry is ENTRY:
   a page call's is its syscall instruction, where a syscall stop (the
   seccomp path, and Massif) sees it. */
static uint64_t
innermost(const struct inline_proc *ip, const struct ring_record *rec,
	  uint64_t entry)
{
	if (rec->kind != RING_REC_PAGE)
		return entry;
	for (unsigned i = 0; i < ip->n_patches; i++)
		if (ip->patches[i].addr == entry && ip->patches[i].syscall_pc)
			return ip->patches[i].syscall_pc;
	return entry;
}

/* The event IT reports for P into *EV, stack aside; false for none. */
static bool
record_event(struct tracer *t, struct tproc *p,
	     const struct tracer_ring_item *it, struct ht_event *ev)
{
	*ev = it->ev;
	if (it->rec->kind == RING_REC_PAGE)
		return t->inline_client->describe_page(p, it->rec->fn,
						       it->rec->args,
						       it->rec->result, ev);
	return it->has_event;
}

/* Have IP's stubs walk the Python frames of P's interpreter once the
   loader found it (p->python: its NOTIFY was just answered, or an
   earlier one): once per ring. */
static void
python_publish(struct inline_proc *ip, const struct tproc *p)
{
	if (ip->python_published || !p->python)
		return;
	tracer_ring_python_set(ip->ring, py_interp_params(p->python));
	ip->python_published = true;
}

/* EV's NPCS lookup pcs with IT's Python words spliced in place of the
   interpreter's evaluation frames (tracer/python/python.h), at most
   T->max_pcs, back into EV. */
static void
python_splice(struct tracer *t, struct inline_proc *ip, struct tproc *p,
	      const struct tracer_ring_item *it, struct ht_event *ev)
{
	if (!ip->py_memo)
		ip->py_memo = py_memo_new(t->max_pcs);
	unsigned n;
	const uint64_t *known = py_memo_get(ip->py_memo, ev->pcs, ev->npcs,
					    it->pywords, it->npywords, &n);
	if (known) {
		memcpy(t->pcs_scratch, known, n * sizeof(*known));
	} else {
		uint64_t out[t->max_pcs];
		n = py_splice(p->python, ev->pcs, ev->npcs, it->pywords,
			      it->npywords, out, t->max_pcs);
		py_memo_put(ip->py_memo, ev->pcs, ev->npcs, it->pywords,
			    it->npywords, out, n);
		memcpy(t->pcs_scratch, out, n * sizeof(*out));
	}
	ev->pcs = t->pcs_scratch;
	ev->npcs = n;
}

/* A stack the stub could not read (rsp off the thread's known stack: a
   sigaltstack handler, a coroutine's stack) unwinds to the allocator
   alone, which the profile would ignore, and the block's bytes with it:
   a frame saying so stands for its callers (docs/inline-backend.md,
   "Copy"). Returns the new count of PCS (room MAX). */
static unsigned
off_stack_frame(uint64_t *pcs, unsigned n, unsigned max)
{
	if (n > 1 || n >= max)
		return n;
	if (n == 0)
		return 0;
	pcs[n++] = synth_frame_intern("stack not walked",
				      "rsp off the thread's stack", 0);
	return n;
}

static int
deliver(void *arg, const struct tracer_ring_item *it)
{
	struct drain_ctx *d = arg;
	struct tracer *t = d->t;
	struct tproc *p = record_proc(d->ip, it->rec->tid);
	if (!p)
		return 0;
	answer(t, p, d->ip, it);
	if (it->rec->kind == RING_REC_NOTIFY)
		python_publish(d->ip, p);
	struct ht_event ev;
	if (!record_event(t, p, it, &ev) || !p->profiling)
		return 0;
	ev.time = record_clock(t, p, it);
	if (t->opt->stacks) {
		struct tracee *tc = tracee_get(t, (pid_t)it->rec->tid);
		if (tc)
			stacksample_report(t, tc, it->rec->sp, ev.time);
	}
	if (it->npcs) {
		/* Walked in the target: what UNWIND gives, return addresses
		   minus one as it makes them. */
		unsigned n = it->npcs < t->max_pcs ? it->npcs : t->max_pcs;
		t->pcs_scratch[0] = innermost(d->ip, it->rec, it->pcs[0]);
		for (unsigned i = 1; i < n; i++)
			t->pcs_scratch[i] = it->pcs[i] - 1;
		ev.npcs = n;
		ev.pcs = t->pcs_scratch;
	} else if (it->copied) {
		/* The thread has run on: only the copied bytes are its stack
		   as it was at the call. */
		struct tracer_capture cap = it->cap;
		cap.running = true;
		ev.npcs = t->sink->unwind(t->sink->ctx, p->pid, &cap,
					  t->pcs_scratch, t->max_pcs);
		ev.pcs = t->pcs_scratch;
		if (ev.npcs)
			t->pcs_scratch[0] = innermost(d->ip, it->rec,
						      t->pcs_scratch[0]);
		if (it->copied == RING_COPY_NO_STACK)
			ev.npcs = off_stack_frame(t->pcs_scratch, ev.npcs,
						  t->max_pcs);
	}
	if (it->npywords && p->python && (it->npcs || it->copied))
		python_splice(t, d->ip, p, it, &ev);
	t->sink->event(t->sink->ctx, p->pid, &ev);
	return 0;
}

/* Forget the vfork children that left IP's memory once none of their
   records can be in the ring any more. */
static void
routes_prune(struct inline_proc *ip)
{
	uint64_t tail = tracer_ring_header(ip->ring)->tail;
	size_t kept = 0;
	for (size_t i = 0; i < ip->n_vforks; i++) {
		const struct vfork_route *r = &ip->vforks[i];
		if (!r->proc && (int64_t)(tail - r->gone_head) >= 0)
			continue;
		ip->vforks[kept++] = *r;
	}
	ip->n_vforks = kept;
}

long
inline_drain(struct tracer *t, struct tproc *p, uint64_t wait_ns)
{
	struct inline_proc *ip = p->inl;
	if (!ip || ip->broken)
		return 0;
	struct drain_ctx d = { .t = t, .ip = ip };
	if (ip->owner)
		python_publish(ip, ip->owner);
	if (ip->py_memo)
		py_memo_clear(ip->py_memo);
	long n = tracer_ring_drain(ip->ring, wait_ns, deliver, &d);
	if (ip->n_vforks)
		routes_prune(ip);
	if (n < 0) {
		ip->broken = true;
		ht_error("process %d: the event ring is corrupted; events "
			 "from now on are lost", (int)p->pid);
	}
	return n;
}

long
inline_drain_all(struct tracer *t)
{
	long total = 0;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->procs, &pos, &key, &val)) {
		long n = inline_drain(t, (struct tproc *)(uintptr_t)val, 0);
		if (n > 0)
			total += n;
	}
	return total;
}

uint64_t
inline_pending_all(struct tracer *t)
{
	uint64_t total = 0;
	size_t pos = 0;
	uint64_t key, val;
	while (u64map_next(&t->procs, &pos, &key, &val)) {
		const struct tproc *p = (const struct tproc *)(uintptr_t)val;
		/* A vfork child shares its parent's ring: counted once. */
		if (p->inl && !p->inl->broken && p->inl->owner == p)
			total += tracer_ring_pending(p->inl->ring);
	}
	return total;
}

void
inline_thread_gone(struct tracer *t, struct tracee *tc)
{
	struct tproc *p = tc->proc;
	if (!p || !p->inl || !tc->tcb)
		return;
	inline_drain(t, p, RECORD_WAIT_NS);
	tracer_ring_thread_remove(p->inl->ring, tc->tcb);
}

bool
inline_ring_extent(const struct tproc *p, uint64_t *lo, uint64_t *hi)
{
	if (!p->inl || !p->inl->ring_addr)
		return false;
	struct tracer_ring_layout l;
	tracer_ring_layout(p->inl->ring, &l);
	*lo = p->inl->ring_addr;
	*hi = p->inl->ring_addr + l.map_len;
	return true;
}

uint32_t *
inline_doorbell(struct tproc *p)
{
	/* A vfork child shares its parent's ring: counted once, there. */
	if (!p->inl || p->inl->owner != p)
		return NULL;
	return &tracer_ring_header(p->inl->ring)->doorbell;
}

void
inline_exit_frees(struct tproc *p)
{
	if (p->inl)
		tracer_ring_freeres_set(p->inl->ring, p->freeres[0],
					p->freeres[1]);
}

void
inline_modules_changed(struct tproc *p)
{
	if (p->inl) {
		tracer_ring_rules_reset(p->inl->ring);
		p->inl->rules = 0;
	}
}

void
inline_report(struct tproc *p)
{
	/* A vfork child's records are counted with its parent's. */
	if (!p->inl || !p->inl->n_patches || p->inl->owner != p)
		return;
	static bool told_drain_time; /* a property of the machine */
	if (p->inl->drain_time && !told_drain_time) {
		told_drain_time = true;
		ht_error("stats: inline records are timed when drained, not "
			 "when made: this CPU's TSC is not both constant_tsc "
			 "and nonstop_tsc (/proc/cpuinfo)");
	}
	struct tracer_ring_stats st;
	tracer_ring_stats(p->inl->ring, &st);
	const struct ring_stats *hs = &tracer_ring_header(p->inl->ring)->stats;
	uint64_t copied = 0;
	for (int i = 0; i < RING_COPY_N; i++)
		copied += st.copied[i];
	ht_error("stats: process %d: inline ring: %llu records, %llu bytes; "
		 "%llu stacks walked in the target, %llu copied (%llu with "
		 "walking off, %llu off the thread's stack, %llu at a frame "
		 "the stub cannot follow, %llu for a read out of bounds, %llu "
		 "across a rule-table reset); %llu rules published (%llu "
		 "misses, %llu resets); %llu calls unrecorded (thread "
		 "unknown), %llu waits for room, %llu notify time-outs", (int)p->pid,
		 (unsigned long long)st.records, (unsigned long long)st.bytes,
		 (unsigned long long)st.walked, (unsigned long long)copied,
		 (unsigned long long)st.copied[RING_COPY_OFF],
		 (unsigned long long)st.copied[RING_COPY_NO_STACK],
		 (unsigned long long)st.copied[RING_COPY_RULE],
		 (unsigned long long)st.copied[RING_COPY_BOUNDS],
		 (unsigned long long)st.copied[RING_COPY_RESET],
		 (unsigned long long)st.rules,
		 (unsigned long long)hs->rule_misses,
		 (unsigned long long)st.resets,
		 (unsigned long long)hs->miss_pass,
		 (unsigned long long)hs->full_waits,
		 (unsigned long long)hs->notify_timeouts);
	ht_error("stats: process %d: walk memo: %llu walks, %llu reused a "
		 "suffix (%llu frames), %llu differed from the full walk; "
		 "%llu frames in all",
		 (int)p->pid, (unsigned long long)st.memo_walks,
		 (unsigned long long)st.memo_hits,
		 (unsigned long long)st.memo_reused,
		 (unsigned long long)st.memo_differed,
		 (unsigned long long)st.memo_walked);
	if (tracer_ring_header(p->inl->ring)->sample_interval)
		ht_error("stats: process %d: sampling: %llu allocations "
			 "passed over in the target, %llu records; %llu "
			 "sampled blocks the address set (%llu buckets) had "
			 "no room for%s",
			 (int)p->pid, (unsigned long long)st.sample_skipped,
			 (unsigned long long)st.records,
			 (unsigned long long)hs->set_full,
			 1ULL << (64 - tracer_ring_header(p->inl->ring)
						->set_shift),
			 hs->set_full ? " (every free recorded since)" : "");
}

struct sample_bucket *
inline_sample_set(struct tproc *p, uint32_t *shift)
{
	if (!p->inl || !p->inl->ring)
		return NULL;
	return tracer_ring_sample_set(p->inl->ring, shift);
}

uint32_t *
inline_sample_full(struct tproc *p)
{
	if (!p->inl || !p->inl->ring)
		return NULL;
	return &tracer_ring_header(p->inl->ring)->flags;
}

/* P, a vfork child running in IP's memory, is gone or has exec'd: its
   records still in the ring are dropped, then forgotten. */
static void
route_end(struct inline_proc *ip, const struct tproc *p)
{
	for (size_t i = 0; i < ip->n_vforks; i++) {
		if (ip->vforks[i].proc != p)
			continue;
		ip->vforks[i].proc = NULL;
		ip->vforks[i].gone_head = __atomic_load_n(
			&tracer_ring_header(ip->ring)->head, __ATOMIC_ACQUIRE);
	}
}

void
inline_free(struct tproc *p)
{
	struct inline_proc *ip = p->inl;
	if (!ip)
		return;
	p->inl = NULL;
	if (ip->owner == p)
		ip->owner = NULL; /* its vfork children may still run */
	else
		route_end(ip, p);
	if (--ip->refs)
		return;
	tracer_ring_free(ip->ring);
	py_memo_free(ip->py_memo);
	free(ip->vforks);
	free(ip);
}

/* ---- fork ---- */

/* The fork child shares its parent's ring mapping (MAP_SHARED is inherited)
   until we map a ring of its own over it, at the same address, so that the
   blob's ring pointer stays right. The child is held at its first stop,
   past its fork's syscall exit: syscalls are injected from there. */
int
inline_fork_child(struct tracer *t, struct tproc *parent, struct tproc *child,
		  pid_t tid)
{
	struct inline_proc *pp = parent->inl;
	if (!pp)
		return 0;
	struct inline_proc *ip = ht_xcalloc(1, sizeof(*ip));
	*ip = *pp;
	ip->ring = NULL;
	ip->broken = false;
	ip->python_published = false; /* its ring is new */
	ip->py_memo = NULL;
	ip->vforks = NULL; /* the parent's vfork children are not its own */
	ip->n_vforks = ip->cap_vforks = 0;
	uint64_t target_fd;
	int err = ring_new_in_target(t, child, tid, ip, &target_fd);
	if (err) {
		free(ip);
		return err;
	}
	for (unsigned i = 0; !err && i < ip->n_patches; i++) {
		const struct inline_patch *pa = &ip->patches[i];
		err = pa->hook
			? tracer_ring_hook_set(ip->ring, i,
					       (enum ring_class)pa->hook,
					       pa->hook_fn, pa->addr,
					       pa->orig_code, pa->obj_lo,
					       pa->obj_hi)
			: tracer_ring_fn_set(ip->ring, i, pa->fn, pa->addr,
					     pa->orig_code, pa->obj_lo,
					     pa->obj_hi);
	}
	if (!err) {
		const struct ring_header *ph = tracer_ring_header(pp->ring);
		tracer_ring_freeres_set(ip->ring, ph->freeres[0],
					ph->freeres[1]);
		/* The child's blocks are its parent's, sampled or not. */
		tracer_ring_sample_set_copy(ip->ring, pp->ring);
	}
	if (err)
		close_in_target(child, tid, target_fd);
	else
		err = map_ring_at(child, tid, ip, pp->ring_addr, target_fd);
	if (err) {
		tracer_ring_free(ip->ring);
		free(ip);
		return err;
	}
	child->inl = ip;
	return 0;
}

int
inline_fork_child_unpatch(const struct tproc *parent, struct tproc *child,
			  pid_t tid)
{
	const struct inline_proc *pp = parent->inl;
	int err = 0;
	for (unsigned i = 0; pp && !err && i < pp->n_patches; i++)
		err = mem_write_code(child, tid, pp->patches[i].addr,
				     pp->patches[i].orig,
				     pp->patches[i].covered);
	return err;
}

/* ---- vfork ---- */

/* The thread pointer of stopped thread TID (fs_base: the stubs' key), or
   0. */
static uint64_t
thread_pointer(pid_t tid)
{
	struct user_regs_struct regs;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &regs) < 0)
		return 0;
	return regs.fs_base;
}

void
inline_vfork_child(struct tracee *tc, struct tproc *child)
{
	struct inline_proc *ip = tc->proc ? tc->proc->inl : NULL;
	if (!ip || child->inl)
		return;
	/* The child runs on TC's thread pointer, so its stubs find TC's
	   entry: its tid there tags the child's records until TC runs
	   again. Without an entry yet, the child's first call makes one,
	   with its own tid. */
	tracer_ring_thread_retag(ip->ring, thread_pointer(tc->tid),
				 (uint32_t)child->pid);
	ht_xgrow((void **)&ip->vforks, &ip->cap_vforks, ip->n_vforks + 1,
		 sizeof(*ip->vforks));
	ip->vforks[ip->n_vforks++] = (struct vfork_route){
		.tid = (uint32_t)child->pid,
		.proc = child,
	};
	/* Its stubs' traps are served from this ring, like TC's. */
	child->inl = ip;
	ip->refs++;
}

void
inline_vfork_done(struct tracee *tc)
{
	struct inline_proc *ip = tc->proc ? tc->proc->inl : NULL;
	if (!ip)
		return;
	/* The child has left the memory: the entry is TC's again (records
	   already made keep the child's tid). */
	uint64_t tcb = thread_pointer(tc->tid);
	if (tracer_ring_thread_retag(ip->ring, tcb, (uint32_t)tc->tid) == 0 &&
	    ip->owner == tc->proc)
		tc->tcb = tcb;
}
