/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unwinding a captured stack, two ways that give the same frames. The fast
   walk applies per-pc rules compiled once from the CFI (rules.c) to the
   registers and stack bytes the tracer copied at the stop: a table look-up
   and a few memory reads per frame. libdwfl's own unwinder, driven by
   thread callbacks serving the same copy, takes the events whose rules
   need more than base + offset reads, and every event when asked to. As
   long as the stack fits in the copy, neither makes a system call.
   Re-reading the modules when a walk meets code in none is the session's
   part: it walks again then. */
#include "unwind.h"

#include <gelf.h>
#include <string.h>
#include <sys/uio.h>

#include "common/err.h"

/* The one thread of an unwind. Its tid is only a label: the registers come
   from the capture, whichever thread it was taken from. */
static pid_t
next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sym_unwinder *u = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = u;
	return u->pid;
}

static bool
get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = arg;
	return true;
}

static bool
read_remote(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { .iov_base = buf, .iov_len = len };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr,
				.iov_len = len };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len;
}

/* A word outside the captured stack (a frame deeper than the copy, or
   memory a CFI expression points at): read from the process while it
   exists, a page at a time, since the next word asked for is usually next
   to this one. */
static bool
read_outside(struct sym_unwinder *u, uint64_t addr, uint64_t *out)
{
	struct sym_unwind_state *uw = &u->uw;
	uint64_t page = addr & ~(uint64_t)(SYM_PAGE_SIZE - 1);
	uint64_t off = addr - page;

	if (uw->gone || uw->cap->running)
		return false;
	if (off + sizeof(*out) > SYM_PAGE_SIZE)
		return read_remote(u->pid, addr, out, sizeof(*out));
	if (uw->page_addr != page) {
		if (!read_remote(u->pid, page, uw->page, SYM_PAGE_SIZE))
			return read_remote(u->pid, addr, out, sizeof(*out));
		uw->page_addr = page;
	}
	memcpy(out, uw->page + off, sizeof(*out));
	return true;
}

/* The word at ADDR in the process at the stop: from the capture, else
   from the process. Both walks read through here, so they see the same
   bytes. */
static inline bool
read_word(struct sym_unwinder *u, uint64_t addr, uint64_t *out)
{
	const struct sym_capture *cap = u->uw.cap;
	uint64_t off = addr - cap->stack_addr;

	if (addr >= cap->stack_addr && cap->len >= sizeof(*out) &&
	    off <= cap->len - sizeof(*out)) {
		memcpy(out, cap->stack + off, sizeof(*out));
		return true;
	}
	return read_outside(u, addr, out);
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out, void *arg)
{
	uint64_t word;

	(void)dwfl;
	if (!read_word(arg, addr, &word))
		return false;
	*out = word;
	return true;
}

/* The captured registers in DWARF column order (rules.h). */
static void
capture_columns(const struct user_regs_struct *r, uint64_t *col)
{
	const uint64_t regs[SYM_NREGS] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	memcpy(col, regs, sizeof(regs));
}

static bool
set_initial_registers(Dwfl_Thread *th, void *thread_arg)
{
	const struct sym_unwinder *u = thread_arg;
	uint64_t col[SYM_NREGS];
	Dwarf_Word regs[SYM_NREGS];

	capture_columns(&u->uw.cap->regs, col);
	for (unsigned i = 0; i < SYM_NREGS; i++)
		regs[i] = col[i];
	dwfl_thread_state_register_pc(th, u->uw.cap->regs.rip);
	return dwfl_thread_state_registers(th, 0, SYM_NREGS, regs);
}

static const Dwfl_Thread_Callbacks capture_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

/* dwfl_getmodules callback: the ELF header of the first module whose file
   can be read, into ARG. */
static int
module_ehdr(Dwfl_Module *mod, void **userdata, const char *name,
	    Dwarf_Addr start, void *arg)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);

	(void)userdata;
	(void)name;
	(void)start;
	if (!elf || !gelf_getehdr(elf, arg))
		return DWARF_CB_OK;
	return DWARF_CB_ABORT;
}

void
sym_unwinder_init(struct sym_unwinder *u, struct sym_unwind_stats *stats)
{
	memset(u, 0, sizeof(*u));
	u->stats = stats;
	u->uw.page_addr = 1;
	sym_rules_init(&u->rules);
}

void
sym_unwinder_fini(struct sym_unwinder *u)
{
	if (u->arch_elf)
		elf_end(u->arch_elf);
	u->arch_elf = NULL;
	sym_rules_fini(&u->rules);
}

int
sym_unwinder_attach(struct sym_unwinder *u, Dwfl *dwfl, pid_t pid)
{
	GElf_Ehdr eh = { .e_machine = EM_NONE };
	Elf64_Ehdr *own = &u->arch_ehdr;

	u->dwfl = dwfl;
	u->pid = pid;
	/* libdwfl picks its unwinder by the machine of an ELF file that must
	   live as long as the Dwfl. A module's would do until a re-reading
	   drops that module (dlclose, exec), so the unwinder keeps a header
	   of its own naming the same machine. */
	dwfl_getmodules(dwfl, module_ehdr, &eh, 0);
	if (eh.e_machine == EM_NONE || eh.e_ident[EI_CLASS] != ELFCLASS64)
		return -HT_E_NOTIMPL;
	memset(own, 0, sizeof(*own));
	memcpy(own->e_ident, eh.e_ident, EI_NIDENT);
	own->e_type = ET_CORE;
	own->e_machine = eh.e_machine;
	own->e_version = EV_CURRENT;
	own->e_ehsize = sizeof(*own);
	own->e_phentsize = sizeof(Elf64_Phdr);
	own->e_shentsize = sizeof(Elf64_Shdr);
	elf_version(EV_CURRENT);
	u->arch_elf = elf_memory((char *)own, sizeof(*own));
	if (!u->arch_elf)
		return -HT_E_NOTIMPL;
	if (!dwfl_attach_state(dwfl, u->arch_elf, pid, &capture_callbacks, u))
		return -HT_E_NOTIMPL;
	return 0;
}

/* Collect one frame: the pc itself for the innermost frame, the return
   address minus one for the others, so that it lies inside the call
   instruction (a call that ends a function would otherwise resolve to the
   next function). Valgrind subtracts one from frames interrupted by a
   signal and from the signal trampoline's too, although neither holds a
   return address, and Massif's lines and addresses show it; so does this. */
static int
collect_frame(Dwfl_Frame *frame, void *arg)
{
	struct sym_unwind_state *uw = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || pc == 0)
		return DWARF_CB_ABORT;
	if (uw->n == 0)
		pc = uw->cap->regs.rip;
	else
		pc--;
	uw->pcs[uw->n++] = pc;
	return uw->n < uw->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

/* The event by libdw's unwinder, into U->uw. */
static void
unwind_libdw(struct sym_unwinder *u)
{
	struct sym_unwind_state *uw = &u->uw;

	uw->n = 0;
	uw->page_addr = 1;
	/* The return value only says whether the walk ended at the outermost
	   frame or stopped early (no CFI, unreadable stack, MAX reached);
	   either way the frames collected are what there is. */
	dwfl_getthread_frames(u->dwfl, u->pid, collect_frame, uw);
}

/* The registers of the frame the fast walk is in, by DWARF column, and
   which of them are known: a column the rule leaves undefined, or whose
   saved copy cannot be read, is unknown in the caller, as in libdw. */
struct frame_regs {
	uint64_t r[SYM_NREGS];
	uint32_t known;
};

#define COL(c) (1u << (c))

/* The value L describes in the frame FR, whose CFA is CFA. */
static inline bool
loc_value(struct sym_unwinder *u, const struct sym_loc *l,
	  const struct frame_regs *fr, uint64_t cfa, uint64_t *out)
{
	uint64_t v;

	if (l->base == SYM_LOC_CFA)
		v = cfa;
	else if (l->base == SYM_LOC_CONST)
		v = 0;
	else if (fr->known & COL(l->base))
		v = fr->r[l->base];
	else
		return false;
	v += (uint64_t)(int64_t)l->off;
	if (l->deref)
		return read_word(u, v, out);
	*out = v;
	return true;
}

/* Make FR its caller's registers by the CFI rule RU. Returns false when the
   return address comes out unknown: the walk ends there. */
static bool
step_cfi(struct sym_unwinder *u, const struct sym_rule *ru,
	 struct frame_regs *fr)
{
	uint64_t cfa = 0, val[SYM_NREGS];
	uint32_t got = 0;
	bool cfa_ok = ru->cfa_ok && loc_value(u, &ru->cfa, fr, 0, &cfa);

	/* The usual rule: columns saved at or computed from the CFA alone,
	   which can be stored as they come. */
	if (ru->cfa_only) {
		fr->known &= ru->same;
		for (unsigned i = 0; cfa_ok && i < ru->n_set; i++) {
			const struct sym_loc *l = &ru->set[i];
			uint64_t v = cfa + (uint64_t)(int64_t)l->off;

			if (l->deref && !read_word(u, v, &v))
				continue;
			fr->r[l->col] = v;
			fr->known |= COL(l->col);
		}
		return fr->known & COL(SYM_RA);
	}
	for (unsigned i = 0; i < ru->n_set; i++) {
		const struct sym_loc *l = &ru->set[i];

		if ((cfa_ok || !l->needs_cfa) &&
		    loc_value(u, l, fr, cfa, &val[i]))
			got |= 1u << i;
	}
	/* Every value is computed from the callee's registers, so none is
	   stored before all are computed. */
	fr->known &= ru->same;
	for (unsigned i = 0; i < ru->n_set; i++) {
		if (got & (1u << i)) {
			fr->r[ru->set[i].col] = val[i];
			fr->known |= COL(ru->set[i].col);
		}
	}
	return fr->known & COL(SYM_RA);
}

/* Make FR the caller's registers, and *PC its pc, by the frame-pointer
   chain, as libdw does where no CFI covers a pc: rbp points at the saved
   rbp with the return address above it, and the caller knows only rbp and
   rsp. Returns false where libdw's walk stops. */
static bool
step_fp(struct sym_unwinder *u, struct frame_regs *fr, uint64_t *pc)
{
	uint64_t fp = fr->r[SYM_RBP], sp = 0, saved, ret;

	if (!(fr->known & COL(SYM_RBP)) || fp == 0)
		return false;
	if (fr->known & COL(SYM_RSP))
		sp = fr->r[SYM_RSP];
	if (!read_word(u, fp, &saved))
		saved = 0;
	if (!read_word(u, fp + 8, &ret))
		return false;
	/* A chain that does not lead up the stack is no frame chain. */
	if (sp >= fp + 16)
		return false;
	fr->r[SYM_RBP] = saved;
	fr->r[SYM_RSP] = fp + 16;
	fr->known = COL(SYM_RBP) | COL(SYM_RSP);
	*pc = ret;
	return true;
}

/* The event by the cached rules, into U->uw: libdw's walk, step for step,
   with its stops (return address unknown or 0, frame-pointer chain broken,
   MAX reached). Like libdw, it does not stop where the CFA fails to grow:
   a signal frame on an alternate stack may lower it, and a loop ends at
   MAX anyway. Returns false when a frame's rule is one only libdw can
   follow (the frames collected are then to be dropped). *VERIFIED: how
   many leading addresses are known to lie in a module, their lookup pc
   having a rule. */
static bool
unwind_fast(struct sym_unwinder *u, unsigned *verified)
{
	struct sym_unwind_state *uw = &u->uw;
	struct frame_regs fr = { .known = COL(SYM_NREGS) - 1 };
	uint64_t pc = uw->cap->regs.rip;
	/* Looked up at the pc itself: the innermost frame, and a frame a
	   signal interrupted, since neither made a call there. */
	bool activation = true;
	unsigned good = 0;

	capture_columns(&uw->cap->regs, fr.r);
	uw->n = 0;
	uw->page_addr = 1;
	*verified = 0;
	if (pc == 0)
		return true;
	uw->pcs[uw->n++] = pc;
	while (uw->n < uw->max) {
		uint64_t at = activation ? pc : pc - 1;
		const struct sym_rule *ru = sym_rules_find(&u->rules, at);

		if (!ru)
			ru = sym_rules_get(&u->rules, u->dwfl, at, u->stats);
		if (ru && good == uw->n - 1 && at == uw->pcs[uw->n - 1])
			good++;
		if (ru && ru->kind == SYM_RULE_COMPLEX)
			return false;
		if (ru && ru->kind == SYM_RULE_CFI) {
			if (!step_cfi(u, ru, &fr))
				break;
			pc = fr.r[SYM_RA];
			activation = ru->signal;
		} else {
			if (!step_fp(u, &fr, &pc))
				break;
			activation = false;
		}
		if (pc == 0)
			break;
		uw->pcs[uw->n++] = pc - 1;
	}
	*verified = good;
	return true;
}

/* The event into U->uw: by the rules, or by libdw when asked to or when
   the rules meet a frame they cannot follow. Then the whole event is
   redone, which is simpler than handing libdw a half-walked stack and
   rare. Returns how many leading addresses are known to lie in a module. */
static unsigned
unwind_event(struct sym_unwinder *u)
{
	struct sym_unwind_state *uw = &u->uw;
	unsigned verified = 0;
	bool done = false;

	if (!u->libdw_only) {
		done = unwind_fast(u, &verified);
		if (!done)
			u->stats->fallbacks++;
	}
	if (!done) {
		u->stats->by_libdw++;
		verified = 0;
		unwind_libdw(u);
	}
	if (uw->n == 0)
		uw->pcs[uw->n++] = uw->cap->regs.rip;
	return verified;
}

unsigned
sym_unwinder_walk(struct sym_unwinder *u, const struct sym_capture *cap,
		  bool gone, uint64_t *pcs, unsigned max, unsigned *verified)
{
	struct sym_unwind_state *uw = &u->uw;

	uw->cap = cap;
	uw->gone = gone;
	uw->pcs = pcs;
	uw->max = max;
	*verified = unwind_event(u);
	uw->cap = NULL;
	uw->pcs = NULL;
	return uw->n;
}
