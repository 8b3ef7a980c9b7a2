/* SPDX-License-Identifier: GPL-2.0-or-later */
/* x86-64 displaced instructions: classify what an int3 covers, then build
   its out-of-line slot (the copy with its RIP-relative displacement
   re-targeted, and a jump back) or record how to emulate it (direct jmp,
   call, jcc). Capstone decodes; every byte patched here is cross-checked
   against the raw encoding, because the decoder's details are not always
   right (4.0.2 reports a 2-byte displacement for VEX [rip+disp32]).
   The same classification relocates the prologue a jump patch covers, and
   finds branches into it; that is why both live in this one file. */
#include "tracer/arch/arch.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <capstone/capstone.h>

const uint8_t arch_breakpoint_insn[] = { 0xcc };
const size_t arch_breakpoint_len = sizeof(arch_breakpoint_insn);

#define JMP_REL32_LEN 5  /* e9 rel32 */
#define JMP_ABS_LEN 14   /* ff 25 00000000, then the 8-byte target */

/* The EFLAGS bits condition codes read. */
#define FL_CF (1u << 0)
#define FL_PF (1u << 2)
#define FL_ZF (1u << 6)
#define FL_SF (1u << 7)
#define FL_OF (1u << 11)

struct ctx {
	csh cs;
	const cs_insn *insn;
	const uint8_t *code;
	uint64_t addr;
	struct arch_displaced *out;
	char *err;
	size_t errlen;
};

static int __attribute__((format(printf, 3, 4)))
refuse(const struct ctx *c, int code, const char *fmt, ...)
{
	va_list ap;

	if (c->err && c->errlen) {
		va_start(ap, fmt);
		vsnprintf(c->err, c->errlen, fmt, ap);
		va_end(ap);
	}
	return code;
}

static void
put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static int32_t
get32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 |
			 (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static bool
fits_rel32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static bool
is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67:
		return true;
	default:
		return false;
	}
}

/* Number of legacy prefix bytes before the REX/opcode; *LOCK tells whether
   one of them is LOCK. Capstone keeps only one of LOCK/REP/REPNE, so
   "xacquire lock" would hide the LOCK from it. */
static size_t
count_prefixes(const uint8_t *code, size_t len, bool *lock)
{
	size_t n = 0;

	*lock = false;
	while (n < len && is_legacy_prefix(code[n])) {
		if (code[n] == 0xf0)
			*lock = true;
		n++;
	}
	return n;
}

static bool
in_group(const struct ctx *c, cs_group_type g)
{
	return cs_insn_group(c->cs, c->insn, g);
}

/* Privileged or I/O instructions Capstone 4 leaves out of
   CS_GRP_PRIVILEGE. */
static bool
is_privileged(unsigned int id)
{
	switch (id) {
	case X86_INS_IN: case X86_INS_INSB: case X86_INS_INSW:
	case X86_INS_INSD: case X86_INS_OUT: case X86_INS_OUTSB:
	case X86_INS_OUTSW: case X86_INS_OUTSD: case X86_INS_RDMSR:
	case X86_INS_WRMSR: case X86_INS_SWAPGS: case X86_INS_CLTS:
	case X86_INS_INVD: case X86_INS_WBINVD: case X86_INS_INVLPG:
	case X86_INS_INVLPGA: case X86_INS_LGDT: case X86_INS_LIDT:
	case X86_INS_LLDT: case X86_INS_LTR: case X86_INS_LMSW:
	case X86_INS_HLT: case X86_INS_CLI: case X86_INS_STI:
	case X86_INS_XSETBV: case X86_INS_VMCALL:
		return true;
	default:
		return false;
	}
}

/* 0, or the reason why the instruction must not be displaced at all. */
static int
check_refused(const struct ctx *c)
{
	const char *t = c->out->text;
	unsigned int id = c->insn->id;
	bool lock;

	count_prefixes(c->code, c->insn->size, &lock);
	if (lock || c->insn->detail->x86.prefix[0] == X86_PREFIX_LOCK)
		return refuse(c, -ENOTSUP,
			      "%s: LOCK-prefixed instructions are refused", t);
	if (id == X86_INS_INT3)
		return refuse(c, -ENOTSUP,
			      "%s: already a breakpoint (another debugger?)",
			      t);
	if (id == X86_INS_SYSCALL || id == X86_INS_SYSENTER)
		return refuse(c, -ENOTSUP,
			      "%s: system calls are refused (their stops and restarts would be seen in the slot)",
			      t);
	if (in_group(c, CS_GRP_INT))
		return refuse(c, -ENOTSUP,
			      "%s: software interrupts are refused", t);
	if (in_group(c, CS_GRP_IRET) || in_group(c, CS_GRP_PRIVILEGE) ||
	    is_privileged(id))
		return refuse(c, -ENOTSUP,
			      "%s: privileged instructions are refused", t);
	switch (id) {
	case X86_INS_LJMP: case X86_INS_LCALL:
	case X86_INS_RETF: case X86_INS_RETFQ:
		return refuse(c, -ENOTSUP,
			      "%s: far control transfers are refused", t);
	case X86_INS_XBEGIN:
		return refuse(c, -ENOTSUP,
			      "%s: its abort address is RIP-relative and cannot be moved",
			      t);
	case X86_INS_LOOP: case X86_INS_LOOPE: case X86_INS_LOOPNE:
	case X86_INS_JCXZ: case X86_INS_JECXZ: case X86_INS_JRCXZ:
		return refuse(c, -ENOTSUP,
			      "%s: loop and jrcxz are not emulated", t);
	default:
		break;
	}
	if (in_group(c, CS_GRP_CALL) && !in_group(c, CS_GRP_BRANCH_RELATIVE))
		return refuse(c, -ENOTSUP,
			      "%s: an indirect call run out of line would return into the slot",
			      t);
	return 0;
}

/* Direct jmp, call and jcc: decoded from the raw bytes (prefixes allowed:
   bnd and the branch hints), then checked against the decoder's target. */
static int
prepare_emulation(const struct ctx *c)
{
	struct arch_displaced *d = c->out;
	const cs_x86 *x = &c->insn->detail->x86;
	const uint8_t *p;
	size_t npfx, oplen = 1, rellen;
	bool lock;

	npfx = count_prefixes(c->code, d->len, &lock);
	for (size_t i = 0; i < npfx; i++)
		if (c->code[i] != 0xf2 && c->code[i] != 0x2e &&
		    c->code[i] != 0x3e)
			return refuse(c, -ENOTSUP,
				      "%s: prefix %02x on a relative branch is not emulated",
				      d->text, c->code[i]);
	p = c->code + npfx;
	if (p[0] == 0xeb || p[0] == 0xe9) {
		d->op = ARCH_EMULATE_JMP;
		rellen = p[0] == 0xeb ? 1 : 4;
	} else if (p[0] == 0xe8) {
		d->op = ARCH_EMULATE_CALL;
		rellen = 4;
	} else if (p[0] >= 0x70 && p[0] <= 0x7f) {
		d->op = ARCH_EMULATE_JCC;
		d->cond = p[0] & 0x0f;
		rellen = 1;
	} else if (p[0] == 0x0f && npfx + 1 < d->len && p[1] >= 0x80 &&
		   p[1] <= 0x8f) {
		d->op = ARCH_EMULATE_JCC;
		d->cond = p[1] & 0x0f;
		oplen = 2;
		rellen = 4;
	} else {
		return refuse(c, -ENOTSUP, "%s: relative branch not emulated",
			      d->text);
	}
	if (npfx + oplen + rellen != d->len)
		return refuse(c, -EILSEQ, "%s: unexpected branch encoding",
			      d->text);
	d->rel = rellen == 1 ? (int8_t)p[oplen] : get32(p + oplen);
	d->target = c->addr + d->len + (uint64_t)(int64_t)d->rel;
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
	    (uint64_t)x->operands[0].imm != d->target)
		return refuse(c, -EILSEQ,
			      "%s: decoder and encoding disagree on the target",
			      d->text);
	d->kind = ARCH_DISPLACED_EMULATE;
	return 0;
}

/* The memory operand based on RIP or EIP, or NULL. */
static const cs_x86_op *
ip_relative_operand(const cs_x86 *x)
{
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];

		if (op->type == X86_OP_MEM && (op->mem.base == X86_REG_RIP ||
					       op->mem.base == X86_REG_EIP))
			return op;
	}
	return NULL;
}

/* Re-target the copy's [rip+disp32] so that, run from SLOT_ADDR, it reaches
   the same absolute address. With no SIB byte, mod=00 rm=101 is the only
   RIP-relative form and its disp32 follows the ModRM byte directly; both the
   decoder and that byte must agree before anything is patched. */
static int
retarget_rip_relative(const struct ctx *c, uint64_t slot_addr)
{
	struct arch_displaced *d = c->out;
	const cs_x86 *x = &c->insn->detail->x86;
	const cs_x86_op *op = ip_relative_operand(x);
	size_t modrm = x->encoding.modrm_offset, off = modrm + 1;
	bool modrm_says = modrm && modrm < d->len &&
			  (c->code[modrm] & 0xc7) == 0x05;
	uint64_t target;
	int64_t disp;

	if (!op && !modrm_says)
		return 0;
	if (!op || !modrm_says)
		return refuse(c, -EILSEQ,
			      "%s: decoder and ModRM byte disagree on RIP-relative addressing",
			      d->text);
	if (op->mem.base == X86_REG_EIP || x->addr_size != 8)
		return refuse(c, -ENOTSUP,
			      "%s: 32-bit (EIP-relative) addressing is refused",
			      d->text);
	if (off + 4 > d->len || x->encoding.disp_offset != off ||
	    get32(c->code + off) != op->mem.disp)
		return refuse(c, -EILSEQ,
			      "%s: decoder and encoding disagree on the displacement",
			      d->text);
	target = c->addr + d->len + (uint64_t)op->mem.disp;
	disp = (int64_t)(target - (slot_addr + d->len));
	if (!fits_rel32(disp))
		return refuse(c, -ERANGE,
			      "%s: its RIP-relative target %#llx is out of rel32 reach of the slot at %#llx",
			      d->text, (unsigned long long)target,
			      (unsigned long long)slot_addr);
	put32(d->slot + off, (uint32_t)disp);
	d->rip_relative = true;
	d->target = target;
	return 0;
}

/* A jump at P, placed at FROM, to TO: rel32 when in reach, else
   jmp [rip+0] followed by the absolute target. Returns its length. */
static size_t
encode_jump(uint8_t *p, uint64_t from, uint64_t to)
{
	int64_t rel = (int64_t)(to - (from + JMP_REL32_LEN));

	if (fits_rel32(rel)) {
		p[0] = 0xe9;
		put32(p + 1, (uint32_t)rel);
		return JMP_REL32_LEN;
	}
	p[0] = 0xff;
	p[1] = 0x25;
	put32(p + 2, 0);
	put64(p + 6, to);
	return JMP_ABS_LEN;
}

/* The jump from the end of the copy back to ADDR + len. */
static void
append_jump_back(struct arch_displaced *d, uint64_t addr, uint64_t slot_addr)
{
	d->slot_len = d->len + encode_jump(d->slot + d->len,
					   slot_addr + d->len, addr + d->len);
}

static int
prepare_xol(const struct ctx *c, uint64_t slot_addr)
{
	struct arch_displaced *d = c->out;
	int ret;

	memcpy(d->slot, c->code, d->len);
	ret = retarget_rip_relative(c, slot_addr);
	if (ret)
		return ret;
	append_jump_back(d, c->addr, slot_addr);
	d->kind = ARCH_DISPLACED_XOL;
	return 0;
}

/* A copy of a relative branch would branch relative to the slot, so this
   errs on the side of "relative": the group, or a jump or call whose only
   operand is an immediate target. */
static bool
is_relative_branch(const struct ctx *c)
{
	const cs_x86 *x = &c->insn->detail->x86;

	if (in_group(c, CS_GRP_BRANCH_RELATIVE))
		return true;
	return (in_group(c, CS_GRP_JUMP) || in_group(c, CS_GRP_CALL)) &&
	       x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
}

static int
classify(struct ctx *c, uint64_t slot_addr)
{
	struct arch_displaced *d = c->out;
	const cs_insn *insn = c->insn;
	int ret;

	d->len = insn->size;
	memcpy(d->orig, c->code, d->len);
	ret = snprintf(d->text, sizeof(d->text), "%s%s%s", insn->mnemonic,
		       insn->op_str[0] ? " " : "", insn->op_str);
	if (ret < 0)
		d->text[0] = '\0';
	ret = check_refused(c);
	if (ret)
		return ret;
	if (is_relative_branch(c))
		return prepare_emulation(c);
	return prepare_xol(c, slot_addr);
}

/* One decoder for the process, opened at the first use and kept: a
   Capstone handle builds its table from instruction ids to their details
   (thousands of entries) at its first lookup, which a handle opened and
   closed per call rebuilt for every function patched, most of the
   decoding's cost at a start-up. heaptrace decodes from one thread. */
static int
open_decoder(struct ctx *c)
{
	static csh decoder;
	static bool open;
	if (!open) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &decoder) != CS_ERR_OK)
			return refuse(c, -ENOMEM,
				      "cannot start the Capstone decoder");
		cs_option(decoder, CS_OPT_DETAIL, CS_OPT_ON);
		open = true;
	}
	c->cs = decoder;
	return 0;
}

int
arch_displace(const uint8_t *code, size_t len, uint64_t addr,
	      uint64_t slot_addr, struct arch_displaced *out, char *err,
	      size_t errlen)
{
	struct ctx c = { .code = code, .addr = addr, .out = out, .err = err,
			 .errlen = errlen };
	cs_insn *insn;
	int ret;

	if (!code || !out || len == 0)
		return refuse(&c, -EINVAL, "no instruction bytes");
	memset(out, 0, sizeof(*out));
	if (len > ARCH_MAX_INSN)
		len = ARCH_MAX_INSN;
	ret = open_decoder(&c);
	if (ret)
		return ret;
	if (cs_disasm(c.cs, code, len, addr, 1, &insn) != 1) {
		ret = refuse(&c, -EILSEQ,
			     "undecodable instruction (first byte %02x) at %#llx",
			     code[0], (unsigned long long)addr);
	} else {
		c.insn = insn;
		ret = classify(&c, slot_addr);
		cs_free(insn, 1);
	}
	return ret;
}

/* Condition code CC (the low nibble of jcc) against EFLAGS FL: even codes
   test a condition, odd ones its negation. */
static bool
cond_holds(unsigned int cc, uint64_t fl)
{
	bool cf = fl & FL_CF, pf = fl & FL_PF, zf = fl & FL_ZF;
	bool sf = fl & FL_SF, of = fl & FL_OF;
	bool r;

	switch (cc >> 1) {
	case 0: r = of; break;             /* jo */
	case 1: r = cf; break;             /* jb */
	case 2: r = zf; break;             /* je */
	case 3: r = cf || zf; break;       /* jbe */
	case 4: r = sf; break;             /* js */
	case 5: r = pf; break;             /* jp */
	case 6: r = sf != of; break;       /* jl */
	default: r = zf || sf != of; break; /* jle */
	}
	return (cc & 1) ? !r : r;
}

int
arch_emulate(const struct arch_displaced *d, uint64_t addr,
	     struct user_regs_struct *regs, uint64_t *push)
{
	uint64_t next = addr + d->len;
	uint64_t target = next + (uint64_t)(int64_t)d->rel;

	if (d->kind != ARCH_DISPLACED_EMULATE)
		return -EINVAL;
	switch (d->op) {
	case ARCH_EMULATE_JMP:
		regs->rip = target;
		return 0;
	case ARCH_EMULATE_CALL:
		regs->rsp -= 8;
		*push = next;
		regs->rip = target;
		return 1;
	case ARCH_EMULATE_JCC:
		regs->rip = cond_holds(d->cond, regs->eflags) ? target : next;
		return 0;
	default:
		return -EINVAL;
	}
}

uint64_t
arch_xol_orig_pc(const struct arch_displaced *d, uint64_t addr,
		 uint64_t slot_addr, uint64_t pc)
{
	if (d->kind != ARCH_DISPLACED_XOL || pc < slot_addr ||
	    pc >= slot_addr + d->slot_len)
		return pc;
	/* Instructions complete or not at all: the only stops inside a slot
	   are before the copy and at the jump back. */
	return pc < slot_addr + d->len ? addr : addr + d->len;
}

/* Jump patches. Each instruction a patch covers goes through classify()
   at its own place in the copy, so the refusals and the RIP-relative
   fix-up are those of the XOL slots; relative branches, which a slot
   emulates, are re-encoded with a rel32 to the same target instead. */

/* Prefix ERR with where in the prologue its reason arose. */
static void
locate_reason(char *err, size_t errlen, size_t off)
{
	char buf[256];

	if (!err || !errlen)
		return;
	snprintf(buf, sizeof(buf), "%s", err);
	snprintf(err, errlen, "at +%zu: %s", off, buf);
}

/* An instruction control never falls through: jmp (direct or indirect),
   ret, ud2. Far transfers and iret are refused before this is asked. */
static bool
ends_flow(const struct ctx *c)
{
	switch (c->insn->id) {
	case X86_INS_JMP: case X86_INS_RET: case X86_INS_UD2:
	case X86_INS_UD2B:
		return true;
	default:
		return in_group(c, CS_GRP_RET);
	}
}

/* Append to R the relocated form of the relative branch C->out, which
   starts at DEST_ADDR + R->len: its prefixes (bnd, branch hints), then
   jmp, call or jcc rel32 to the same target. Returns its length or
   -ERANGE. */
static int
emit_branch(const struct ctx *c, struct arch_relocated *r,
	    uint64_t dest_addr)
{
	const struct arch_displaced *d = c->out;
	uint8_t *p = r->code + r->len;
	bool lock;
	size_t n = count_prefixes(c->code, d->len, &lock);
	int64_t rel;

	memcpy(p, c->code, n);
	switch (d->op) {
	case ARCH_EMULATE_JMP:
		p[n++] = 0xe9;
		break;
	case ARCH_EMULATE_CALL:
		p[n++] = 0xe8;
		break;
	default:
		p[n++] = 0x0f;
		p[n++] = (uint8_t)(0x80 | d->cond);
		break;
	}
	rel = (int64_t)(d->target - (dest_addr + r->len + n + 4));
	if (!fits_rel32(rel))
		return refuse(c, -ERANGE,
			      "%s: its target %#llx is out of rel32 reach of the copy at %#llx",
			      d->text, (unsigned long long)d->target,
			      (unsigned long long)dest_addr);
	put32(p + n, (uint32_t)rel);
	return (int)(n + 4);
}

/* Relocate the decoded instruction C->insn (at C->addr, C->code) to
   DEST_ADDR + R->len and append it, with its place, to R. */
static int
relocate_one(struct ctx *c, struct arch_relocated *r, uint64_t dest_addr)
{
	struct arch_displaced *d = c->out;
	struct arch_reloc_insn *ri = &r->insn[r->ninsn];
	size_t used = strlen(r->text);
	int n;

	/* Cannot happen within ARCH_PATCH_MAX (see arch.h); kept so that a
	   change of the limits fails here, not past CODE. */
	if (r->ninsn >= ARCH_PATCH_MAX ||
	    r->len + ARCH_MAX_INSN + 4 + JMP_ABS_LEN > ARCH_RELOC_MAX)
		return refuse(c, -EINVAL, "bug: relocated prologue too long");
	memset(d, 0, sizeof(*d));
	n = classify(c, dest_addr + r->len);
	if (n)
		return n;
	if (d->kind == ARCH_DISPLACED_EMULATE) {
		n = emit_branch(c, r, dest_addr);
		if (n < 0)
			return n;
	} else {
		/* The slot's copy, re-targeted for this very place; its
		   jump back is not taken. */
		memcpy(r->code + r->len, d->slot, d->len);
		n = (int)d->len;
		r->rip_relative |= d->rip_relative;
	}
	*ri = (struct arch_reloc_insn){
		.off = (uint8_t)r->covered,
		.len = (uint8_t)d->len,
		.new_off = (uint8_t)r->len,
		.new_len = (uint8_t)n,
	};
	r->ninsn++;
	r->len += (size_t)n;
	r->covered += d->len;
	snprintf(r->text + used, sizeof(r->text) - used, "%s%s",
		 used ? "; " : "", d->text);
	return 0;
}

/* The length of the padding instruction (a nop or int3) at CODE, ADDR,
   when it ends within ADDR's 16-byte block; else 0. */
static size_t
padding_len(struct ctx *c, cs_insn *insn, const uint8_t *code, size_t len,
	    uint64_t addr)
{
	const uint8_t *p = code;
	uint64_t a = addr;
	size_t n = len < ARCH_MAX_INSN ? len : ARCH_MAX_INSN;
	if (!n || !cs_disasm_iter(c->cs, &p, &n, &a, insn) ||
	    (insn->id != X86_INS_NOP && insn->id != X86_INS_INT3))
		return 0;
	return a <= ((addr | 15) + 1) ? insn->size : 0;
}

/* The body of arch_relocate_prologue, with the decoder open. */
static int
relocate_prologue(struct ctx *c, cs_insn *insn, const uint8_t *code,
		  size_t len, uint64_t addr, size_t min_bytes,
		  uint64_t dest_addr, struct arch_relocated *r)
{
	const struct arch_displaced *d = c->out;
	uint64_t target[ARCH_PATCH_MAX];
	bool has_target[ARCH_PATCH_MAX];
	char last[sizeof(d->text)] = "";

	while (r->covered < min_bytes) {
		size_t off = r->covered;
		const uint8_t *p = code + off;
		size_t n = len - off;
		uint64_t a = addr + off;
		int ret;

		if (r->ends) {
			/* A function as short as ld.so's _dl_debug_state
			   (a lone ret) is followed by alignment padding that
			   never runs: covering it is safe, up to the next
			   16-byte boundary, where the next function may
			   start. */
			size_t pad = padding_len(c, insn, code + off, len - off,
						 addr + off);
			if (!pad)
				return refuse(c, -ENOSPC,
					      "'%s' ends the function's flow before +%zu: the function is shorter than the %zu-byte patch",
					      last, off, min_bytes);
			r->covered += pad;
			continue;
		}
		if (r->call)
			return refuse(c, -ENOTSUP,
				      "'%s' is not the last instruction the patch covers: a thread inside its callee would return into the middle of the patch",
				      last);
		if (off >= len)
			return refuse(c, -ENOSPC,
				      "the function ends at +%zu: it is shorter than the %zu-byte patch",
				      off, min_bytes);
		if (n > ARCH_MAX_INSN)
			n = ARCH_MAX_INSN;
		if (!cs_disasm_iter(c->cs, &p, &n, &a, insn))
			return refuse(c, -EILSEQ,
				      "undecodable instruction (first byte %02x) at +%zu%s",
				      code[off], off,
				      len - off < ARCH_MAX_INSN ?
					      ", or truncated by the function's end" :
					      "");
		c->insn = insn;
		c->code = code + off;
		c->addr = addr + off;
		ret = relocate_one(c, r, dest_addr);
		if (ret) {
			locate_reason(c->err, c->errlen, off);
			return ret;
		}
		target[r->ninsn - 1] = d->target;
		has_target[r->ninsn - 1] =
			d->kind == ARCH_DISPLACED_EMULATE || d->rip_relative;
		r->ends = ends_flow(c);
		r->call = d->kind == ARCH_DISPLACED_EMULATE &&
			  d->op == ARCH_EMULATE_CALL;
		memcpy(last, d->text, sizeof(last));
	}
	memcpy(r->orig, code, r->covered);
	/* Only now is the range known; ADDR itself is a fine target. */
	for (size_t i = 0; i < r->ninsn; i++)
		if (has_target[i] && target[i] > addr &&
		    target[i] < addr + r->covered)
			return refuse(c, -ENOTSUP,
				      "at +%u: its target +%llu lies inside the %zu bytes the patch replaces",
				      r->insn[i].off,
				      (unsigned long long)(target[i] - addr),
				      r->covered);
	r->back_off = r->len;
	if (!r->ends)
		r->len += encode_jump(r->code + r->len, dest_addr + r->len,
				      addr + r->covered);
	return 0;
}

int
arch_relocate_prologue(const uint8_t *code, size_t len, uint64_t addr,
		       size_t min_bytes, uint64_t dest_addr,
		       struct arch_relocated *out, char *err, size_t errlen)
{
	struct arch_displaced d;
	struct ctx c = { .out = &d, .err = err, .errlen = errlen };
	cs_insn *insn;
	int ret;

	if (!code || !out || len == 0 || min_bytes == 0 ||
	    min_bytes > ARCH_PATCH_MAX)
		return refuse(&c, -EINVAL,
			      "no code, or a patch of %zu bytes (1 to %d)",
			      min_bytes, ARCH_PATCH_MAX);
	memset(out, 0, sizeof(*out));
	ret = open_decoder(&c);
	if (ret)
		return ret;
	insn = cs_malloc(c.cs);
	if (!insn) {
		ret = refuse(&c, -ENOMEM,
			     "cannot allocate a decoded instruction");
	} else {
		ret = relocate_prologue(&c, insn, code, len, addr, min_bytes,
					dest_addr, out);
		cs_free(insn, 1);
	}
	return ret;
}

/* Where INSN transfers control or points to, when it is a direct branch
   or has a RIP-relative operand. */
static bool
insn_target(csh cs, const cs_insn *insn, uint64_t *target)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = ip_relative_operand(x);

	if (op) {
		*target = insn->address + insn->size + (uint64_t)op->mem.disp;
		if (op->mem.base == X86_REG_EIP)
			*target = (uint32_t)*target;
		return true;
	}
	if ((cs_insn_group(cs, insn, CS_GRP_JUMP) ||
	     cs_insn_group(cs, insn, CS_GRP_CALL) ||
	     cs_insn_group(cs, insn, CS_GRP_BRANCH_RELATIVE) ||
	     insn->id == X86_INS_XBEGIN) &&
	    x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		*target = (uint64_t)x->operands[0].imm;
		return true;
	}
	return false;
}

int
arch_patch_range_is_safe(const uint8_t *func, size_t func_len,
			 uint64_t addr, size_t covered, char *err,
			 size_t errlen)
{
	struct ctx c = { .err = err, .errlen = errlen };
	const uint8_t *p = func;
	size_t n = func_len;
	uint64_t a = addr, t;
	cs_insn *insn;
	int ret = 0;

	if (!func || covered == 0 || covered > func_len)
		return refuse(&c, -EINVAL,
			      "a patch of %zu bytes over a function of %zu",
			      covered, func_len);
	ret = open_decoder(&c);
	if (ret)
		return ret;
	insn = cs_malloc(c.cs);
	if (!insn)
		ret = refuse(&c, -ENOMEM,
			     "cannot allocate a decoded instruction");
	while (insn && n > 0) {
		size_t off = (size_t)(p - func);

		if (!cs_disasm_iter(c.cs, &p, &n, &a, insn)) {
			ret = refuse(&c, -EILSEQ,
				     "undecodable byte %02x at +%zu: the rest of the function cannot be checked",
				     func[off], off);
			break;
		}
		if (insn_target(c.cs, insn, &t) && t > addr &&
		    t < addr + covered) {
			ret = refuse(&c, -ENOTSUP,
				     "'%s%s%s' at +%zu targets +%llu, inside the %zu bytes the patch replaces",
				     insn->mnemonic, insn->op_str[0] ? " " : "",
				     insn->op_str, off,
				     (unsigned long long)(t - addr), covered);
			break;
		}
	}
	if (insn)
		cs_free(insn, 1);
	return ret;
}

int
arch_encode_patch_jump(uint64_t from, uint64_t to, uint8_t *out)
{
	int64_t rel = (int64_t)(to - (from + JMP_REL32_LEN));

	if (!fits_rel32(rel))
		return -ERANGE;
	encode_jump(out, from, to);
	return 0;
}

int
arch_relocated_pc_to_copy(const struct arch_relocated *r, uint64_t addr,
			  uint64_t dest_addr, uint64_t pc, uint64_t *out)
{
	*out = pc;
	if (pc < addr || pc >= addr + r->covered)
		return 0;
	for (size_t i = 0; i < r->ninsn; i++)
		if (pc == addr + r->insn[i].off) {
			*out = dest_addr + r->insn[i].new_off;
			return 1;
		}
	return -EINVAL;
}

int
arch_relocated_pc_to_orig(const struct arch_relocated *r, uint64_t addr,
			  uint64_t dest_addr, uint64_t pc, uint64_t *out)
{
	*out = pc;
	if (pc < dest_addr || pc >= dest_addr + r->len)
		return 0;
	if (!r->ends && pc == dest_addr + r->back_off) {
		*out = addr + r->covered;
		return 1;
	}
	for (size_t i = 0; i < r->ninsn; i++)
		if (pc == dest_addr + r->insn[i].new_off) {
			*out = addr + r->insn[i].off;
			return 1;
		}
	return -EINVAL;
}

int
arch_find_syscall(const uint8_t *code, size_t len, uint64_t addr,
		  uint64_t *at)
{
	struct arch_displaced d;
	char err[8];
	struct ctx c = { .out = &d, .err = err, .errlen = sizeof(err) };
	int ret = open_decoder(&c);
	if (ret)
		return ret;
	cs_insn *insn = cs_malloc(c.cs);
	const uint8_t *p = code;
	size_t n = len;
	uint64_t a = addr;
	ret = -ENOENT;
	while (insn && n > 0) {
		uint64_t here = a;
		if (!cs_disasm_iter(c.cs, &p, &n, &a, insn))
			break;
		if (insn->id == X86_INS_SYSCALL) {
			*at = here;
			ret = 0;
			break;
		}
	}
	if (insn)
		cs_free(insn, 1);
	return ret;
}

/* Length of an indirect call FF /2 whose ModRM byte is CODE[0] (with up
   to AVAIL bytes from there): ModRM, SIB, displacement. 0 when it is not
   one (another FF group member). */
static size_t
ff2_len(const uint8_t *code, size_t avail)
{
	uint8_t modrm = code[0];
	unsigned mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
	if (reg != 2)
		return 0;
	size_t len = 1;
	if (mod != 3 && rm == 4) {
		if (avail < 2)
			return 0;
		len++;
		if (mod == 0 && (code[1] & 7) == 5)
			len += 4; /* SIB with no base: disp32 */
	}
	if (mod == 1)
		len += 1;
	else if (mod == 2 || (mod == 0 && rm == 5))
		len += 4; /* disp32, or RIP-relative */
	return len;
}

/* Most distance a direct call is believed to span: a rel32 beyond it is
   taken for other bytes. Calls stay inside their object (a PLT entry
   for another one's functions), and text sections are far smaller. */
#define CALL_REACH (1 << 27)

size_t
arch_guess_call_returns(const uint8_t *code, size_t len, uint64_t addr,
			uint64_t *out, size_t max)
{
	size_t k = 0;
	for (size_t i = 0; i < len && k < max; i++) {
		if (code[i] == 0xe8 && i + 5 <= len) { /* call rel32 */
			int32_t rel;
			memcpy(&rel, code + i + 1, sizeof(rel));
			if (rel < CALL_REACH && rel > -CALL_REACH)
				out[k++] = addr + i + 5;
			continue;
		}
		size_t j = (code[i] & 0xf0) == 0x40 ? i + 1 : i; /* REX */
		if (j + 1 < len && code[j] == 0xff) { /* call r/m64 */
			size_t n = ff2_len(code + j + 1, len - j - 1);
			if (n && j + 1 + n <= len)
				out[k++] = addr + j + 1 + n;
		}
	}
	return k;
}
