/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The processor-specific half of the breakpoint engine: decoding the
   instruction a breakpoint displaces, and either relocating it so that it
   runs out of line (XOL) from a scratch slot, or emulating it; and, for the
   inline path (docs/inline-backend.md), relocating the whole instructions a
   jump patch covers. Generic tracer code calls only these functions; each
   architecture lives in tracer/arch/<cpu>/ under the same names. */
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
	uint64_t target;             /* EMULATE: that target; XOL with
					rip_relative: the operand's absolute
					address */
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

/* Jump patches (the inline path). A function F at ADDR is entered through
   a direct jump written over its first whole instructions; those run,
   relocated, from a copy elsewhere ("orig_F"), which then jumps back to
   ADDR + covered. */

/* Length of the patch: jmp rel32. */
#define ARCH_PATCH_JMP_LEN 5
/* Largest MIN_BYTES arch_relocate_prologue accepts, the most bytes it may
   cover (MIN_BYTES - 1 plus one whole instruction), and the room its output
   may take: each covered instruction grows by 4 bytes at most (jcc rel8 to
   jcc rel32), then up to 14 bytes of jump back. */
#define ARCH_PATCH_MAX 16
#define ARCH_RELOC_MAX_COVERED (ARCH_PATCH_MAX - 1 + ARCH_MAX_INSN)
#define ARCH_RELOC_MAX 128

/* One covered instruction: where it was, and where its relocated form is. */
struct arch_reloc_insn {
	uint8_t off;     /* offset from ADDR */
	uint8_t len;     /* its length there */
	uint8_t new_off; /* offset of the relocated form in CODE */
	uint8_t new_len; /* its length there */
};

/* The relocated prologue of a function at ADDR, to be written at DEST_ADDR
   (the copy is position-dependent: valid at DEST_ADDR only).

   CODE holds each covered instruction in order, then (unless the last one
   ends the flow) the jump back to ADDR + covered at BACK_OFF. Relative
   branches keep their absolute targets: jmp rel8/rel32 become jmp rel32,
   jcc rel8/rel32 become jcc rel32 (0f 8x), call rel32 stays call rel32;
   RIP-relative operands keep their absolute addresses; everything else is
   copied byte for byte. */
struct arch_relocated {
	size_t covered;                        /* bytes replaced at ADDR:
						  whole instructions,
						  >= MIN_BYTES */
	uint8_t orig[ARCH_RELOC_MAX_COVERED];  /* their original bytes */
	size_t ninsn;                          /* entries of INSN */
	struct arch_reloc_insn insn[ARCH_PATCH_MAX];
	uint8_t code[ARCH_RELOC_MAX];          /* what to write at DEST_ADDR */
	size_t len;                            /* bytes of CODE */
	size_t back_off;                       /* the jump back in CODE; LEN
						  when there is none */
	bool ends;                             /* the last covered instruction
						  is a jmp or ret (no jump
						  back follows) */
	bool call;                             /* the last covered instruction
						  is a call rel32: the callee
						  returns into the copy, at
						  DEST_ADDR + BACK_OFF */
	bool rip_relative;                     /* an operand was re-targeted */
	char text[192];                        /* "push r12; push rbp; ...",
						  for messages */
};

/* Relocate the prologue of the function whose bytes are CODE (LEN bytes:
   pass the whole function, its ELF symbol size, so that a patch never runs
   past its end) at address ADDR, to make room for a patch of MIN_BYTES
   (normally ARCH_PATCH_JMP_LEN, at most ARCH_PATCH_MAX) bytes: whole
   instructions are decoded from ADDR until they cover at least MIN_BYTES,
   and *OUT receives their copy for DEST_ADDR (see struct arch_relocated).
   CODE must hold the original bytes (not a breakpoint planted there).

   Returns 0, or with a reason in ERR (ERRLEN bytes, may be 0):
   -ENOTSUP when a covered instruction is refused by arch_displace's rules
   (syscall, int, privileged, LOCK, far or indirect call, loop/jrcxz,
   xbegin, EIP-relative, a non-emulated branch encoding), when a branch
   among them targets the interior (ADDR, ADDR + covered) of the range, or
   a RIP-relative operand points there, or when a call rel32 is not the
   last covered instruction (a thread inside its callee would return into
   the middle of the patch);
   -ENOSPC when the function ends before MIN_BYTES are covered: an
   unconditional jmp, ret or ud2 before then (_dl_debug_state is a bare
   ret), or LEN runs out;
   -ERANGE when a branch target or a RIP-relative operand is out of rel32
   reach of its place in the copy (the jump back alone falls back to
   jmp [rip+0] and an absolute address);
   -EILSEQ when an instruction is undecodable, truncated by LEN, or the
   decoder and the encoding disagree; -EINVAL for bad arguments; -ENOMEM
   when the decoder cannot start.

   A branch to ADDR itself is kept: it enters the patch, as a tail call to
   F would. What is not checked here: branches into the range from the
   rest of the function (arch_patch_range_is_safe) or from elsewhere. */
int arch_relocate_prologue(const uint8_t *code, size_t len, uint64_t addr,
			   size_t min_bytes, uint64_t dest_addr,
			   struct arch_relocated *out, char *err,
			   size_t errlen);

/* Scan the function FUNC (FUNC_LEN bytes, its ELF symbol size) at ADDR,
   whose first COVERED bytes a patch replaces, for code that would enter
   the interior [ADDR + 1, ADDR + COVERED) of the patched range: relative
   jumps, jcc, calls, loop/jrcxz, xbegin, and RIP-relative operands (a lea
   of a code address) targeting it, from anywhere in the function including
   the range itself. Such a function must not be jump-patched (keep the
   int3 path). Returns 0 when none is found, -ENOTSUP naming the first one
   in ERR, -EILSEQ when the linear sweep meets an undecodable byte (data in
   the code, or an instruction the decoder does not know: nothing past it
   could be checked), -EINVAL for bad arguments (COVERED 0 or past
   FUNC_LEN), -ENOMEM when the decoder cannot start.

   Limits: a linear sweep over FUNC only. It does not see computed
   branches (jump tables, whose entries are in .rodata and relative to the
   table; function pointers stored in data; exception landing pads listed
   in .gcc_except_table), nor code outside [ADDR, ADDR + FUNC_LEN) that
   branches in: split-off parts such as malloc.cold, other functions, or
   code placed after the symbol's end. Data inside FUNC would desynchronize
   the sweep; GCC and Clang put none in x86-64 text. */
/* The first syscall instruction of a linear sweep over CODE (LEN bytes
   at ADDR: a system call's wrapper) into *AT. 0, -ENOENT (none before an
   undecodable byte or the end), or -ENOMEM. */
int arch_find_syscall(const uint8_t *code, size_t len, uint64_t addr,
		      uint64_t *at);
/* Guesses at the return addresses of the calls in CODE (LEN bytes of
   code at ADDR), in address order, into OUT (room for MAX); their number.
   A cheap byte scan, not a decoding: every call whose instruction lies
   wholly inside CODE is found (but a direct call spanning 128 MiB or
   more), and some addresses found are no return address at all (the
   bytes of a call inside another instruction).
   For hints only (the inline path's rule prefetch). */
size_t arch_guess_call_returns(const uint8_t *code, size_t len,
			       uint64_t addr, uint64_t *out, size_t max);

int arch_patch_range_is_safe(const uint8_t *func, size_t func_len,
			     uint64_t addr, size_t covered, char *err,
			     size_t errlen);

/* The patch itself: a jmp rel32 at FROM to TO, into OUT
   (ARCH_PATCH_JMP_LEN bytes). Returns 0, or -ERANGE when TO is out of rel32
   reach of FROM. */
int arch_encode_patch_jump(uint64_t from, uint64_t to, uint8_t *out);

/* Moving a thread whose pc is inside the patched range or the copy (when
   patching or unpatching; the thread is stopped, hence at an instruction
   boundary). R was built for ADDR and DEST_ADDR.
   arch_relocated_pc_to_copy: PC at the start of covered instruction i, at
   ADDR + R->insn[i].off, gives DEST_ADDR + R->insn[i].new_off (for PC ==
   ADDR, leaving the thread at ADDR is also right: it then takes the patch).
   arch_relocated_pc_to_orig: the reverse, and the jump back (also the
   return address a relocated call pushes) gives ADDR + R->covered.
   Both return 1 with *OUT set when PC was mapped, 0 with *OUT = PC when PC
   lies outside the range they map from, -EINVAL when PC lies inside it but
   not at an instruction's start. */
int arch_relocated_pc_to_copy(const struct arch_relocated *r, uint64_t addr,
			      uint64_t dest_addr, uint64_t pc, uint64_t *out);
int arch_relocated_pc_to_orig(const struct arch_relocated *r, uint64_t addr,
			      uint64_t dest_addr, uint64_t pc, uint64_t *out);

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
