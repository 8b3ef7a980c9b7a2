/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Probes: an int3 planted once at a function's first instruction and never
   removed, so no other thread can slip past it. The displaced instruction
   runs out of line from a slot in a scratch page mapped into the target by
   an injected mmap (or is emulated when it is a branch). Slots must lie
   within a rel32 reach of the code they came from, so scratch pages are
   made per 2 GiB region, next to the objects they serve. */
#include "tracer_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "common/err.h"
#include "common/xalloc.h"

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
			continue;
		if (!within_reach(ret, near))
			continue; /* an old kernel ignored the flag */
		ht_xgrow((void **)&p->scratch, &p->cap_scratch,
			 p->n_scratch + 1, sizeof(*p->scratch));
		struct scratch *s = &p->scratch[p->n_scratch++];
		*s = (struct scratch){ .addr = ret, .size = SCRATCH_SIZE };
		*out = s;
		ht_debug("process %d: scratch page at 0x%llx", (int)p->pid,
			 (unsigned long long)ret);
		return 0;
	}
	return -ENOMEM;
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
