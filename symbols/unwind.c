/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unwinding a captured stack: libdwfl's unwinder (CFI, then frame
   pointers) driven by our own thread callbacks, which serve the registers
   and stack bytes the tracer copied at the stop, so a warm unwind makes no
   system call as long as the stack fits in the copy. */
#include "session.h"

#include <gelf.h>
#include <string.h>
#include <sys/uio.h>

#include "common/err.h"
#include "sym_priv.h"

/* The one thread of an unwind. Its tid is only a label: the registers come
   from the capture, whichever thread it was taken from. */
static pid_t
next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct sym_session *ss = arg;

	(void)dwfl;
	if (*thread_argp)
		return 0;
	*thread_argp = ss;
	return ss->pid;
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
read_outside(struct sym_session *ss, uint64_t addr, Dwarf_Word *out)
{
	struct sym_unwind_state *uw = &ss->uw;
	uint64_t page = addr & ~(uint64_t)(SYM_PAGE_SIZE - 1);
	uint64_t off = addr - page;

	if (ss->gone)
		return false;
	if (off + sizeof(*out) > SYM_PAGE_SIZE)
		return read_remote(ss->pid, addr, out, sizeof(*out));
	if (uw->page_addr != page) {
		if (!read_remote(ss->pid, page, uw->page, SYM_PAGE_SIZE))
			return read_remote(ss->pid, addr, out, sizeof(*out));
		uw->page_addr = page;
	}
	memcpy(out, uw->page + off, sizeof(*out));
	return true;
}

static bool
memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *out, void *arg)
{
	struct sym_session *ss = arg;
	const struct sym_capture *cap = ss->uw.cap;
	uint64_t off = addr - cap->stack_addr;

	(void)dwfl;
	if (addr >= cap->stack_addr && cap->len >= sizeof(*out) &&
	    off <= cap->len - sizeof(*out)) {
		memcpy(out, cap->stack + off, sizeof(*out));
		return true;
	}
	return read_outside(ss, addr, out);
}

/* x86-64's DWARF register numbers: rax rdx rcx rbx rsi rdi rbp rsp, r8..r15,
   then the return address column (16), which holds the pc. */
static bool
set_initial_registers(Dwfl_Thread *th, void *thread_arg)
{
	const struct sym_session *ss = thread_arg;
	const struct user_regs_struct *r = &ss->uw.cap->regs;
	const Dwarf_Word regs[17] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15,
		r->rip,
	};

	dwfl_thread_state_register_pc(th, r->rip);
	return dwfl_thread_state_registers(th, 0, 17, regs);
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

int
sym_unwind_attach(struct sym_session *ss)
{
	GElf_Ehdr eh = { .e_machine = EM_NONE };
	Elf64_Ehdr *own = &ss->arch_ehdr;

	/* libdwfl picks its unwinder by the machine of an ELF file that must
	   live as long as the Dwfl. A module's would do until a re-reading
	   drops that module (dlclose, exec), so the session keeps a header of
	   its own naming the same machine. */
	dwfl_getmodules(ss->dwfl, module_ehdr, &eh, 0);
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
	ss->arch_elf = elf_memory((char *)own, sizeof(*own));
	if (!ss->arch_elf)
		return -HT_E_NOTIMPL;
	if (!dwfl_attach_state(ss->dwfl, ss->arch_elf, ss->pid,
			       &capture_callbacks, ss))
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

static void
unwind_once(struct sym_session *ss)
{
	struct sym_unwind_state *uw = &ss->uw;

	uw->n = 0;
	uw->page_addr = 1;
	/* The return value only says whether the walk ended at the outermost
	   frame or stopped early (no CFI, unreadable stack, MAX reached);
	   either way the frames collected are what there is. */
	dwfl_getthread_frames(ss->dwfl, ss->pid, collect_frame, uw);
	if (uw->n == 0)
		uw->pcs[uw->n++] = uw->cap->regs.rip;
}

unsigned
sym_unwind(struct sym_session *ss, const struct sym_capture *cap,
	   uint64_t *pcs, unsigned max)
{
	struct sym_unwind_state *uw = &ss->uw;

	if (max == 0)
		return 0;
	uw->cap = cap;
	uw->pcs = pcs;
	uw->max = max;
	unwind_once(ss);
	/* A frame in code outside every module is in a library loaded since
	   the modules were read: the walk went no further than that frame,
	   or went on by frame pointers and may be wrong. sym_session_module
	   re-reads the modules once per such pc; when that finds the
	   module, walk again. */
	for (unsigned i = 0; i < uw->n; i++) {
		if (dwfl_addrmodule(ss->dwfl, pcs[i]))
			continue;
		if (sym_session_module(ss, pcs[i]))
			unwind_once(ss);
		break;
	}
	uw->cap = NULL;
	uw->pcs = NULL;
	return uw->n;
}
