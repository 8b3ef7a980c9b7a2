/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The processor-specific half of the breakpoint engine: decoding the
   instruction a breakpoint displaces, and either relocating it so that it
   runs out of line (XOL) from a scratch slot, or emulating it. Generic
   tracer code calls only these functions; each architecture lives in
   tracer/arch/<cpu>/ under the same names. */
#ifndef HT_TRACER_ARCH_ARCH_H
#define HT_TRACER_ARCH_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/user.h>

/* The bytes of a software breakpoint and their count. */
extern const uint8_t arch_breakpoint_insn[];
extern const size_t arch_breakpoint_len;

/* Longest instruction, and the room a relocated copy plus its jump back may
   take in a scratch slot (15 + 14 bytes at most on x86-64). */
#define ARCH_MAX_INSN 15
#define ARCH_XOL_SLOT 64

enum arch_displaced_kind {
	ARCH_DISPLACED_XOL,     /* run the copy in the slot; it jumps back */
	ARCH_DISPLACED_EMULATE, /* the tracer applies the effect itself */
};

/* What an ARCH_DISPLACED_EMULATE instruction does. */
enum arch_emulate_op {
	ARCH_EMULATE_NONE,
	ARCH_EMULATE_JMP,  /* rip = target */
	ARCH_EMULATE_CALL, /* push addr + len, rip = target */
	ARCH_EMULATE_JCC,  /* rip = cond(EFLAGS) ? target : addr + len */
};

/* How the instruction displaced by a breakpoint is executed.

   XOL: the slot holds the copy (its RIP-relative displacement, if any,
   re-targeted to the same absolute address) at offset 0, then a jump back
   to addr + len at offset len. A thread whose rip is the slot's start has
   not executed the instruction yet; one at slot + len has. `ret` is run out
   of line too: it does not depend on rip, and simply never reaches the
   jump back. */
struct arch_displaced {
	enum arch_displaced_kind kind;
	size_t len;                  /* length of the original instruction */
	uint8_t orig[ARCH_MAX_INSN]; /* its bytes */
	uint8_t slot[ARCH_XOL_SLOT]; /* XOL: what to write into the slot */
	size_t slot_len;             /* XOL: len + 5, or len + 14 when the
					jump back is absolute */
	bool rip_relative;           /* XOL: the copy's disp32 re-targeted */
	enum arch_emulate_op op;     /* EMULATE: which branch */
	uint8_t cond;                /* EMULATE JCC: opcode's low nibble */
	int32_t rel;                 /* EMULATE: target = addr + len + rel */
	char text[64];               /* disassembly, for messages */
};

/* Decode the instruction CODE (at least ARCH_MAX_INSN readable bytes, fewer
   when LEN is shorter) found at address ADDR, and prepare it to be executed
   out of line from a slot at SLOT_ADDR, or emulated for direct jmp, call and
   jcc. Returns 0, or with a reason in ERR (ERRLEN bytes, may be 0): -EILSEQ
   when undecodable (or truncated by LEN), -ENOTSUP for a refused class
   (syscall, sysenter, int, int3, privileged, LOCK prefix, far or indirect
   call, loop/jrcxz, xbegin, EIP-relative), -ERANGE when a RIP-relative
   operand's target is out of rel32 reach of the slot, -EINVAL for bad
   arguments, -ENOMEM when the decoder cannot start. */
int arch_displace(const uint8_t *code, size_t len, uint64_t addr,
		  uint64_t slot_addr, struct arch_displaced *out, char *err,
		  size_t errlen);

/* Apply an ARCH_DISPLACED_EMULATE instruction D, originally at ADDR, to
   REGS. A call decrements REGS->rsp and sets *PUSH to the word (its return
   address) that the caller must store at the new REGS->rsp: returns 1 then,
   else 0. Returns -EINVAL when D is not an emulated instruction. */
int arch_emulate(const struct arch_displaced *d, uint64_t addr,
		 struct user_regs_struct *regs, uint64_t *push);

/* The address in the original code equivalent to PC when PC lies in the
   XOL slot at SLOT_ADDR built for D (displaced from ADDR), else PC itself:
   what a thread stopped inside a slot resumes at once the slot is gone. */
uint64_t arch_xol_orig_pc(const struct arch_displaced *d, uint64_t addr,
			  uint64_t slot_addr, uint64_t pc);

/* Registers as the allocation functions see them. */
static inline uint64_t arch_pc(const struct user_regs_struct *r) { return r->rip; }
static inline uint64_t arch_sp(const struct user_regs_struct *r) { return r->rsp; }
static inline uint64_t arch_arg(const struct user_regs_struct *r, int i)
{
	switch (i) {
	case 0: return r->rdi;
	case 1: return r->rsi;
	case 2: return r->rdx;
	default: return r->rcx;
	}
}
static inline uint64_t arch_retval(const struct user_regs_struct *r) { return r->rax; }

#endif
