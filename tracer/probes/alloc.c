/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The allocator probes' stops. At an allocation's entry the stack is
   captured and unwound (the caller's frames are intact there), the return
   address is swapped for a trampoline, and the call is remembered; at the
   trampoline the result is read and one event reported. Frees need only
   their entry stop.

   Calls made from inside a probed allocator (realloc(NULL) tail-jumping to
   malloc, memalign reaching malloc, libstdc++'s operator new calling
   malloc...) are internal: the outermost call is the one reported, with its
   own size and stack, as Massif reports it. A call is internal when another
   call is pending on the same thread and the new one returns either into
   the trampoline (a tail call) or into the pending call's object. A signal
   handler allocating while malloc is pending returns into user code, so it
   counts as a call of its own.

   An allocator's own operator delete (jemalloc's) may end in a tail call
   to free: both would report the block. So an operator delete, reported
   at its entry as any free, is kept pending until it returns, for what it
   calls to be internal; free itself is not (one stop per call). Only
   allocator-provided operators are probed (loader.c). CPython's
   PyObject_Free and PyMem_Free are held the same way (their probes'
   HOLD): a block over pymalloc's 512 bytes is given back with free.

   CPython's PyObject_Malloc and friends are probed as the C functions
   they mirror (loader.c): a block pymalloc cannot serve comes from
   malloc, called inside PyObject_Malloc from libpython (or from the
   python executable that links it statically), so it is internal. */
#include "tracer/probes/probes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "tracer/measure/measure.h"
#include "tracer/python/python.h"
#include "tracer/target/target.h"

/* Bytes of stack copied at each allocation; the unwinder reads the rest
   from the stopped thread itself. */
#define STACK_CAPTURE (16 * 1024)

static void
pending_free(struct pending_call *pc)
{
	free(pc->pcs);
	pc->pcs = NULL;
}

void
alloc_pending_clear(struct tracee *tc)
{
	for (size_t i = 0; i < tc->n_pending; i++)
		pending_free(&tc->pending[i]);
	tc->n_pending = 0;
}

/* Records whose frame lies below SP were abandoned (longjmp, exception). */
static void
drop_stale(struct tracee *tc, uint64_t sp)
{
	while (tc->n_pending && tc->pending[tc->n_pending - 1].slot < sp) {
		pending_free(&tc->pending[tc->n_pending - 1]);
		tc->n_pending--;
	}
}

static bool
is_internal(const struct tracee *tc, uint64_t ret)
{
	if (!tc->n_pending)
		return false;
	const struct pending_call *top = &tc->pending[tc->n_pending - 1];
	return ret == tc->proc->tramp || (ret >= top->obj_lo && ret < top->obj_hi);
}

/* Report EV, made by TC with its stack pointer at SP at the call's
   entry (for --stacks=yes: the stack as it was when the call was made). */
static void
emit(struct tracer *t, struct tracee *tc, struct ht_event *ev, uint64_t sp)
{
	if (!tc->proc->profiling)
		return;
	ev->tid = (uint32_t)tc->tid;
	ev->time = tracer_clock(t, tc->proc);
	stacksample_report(t, tc, sp, ev->time);
	t->sink->event(t->sink->ctx, tc->proc->pid, ev);
}

/* Calls that report at their entry, and are only kept pending so that
   the calls they make are internal. */
static bool
reported_at_entry(enum ht_alloc_fn fn)
{
	return fn == HT_FN_DELETE || fn == HT_FN_DELETE_ARRAY;
}

/* Swap the return address at REGS->rsp for the trampoline and remember
   PC (which takes ownership of its stack) until the call returns. */
static int
push_pending(struct tracee *tc, struct user_regs_struct *regs,
	     struct pending_call *pc)
{
	int err = mem_write(tc->tid, regs->rsp, &tc->proc->tramp, 8);
	if (err) {
		pending_free(pc);
		return err;
	}
	ht_xgrow((void **)&tc->pending, &tc->cap_pending, tc->n_pending + 1,
		 sizeof(*tc->pending));
	tc->pending[tc->n_pending++] = *pc;
	ht_debug("thread %d: %s entry, returns to 0x%llx (slot 0x%llx)",
		 (int)tc->tid, ht_alloc_fn_name(pc->fn),
		 (unsigned long long)pc->orig, (unsigned long long)pc->slot);
	return 0;
}

static int
free_entry(struct tracer *t, struct tracee *tc, const struct probe *pr,
	   struct user_regs_struct *regs)
{
	uint64_t ptr = arch_arg(regs, 0);
	if (!ptr)
		return 0;
	bool hold = (reported_at_entry(pr->fn) || pr->hold) && tc->proc->tramp;
	uint64_t ret = 0;
	if ((tc->n_pending || hold) &&
	    mem_read(tc->tid, regs->rsp, &ret, 8) != 8)
		return -ESRCH;
	if (hold)
		drop_stale(tc, regs->rsp);
	if (is_internal(tc, ret))
		return 0;
	struct ht_event ev = {
		.kind = HT_EV_FREE, .fn = pr->fn, .addr = ptr,
	};
	/* Sampling: only a sampled block's free is reported. */
	if (!t->opt->sampling_interval || sampled_forget(t, tc->proc, ptr))
		emit(t, tc, &ev, regs->rsp);
	if (!hold)
		return 0;
	struct pending_call pc = {
		.slot = regs->rsp, .orig = ret, .fn = pr->fn, .at_entry = true,
		.args = { ptr }, .obj_lo = pr->obj_lo, .obj_hi = pr->obj_hi,
	};
	return push_pending(tc, regs, &pc);
}

/* The sampling decision for the call PC at its entry: its SAMPLE byte,
   and for a realloc whether its old block was sampled (forgotten now,
   as a free's). True when there is anything to report at its return. */
static bool
sample_entry(struct tracer *t, struct tracee *tc, struct pending_call *pc)
{
	uint64_t size = sampled_call_size(pc->fn, pc->args);
	bool realloc = pc->fn == HT_FN_REALLOC ||
		       pc->fn == HT_FN_REALLOCARRAY;
	pc->sampling = true;
	pc->old_sampled = realloc && pc->args[0] &&
			  sampled_forget(t, tc->proc, pc->args[0]);
	pc->sample = realloc && !size ? 0 : sampled_take(t, tc, size);
	return pc->sample || pc->old_sampled;
}

/* EV, described from the sampled call PC: what the engine is to see so
   that its blocks stay the sampled ones (as the stub's sampled_realloc
   reports them). False when nothing is to be reported. */
static bool
sample_return(const struct tracer *t, const struct pending_call *pc,
	      struct ht_event *ev)
{
	if (ev->kind != HT_EV_REALLOC) {
		if (!pc->sample)
			return false;
		ev->weight = sampled_weight(t, pc->sample, ev->size);
		return true;
	}
	if (!ev->addr) /* failed, or realloc(p, 0) freeing the block */
		return pc->old_sampled;
	if (!pc->sample) {
		/* Only the old block was sampled: it is freed. */
		ev->addr = 0;
		ev->size = 0;
		return pc->old_sampled;
	}
	if (!pc->old_sampled)
		ev->old_addr = 0; /* a new block */
	ev->weight = sampled_weight(t, pc->sample, ev->size);
	return true;
}

/* The K native pcs of T's scratch with the Python frames of TC's thread
   in place of its evaluation frames, into *OUT (malloc'd): returns how
   many. Named now, while the code objects the words name are alive (the
   thread is stopped in the allocator). */
static unsigned
with_python_frames(struct tracer *t, struct tracee *tc,
		   const struct user_regs_struct *regs, unsigned k,
		   uint64_t **out)
{
	uint64_t words[PY_MAX_FRAMES];
	unsigned nw = py_walk_remote(tc->proc->python, tc->tid, regs->fs_base,
				     words, PY_MAX_FRAMES);
	*out = ht_xmalloc(t->max_pcs * sizeof(**out));
	return py_splice(tc->proc->python, t->pcs_scratch, k, words, nw,
			 *out, t->max_pcs);
}

int
alloc_entry(struct tracer *t, struct tracee *tc, const struct probe *pr,
	    struct user_regs_struct *regs)
{
	if (pr->role == PROBE_FREE)
		return free_entry(t, tc, pr, regs);

	static uint8_t stack[STACK_CAPTURE];
	ssize_t n = mem_read(tc->tid, regs->rsp, stack, sizeof(stack));
	if (n < 8)
		return n < 0 ? (int)n : -EFAULT;
	uint64_t ret;
	memcpy(&ret, stack, 8);
	drop_stale(tc, regs->rsp);
	if (is_internal(tc, ret) || !tc->proc->tramp)
		return 0;

	struct pending_call pc = {
		.slot = regs->rsp, .orig = ret, .fn = pr->fn,
		.args = { arch_arg(regs, 0), arch_arg(regs, 1), arch_arg(regs, 2) },
		.obj_lo = pr->obj_lo, .obj_hi = pr->obj_hi,
	};
	/* Decided before the stack is unwound, which an unsampled call
	   never is; it stays pending all the same, so that the calls it
	   makes are internal. */
	if (t->opt->sampling_interval && !sample_entry(t, tc, &pc))
		return push_pending(tc, regs, &pc);
	if (tc->proc->profiling) {
		struct tracer_capture cap = {
			.regs = *regs, .stack = stack, .len = (size_t)n,
			.stack_addr = regs->rsp,
		};
		cap.regs.rip = pr->addr;
		unsigned k = t->sink->unwind(t->sink->ctx, tc->proc->pid, &cap,
					     t->pcs_scratch, t->max_pcs);
		if (tc->proc->python) {
			pc.npcs = with_python_frames(t, tc, regs, k, &pc.pcs);
		} else {
			pc.pcs = ht_xmalloc(k * sizeof(*pc.pcs));
			memcpy(pc.pcs, t->pcs_scratch, k * sizeof(*pc.pcs));
			pc.npcs = k;
		}
	}
	return push_pending(tc, regs, &pc);
}

/* Fill EV from the finished call PC whose return value is RV. Returns
   false when the call failed and there is nothing to report. */
static bool
describe_result(pid_t tid, const struct pending_call *pc, uint64_t rv,
		struct ht_event *ev)
{
	uint64_t result = rv;
	if (pc->fn == HT_FN_POSIX_MEMALIGN) {
		/* It returns 0 or an errno; the block is in *memptr. */
		result = 0;
		if (rv == 0 && mem_read(tid, pc->args[0], &result, 8) != 8)
			result = 0;
	}
	return ht_event_from_call(pc->fn, pc->args, result, ev);
}

/* The sampled call PC returned, described in EV when DESCRIBED: its
   sampled block remembered (a failed realloc's old block again), and
   whether EV is to be reported. */
static bool
sample_settle(struct tracer *t, struct tracee *tc,
	      const struct pending_call *pc, bool described,
	      struct ht_event *ev)
{
	if (!described)
		return false;
	bool failed = ev->kind == HT_EV_REALLOC && !ev->addr && ev->size;
	if (failed && pc->old_sampled)
		sampled_insert(t, tc->proc, ev->old_addr);
	if (pc->sample && ev->addr)
		sampled_insert(t, tc->proc, ev->addr);
	return sample_return(t, pc, ev);
}

int
alloc_return(struct tracer *t, struct tracee *tc,
	     struct user_regs_struct *regs)
{
	/* The ret popped the slot: the record's slot is just below SP. */
	while (tc->n_pending &&
	       tc->pending[tc->n_pending - 1].slot + 8 < regs->rsp) {
		pending_free(&tc->pending[tc->n_pending - 1]);
		tc->n_pending--;
	}
	if (!tc->n_pending || tc->pending[tc->n_pending - 1].slot + 8 != regs->rsp) {
		ht_error("bug: thread %d returned through the trampoline "
			 "with no call pending", (int)tc->tid);
		return -EINVAL;
	}
	struct pending_call pc = tc->pending[--tc->n_pending];
	struct ht_event ev = { .pcs = pc.pcs, .npcs = pc.npcs };
	bool report = !pc.at_entry &&
		      describe_result(tc->tid, &pc, arch_retval(regs), &ev);
	if (pc.sampling && !pc.at_entry)
		report = sample_settle(t, tc, &pc, report, &ev);
	if (report)
		emit(t, tc, &ev, pc.slot);
	regs->rip = pc.orig;
	pending_free(&pc);
	return 0;
}

/* ---- Exit-time frees (--massif-compat=yes) ----
   Valgrind runs libstdc++'s and glibc's freeres functions when the program
   exits, and their frees end Massif's profile. At libc's _exit we make the
   thread call them, in Valgrind's order, before _exit runs. */

static int
call_next_freeres(struct tracee *tc, struct user_regs_struct *regs)
{
	struct tproc *p = tc->proc;
	while (tc->freeres_next < 2 && !p->freeres[tc->freeres_next])
		tc->freeres_next++;
	if (tc->freeres_next >= 2)
		return 1; /* all done */
	*regs = tc->freeres_saved;
	/* Below the red zone, 16-byte aligned before the call pushes. */
	uint64_t sp = ((tc->freeres_saved.rsp - 256) & ~15ULL) - 8;
	int err = mem_write(tc->tid, sp, &p->call_tramp, 8);
	if (err)
		return err;
	regs->rsp = sp;
	regs->rip = p->freeres[tc->freeres_next++];
	regs->orig_rax = (uint64_t)-1;
	return 0;
}

int
alloc_exit_hook(struct tracer *t, struct tracee *tc, const struct probe *pr,
		struct user_regs_struct *regs)
{
	if (!t->opt->massif_compat || tc->in_freeres || !tc->proc->call_tramp ||
	    !tc->proc->profiling)
		return 1;
	tc->in_freeres = true;
	tc->freeres_saved = *regs;
	tc->freeres_saved.rip = pr->addr;
	tc->freeres_next = 0;
	int rc = call_next_freeres(tc, regs);
	if (rc == 1)
		*regs = tc->freeres_saved;
	return rc;
}

int
alloc_call_return(struct tracer *t, struct tracee *tc,
		  struct user_regs_struct *regs)
{
	(void)t;
	if (!tc->in_freeres)
		return -EINVAL;
	int rc = call_next_freeres(tc, regs);
	if (rc == 1)
		*regs = tc->freeres_saved; /* back at _exit's probe */
	return rc;
}
