/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Probes: an int3 planted once at a function's first instruction and never
   removed, so no other thread can slip past it. The displaced instruction
   runs out of line from a slot in a scratch page (inject.c: mapped into
   the target by an injected mmap, within a rel32 reach of the code it
   serves), or is emulated when it is a branch. */
#include "tracer/probes/probes.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "tracer/target/target.h"

int
probe_ensure_trampolines(struct tproc *p, pid_t tid)
{
	if (p->tramp)
		return 0;
	uint64_t addr;
	/* Any page will do for the trampolines: returns reach them through a
	   full 64-bit address on the stack. */
	int err = scratch_alloc(p, tid, p->syscall_insn, 16, &addr);
	if (err)
		return err;
	static const uint8_t traps[2] = { 0xcc, 0xcc };
	err = mem_write_code(p, tid, addr, traps, sizeof(traps));
	if (err)
		return err;
	p->tramp = addr;
	p->call_tramp = addr + 1;
	return 0;
}

enum trap_site
probe_trap_site(struct tproc *p, uint64_t at, struct probe **pr)
{
	*pr = NULL;
	if (p->tramp && at == p->tramp)
		return TRAP_RETURN;
	if (p->call_tramp && at == p->call_tramp)
		return TRAP_CALL_RETURN;
	*pr = probe_find(p, at);
	return *pr ? TRAP_PROBE : TRAP_NOT_OURS;
}

struct probe *
probe_find(struct tproc *p, uint64_t addr)
{
	uint64_t *i = u64map_get(&p->probe_at, addr);
	return i ? &p->probes[*i] : NULL;
}

int
probe_plant(struct tproc *p, pid_t tid, uint64_t addr, enum probe_role role,
	    enum ht_alloc_fn fn, uint64_t obj_lo, uint64_t obj_hi)
{
	if (probe_find(p, addr))
		return 0; /* an alias: memalign and aligned_alloc share code */
	uint8_t code[ARCH_MAX_INSN];
	ssize_t n = mem_read(p->pid, addr, code, sizeof(code));
	if (n <= 0)
		return n < 0 ? (int)n : -EFAULT;
	struct probe pr = {
		.addr = addr, .role = role, .fn = fn,
		.obj_lo = obj_lo, .obj_hi = obj_hi,
	};
	char err[160];
	uint64_t slot;
	int rc = scratch_alloc(p, tid, addr, ARCH_XOL_SLOT, &slot);
	if (rc)
		return rc;
	rc = arch_displace(code, (size_t)n, addr, slot, &pr.d, err,
			   sizeof(err));
	if (rc) {
		ht_warn("cannot probe %s at 0x%llx: %s", ht_alloc_fn_name(fn),
			(unsigned long long)addr, err);
		return rc;
	}
	if (pr.d.kind == ARCH_DISPLACED_XOL) {
		pr.slot = slot;
		rc = mem_write_code(p, tid, slot, pr.d.slot, pr.d.slot_len);
		if (rc)
			return rc;
	}
	rc = mem_write_code(p, tid, addr, arch_breakpoint_insn,
			    arch_breakpoint_len);
	if (rc)
		return rc;
	ht_xgrow((void **)&p->probes, &p->cap_probes, p->n_probes + 1,
		 sizeof(*p->probes));
	ht_debug("process %d: probe %s at 0x%llx (%s, slot 0x%llx, %zu bytes)",
		 (int)p->pid, ht_alloc_fn_name(fn), (unsigned long long)addr,
		 pr.d.kind == ARCH_DISPLACED_XOL ? "out of line" : "emulated",
		 (unsigned long long)pr.slot, pr.d.slot_len);
	p->probes[p->n_probes] = pr;
	u64map_put(&p->probe_at, addr, p->n_probes);
	p->n_probes++;
	return 0;
}

int
probe_step_over(struct tproc *p, pid_t tid, const struct probe *pr,
		struct user_regs_struct *regs)
{
	(void)p;
	if (pr->d.kind == ARCH_DISPLACED_XOL) {
		regs->rip = pr->slot;
		return 0;
	}
	regs->rip = pr->addr;
	uint64_t push;
	if (arch_emulate(&pr->d, pr->addr, regs, &push) == 1)
		return mem_write(tid, regs->rsp, &push, sizeof(push));
	return 0;
}
