/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Hooking the allocator: finding the functions the program really binds
   once its libraries are mapped, and hooking each inline (inline/) when it
   can, else with an int3 probe (loader.c); planting those probes
   (probe.c); and handling their stops (alloc.c). Reads and patches the
   target through target/. */
#ifndef HT_TRACER_PROBES_PROBES_H
#define HT_TRACER_PROBES_PROBES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "tracer/proc/proc.h"

/* ---- probe.c: breakpoints ---- */
/* Plant a probe at ADDR in P (TID stopped at a safe stop, for injecting a
   scratch page within reach when needed). Returns 0 or -errno/-HT_E_*. */
int probe_plant(struct tproc *p, pid_t tid, uint64_t addr, enum probe_role role,
		enum ht_alloc_fn fn, uint64_t obj_lo, uint64_t obj_hi);
/* The probe at ADDR, or NULL. */
struct probe *probe_find(struct tproc *p, uint64_t addr);

/* Which of P's int3s a thread trapping with its pc just past AT + 1 hit. */
enum trap_site {
	TRAP_NOT_OURS,
	TRAP_RETURN,      /* the return trampoline (alloc_return) */
	TRAP_CALL_RETURN, /* the call trampoline (exit-time frees) */
	TRAP_PROBE,       /* an allocator entry probe: *PR */
};
/* Classify the int3 at AT; *PR gets the probe for TRAP_PROBE. */
enum trap_site probe_trap_site(struct tproc *p, uint64_t at,
			       struct probe **pr);
/* Ensure P has its return and call trampolines (TID stopped safely). */
int probe_ensure_trampolines(struct tproc *p, pid_t tid);
/* Continue TID past probe PR: set REGS to run the displaced instruction. */
int probe_step_over(struct tproc *p, pid_t tid, const struct probe *pr,
		    struct user_regs_struct *regs);

/* ---- loader.c: finding the allocator once libraries are mapped ---- */
/* After exec of P (TID at the exec stop): hook ld.so, or plant the
   allocator probes right away in a static executable. */
int loader_setup_exec(struct tracer *t, struct tproc *p, pid_t tid);
/* Attached to P (TID at an interrupt stop, every thread stopped): hook
   ld.so for later dlopens and plant the allocator probes of every object
   already loaded, or of a static executable. */
int loader_setup_attach(struct tracer *t, struct tproc *p, pid_t tid);
/* ld.so reported a change (TID at the _dl_debug_state probe, STOPPED; or
   waiting in its stub for the answer, running): plant probes in newly
   consistent objects, stopping P's threads first when TID runs. */
int loader_debug_state(struct tracer *t, struct tproc *p, pid_t tid,
		       bool stopped);

/* ---- alloc.c: allocator entry and return stops ---- */
/* An allocator call whose return we wait for. */
struct pending_call {
	uint64_t slot;   /* stack address holding the hijacked return address */
	uint64_t orig;   /* the real return address */
	enum ht_alloc_fn fn;
	bool at_entry;   /* reported at its entry (a held free): nothing to
			    report at its return */
	uint64_t args[3];
	uint64_t obj_lo, obj_hi; /* object of the called function: calls it
				    makes into probed code are internal */
	uint64_t *pcs;   /* stack unwound at entry (owned) */
	unsigned npcs;
	bool sampling;   /* --sampling-interval: SAMPLE and OLD_SAMPLED say
			    what to report */
	uint32_t sample; /* the new block's SAMPLE byte (0: not sampled) */
	bool old_sampled; /* realloc: the old block was sampled */
};
/* ---- sampled.c: --sampling-interval on the ptrace path ---- */
/* The bytes the call FN(ARGS) asks for (~0 when the product overflows). */
uint64_t sampled_call_size(enum ht_alloc_fn fn, const uint64_t args[3]);
/* TC's sampling decision for an allocation of SIZE bytes (sample.h's
   sample_take: 0 not sampled, else its SAMPLE byte). */
uint32_t sampled_take(struct tracer *t, struct tracee *tc, uint64_t size);
/* Remember the sampled block ADDR (0: nothing) of P, sampled by T. */
void sampled_insert(const struct tracer *t, struct tproc *p, uint64_t addr);
/* Whether the free of ADDR in P, sampled by T, is to be reported: ADDR
   was sampled (and is forgotten now), or P's set overflowed once. */
bool sampled_forget(const struct tracer *t, struct tproc *p, uint64_t addr);
/* The bytes a block of SIZE bytes with SAMPLE byte K stands for. */
uint64_t sampled_weight(const struct tracer *t, uint32_t k, uint64_t size);

/* TID hit allocator probe PR with REGS. */
int alloc_entry(struct tracer *t, struct tracee *tc, const struct probe *pr,
		struct user_regs_struct *regs);
/* TID returned through the trampoline with REGS. */
int alloc_return(struct tracer *t, struct tracee *tc,
		 struct user_regs_struct *regs);
/* TID hit libc's _exit: in compat mode, run the freeres functions first. */
int alloc_exit_hook(struct tracer *t, struct tracee *tc, const struct probe *pr,
		    struct user_regs_struct *regs);
/* TID came back from an injected freeres call. */
int alloc_call_return(struct tracer *t, struct tracee *tc,
		      struct user_regs_struct *regs);
/* Drop TC's pending calls. */
void alloc_pending_clear(struct tracee *tc);

#endif
