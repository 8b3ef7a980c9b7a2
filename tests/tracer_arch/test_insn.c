/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arch_displace and arch_emulate without running the result: hand-assembled
   instructions with answers worked out by hand, the allocator entry points
   of this machine's libc.so.6 and libstdc++.so.6 read from disk, and jcc
   emulation compared with the CPU's own setcc for every flag combination.
   Slots are checked by re-deriving absolute targets from their bytes, never
   by asking the decoder again. */
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/tracer_arch/bytes.h"
#include "tracer/arch/arch.h"
#include "tracer/target/elfsym.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

#define ADDR 0x7f1200100000ull /* where the hand-assembled code "is" */
#define SLOT 0x7f1200000000ull /* its scratch slot, 1 MiB below */
#define BIAS 0x7f3a00000000ull /* where the real libraries "are" */
#define GIB (1ull << 30)

#define CF (1u << 0)
#define PF (1u << 2)
#define ZF (1u << 6)
#define SF (1u << 7)
#define OF (1u << 11)


/* Displace N bytes of CODE followed by nops, as a real 15-byte read would
   see them, so that the decoder must find the length itself. */
static int
displace(const uint8_t *code, size_t n, uint64_t addr, uint64_t slot,
	 struct arch_displaced *d, char *err, size_t errlen)
{
	uint8_t buf[ARCH_MAX_INSN];

	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, code, n);
	return arch_displace(buf, sizeof(buf), addr, slot, d, err, errlen);
}

/* The slot's tail, after the copy, transfers to ADDR + len. */
static bool
jumps_back(const struct arch_displaced *d, uint64_t addr, uint64_t slot)
{
	const uint8_t *p = d->slot + d->len;

	if (d->slot_len == d->len + 5 && p[0] == 0xe9)
		return plus(slot + d->len + 5, get32(p + 1)) == addr + d->len;
	if (d->slot_len == d->len + 14 && p[0] == 0xff && p[1] == 0x25 &&
	    get32(p + 2) == 0)
		return get64(p + 6) == addr + d->len;
	return false;
}

/* Where the copy differs from the original: -1 nowhere; K when only the
   four bytes at K differ and, read as a disp32, give the same absolute
   target from SLOT as the original from ADDR; -2 otherwise. */
static int
retarget_offset(const struct arch_displaced *d, uint64_t addr, uint64_t slot)
{
	if (memcmp(d->slot, d->orig, d->len) == 0)
		return -1;
	for (size_t k = 1; k + 4 <= d->len; k++) {
		if (memcmp(d->slot, d->orig, k) != 0 ||
		    memcmp(d->slot + k + 4, d->orig + k + 4,
			   d->len - k - 4) != 0)
			continue;
		if (plus(addr + d->len, get32(d->orig + k)) ==
		    plus(slot + d->len, get32(d->slot + k)))
			return (int)k;
	}
	return -2;
}

struct xol_case {
	const char *name;
	uint8_t code[ARCH_MAX_INSN];
	size_t len;
	int disp_off; /* -1: not RIP-relative */
};

static const struct xol_case xol_cases[] = {
	{ "push r12", { 0x41, 0x54 }, 2, -1 },
	{ "endbr64", { 0xf3, 0x0f, 0x1e, 0xfa }, 4, -1 },
	{ "cmp byte [rip+0x123456], 0",
	  { 0x80, 0x3d, 0x56, 0x34, 0x12, 0x00, 0x00 }, 7, 2 },
	{ "cmp byte [rip-0x2000], 7",
	  { 0x80, 0x3d, 0x00, 0xe0, 0xff, 0xff, 0x07 }, 7, 2 },
	{ "mov dword [rip+0x10], 0x12345678",
	  { 0xc7, 0x05, 0x10, 0, 0, 0, 0x78, 0x56, 0x34, 0x12 }, 10, 2 },
	{ "lea rax, [rip+0x10]", { 0x48, 0x8d, 0x05, 0x10, 0, 0, 0 }, 7, 3 },
	{ "vmovdqa xmm0, [rip+0x10]",
	  { 0xc5, 0xf9, 0x6f, 0x05, 0x10, 0, 0, 0 }, 8, 4 },
	{ "mov rax, fs:[rip+0x10]",
	  { 0x64, 0x48, 0x8b, 0x05, 0x10, 0, 0, 0 }, 8, 4 },
	{ "jmp qword [rip+0x10]", { 0xff, 0x25, 0x10, 0, 0, 0 }, 6, 2 },
	{ "mov eax, [0x10] (SIB, absolute)",
	  { 0x8b, 0x04, 0x25, 0x10, 0, 0, 0 }, 7, -1 },
	{ "mov rax, [rsp+8]", { 0x48, 0x8b, 0x44, 0x24, 0x08 }, 5, -1 },
	{ "test rdi, rdi", { 0x48, 0x85, 0xff }, 3, -1 },
	{ "sub rsp, 0x10", { 0x48, 0x83, 0xec, 0x10 }, 4, -1 },
	{ "ret", { 0xc3 }, 1, -1 },
	{ "ret 8", { 0xc2, 0x08, 0x00 }, 3, -1 },
	{ "jmp rax", { 0xff, 0xe0 }, 2, -1 },
	{ "notrack jmp rax", { 0x3e, 0xff, 0xe0 }, 3, -1 },
	{ "ud2", { 0x0f, 0x0b }, 2, -1 },
};

static void
check_xol_case(const struct xol_case *c, uint64_t slot)
{
	struct arch_displaced d;
	char err[256] = "";
	int ret = displace(c->code, c->len, ADDR, slot, &d, err, sizeof(err));

	CHECK(ret == 0, "%s: %d %s", c->name, ret, err);
	if (ret)
		return;
	CHECK(d.kind == ARCH_DISPLACED_XOL, "%s", c->name);
	CHECK(d.len == c->len, "%s: len %zu", c->name, d.len);
	CHECK(memcmp(d.orig, c->code, c->len) == 0, "%s", c->name);
	CHECK(d.slot_len == d.len + 5, "%s: slot_len %zu", c->name,
	      d.slot_len);
	CHECK(jumps_back(&d, ADDR, slot), "%s", c->name);
	CHECK(retarget_offset(&d, ADDR, slot) == c->disp_off, "%s: %d",
	      c->name, retarget_offset(&d, ADDR, slot));
	CHECK(d.rip_relative == (c->disp_off >= 0), "%s", c->name);
	CHECK(d.text[0] != '\0', "%s", c->name);
}

/* Exact bytes for the two cases in the brief, computed by hand. */
static void
test_xol_exact(void)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 };
	static const uint8_t cmp[] = { 0x80, 0x3d, 0x56, 0x34, 0x12, 0x00,
				       0x00 };
	/* rel = (ADDR + 2) - (SLOT + 2 + 5) = 0x100000 - 5 */
	static const uint8_t push_slot[] = { 0x41, 0x54, 0xe9, 0xfb, 0xff,
					     0x0f, 0x00 };
	/* disp = 0x123456 + (ADDR - SLOT) = 0x223456; rel = 0x100000 - 5 */
	static const uint8_t cmp_slot[] = { 0x80, 0x3d, 0x56, 0x34, 0x22,
					    0x00, 0x00, 0xe9, 0xfb, 0xff,
					    0x0f, 0x00 };
	struct arch_displaced d;

	CHECK(displace(push_r12, 2, ADDR, SLOT, &d, NULL, 0) == 0, "push");
	CHECK(d.slot_len == sizeof(push_slot) &&
	      memcmp(d.slot, push_slot, sizeof(push_slot)) == 0, "push slot");
	CHECK(strcmp(d.text, "push r12") == 0, "text '%s'", d.text);
	CHECK(displace(cmp, 7, ADDR, SLOT, &d, NULL, 0) == 0, "cmp");
	CHECK(d.slot_len == sizeof(cmp_slot) &&
	      memcmp(d.slot, cmp_slot, sizeof(cmp_slot)) == 0, "cmp slot");
	/* target = slot + len + new_disp == addr + len + old_disp */
	CHECK(SLOT + 7 + 0x223456 == ADDR + 7 + 0x123456, "arithmetic");
}

static void
test_xol_cases(void)
{
	for (size_t i = 0; i < sizeof(xol_cases) / sizeof(xol_cases[0]); i++) {
		check_xol_case(&xol_cases[i], SLOT);
		check_xol_case(&xol_cases[i], ADDR + GIB);
	}
	test_xol_exact();
}

/* A slot more than 2 GiB away: plain instructions get an absolute jump
   back, RIP-relative ones are refused. */
static void
test_far_slot(void)
{
	for (size_t i = 0; i < sizeof(xol_cases) / sizeof(xol_cases[0]); i++) {
		const struct xol_case *c = &xol_cases[i];
		uint64_t slots[] = { ADDR + 3 * GIB, ADDR - 3 * GIB };

		for (size_t j = 0; j < 2; j++) {
			struct arch_displaced d;
			char err[256] = "";
			int ret = displace(c->code, c->len, ADDR, slots[j], &d,
					   err, sizeof(err));

			if (c->disp_off >= 0) {
				CHECK(ret == -ERANGE, "%s: %d", c->name, ret);
				CHECK(strstr(err, "reach"), "%s: '%s'",
				      c->name, err);
				continue;
			}
			CHECK(ret == 0, "%s: %d %s", c->name, ret, err);
			CHECK(d.slot_len == c->len + 14, "%s: %zu", c->name,
			      d.slot_len);
			CHECK(jumps_back(&d, ADDR, slots[j]), "%s", c->name);
			CHECK(retarget_offset(&d, ADDR, slots[j]) == -1, "%s",
			      c->name);
		}
	}
}

/* The edges of rel32 reach, for the jump back and for the displacement. */
static void
test_reach_edges(void)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 };
	static const uint8_t cmp0[] = { 0x80, 0x3d, 0, 0, 0, 0, 0x00 };
	const uint64_t two_gib = 1ull << 31;
	struct arch_displaced d;

	/* jump back: rel = (ADDR + 2) - (slot + 7) */
	CHECK(displace(push_r12, 2, ADDR, ADDR - 5 - INT32_MAX, &d, NULL, 0) ==
		      0 && d.slot_len == 7 && get32(d.slot + 3) == INT32_MAX,
	      "rel INT32_MAX");
	CHECK(displace(push_r12, 2, ADDR, ADDR - 6 - INT32_MAX, &d, NULL, 0) ==
		      0 && d.slot_len == 16 &&
		      jumps_back(&d, ADDR, ADDR - 6 - INT32_MAX),
	      "rel INT32_MAX + 1");
	CHECK(displace(push_r12, 2, ADDR, ADDR - 5 + two_gib, &d, NULL, 0) ==
		      0 && d.slot_len == 7 && get32(d.slot + 3) == INT32_MIN,
	      "rel INT32_MIN");
	CHECK(displace(push_r12, 2, ADDR, ADDR - 4 + two_gib, &d, NULL, 0) ==
		      0 && d.slot_len == 16,
	      "rel INT32_MIN - 1");
	/* displacement: new = ADDR - slot */
	CHECK(displace(cmp0, 7, ADDR, ADDR - INT32_MAX, &d, NULL, 0) == 0 &&
		      get32(d.slot + 2) == INT32_MAX,
	      "disp INT32_MAX");
	CHECK(displace(cmp0, 7, ADDR, ADDR - INT32_MAX - 1, &d, NULL, 0) ==
		      -ERANGE,
	      "disp INT32_MAX + 1");
	CHECK(displace(cmp0, 7, ADDR, ADDR + two_gib + 1, &d, NULL, 0) ==
		      -ERANGE,
	      "disp INT32_MIN - 1");
	/* in reach of the data but not of ADDR + 7 + 5: both fix-ups at once */
	CHECK(displace(cmp0, 7, ADDR, ADDR + two_gib, &d, NULL, 0) == 0 &&
		      get32(d.slot + 2) == INT32_MIN && d.slot_len == 21 &&
		      jumps_back(&d, ADDR, ADDR + two_gib),
	      "disp INT32_MIN, absolute jump back");
}

struct refused_case {
	const char *name;
	uint8_t code[ARCH_MAX_INSN];
	size_t len;
	int ret;
	const char *why; /* a word the reason must contain */
};

static const struct refused_case refused_cases[] = {
	{ "syscall", { 0x0f, 0x05 }, 2, -ENOTSUP, "system call" },
	{ "sysenter", { 0x0f, 0x34 }, 2, -ENOTSUP, "system call" },
	{ "int 0x80", { 0xcd, 0x80 }, 2, -ENOTSUP, "interrupt" },
	{ "int1", { 0xf1 }, 1, -ENOTSUP, "interrupt" },
	{ "int3", { 0xcc }, 1, -ENOTSUP, "breakpoint" },
	{ "lock add qword [rax], 1", { 0xf0, 0x48, 0x83, 0x00, 0x01 }, 5,
	  -ENOTSUP, "LOCK" },
	{ "lock add qword [rip+0x10], 1",
	  { 0xf0, 0x48, 0x83, 0x05, 0x10, 0, 0, 0, 0x01 }, 9, -ENOTSUP,
	  "LOCK" },
	{ "xacquire lock add qword [rax], 1",
	  { 0xf2, 0xf0, 0x48, 0x83, 0x00, 0x01 }, 6, -ENOTSUP, "LOCK" },
	{ "hlt", { 0xf4 }, 1, -ENOTSUP, "privileged" },
	{ "cli", { 0xfa }, 1, -ENOTSUP, "privileged" },
	{ "rdmsr", { 0x0f, 0x32 }, 2, -ENOTSUP, "privileged" },
	{ "in al, dx", { 0xec }, 1, -ENOTSUP, "privileged" },
	{ "iretq", { 0x48, 0xcf }, 2, -ENOTSUP, "privileged" },
	{ "sysret", { 0x0f, 0x07 }, 2, -ENOTSUP, "privileged" },
	{ "call rax", { 0xff, 0xd0 }, 2, -ENOTSUP, "indirect call" },
	{ "call qword [rip+0x10]", { 0xff, 0x15, 0x10, 0, 0, 0 }, 6,
	  -ENOTSUP, "indirect call" },
	{ "lcall [rip]", { 0xff, 0x1d, 0, 0, 0, 0 }, 6, -ENOTSUP, "far" },
	{ "ljmp [rip]", { 0xff, 0x2d, 0, 0, 0, 0 }, 6, -ENOTSUP, "far" },
	{ "retf", { 0xcb }, 1, -ENOTSUP, "far" },
	{ "xbegin", { 0xc7, 0xf8, 0x10, 0, 0, 0 }, 6, -ENOTSUP, "abort" },
	{ "loop", { 0xe2, 0xfe }, 2, -ENOTSUP, "loop" },
	{ "jrcxz", { 0xe3, 0xfe }, 2, -ENOTSUP, "jrcxz" },
	{ "jmp rel16", { 0x66, 0xe9, 0x10, 0x00 }, 4, -ENOTSUP, "prefix" },
	{ "rex.w jmp rel32", { 0x48, 0xe9, 0x10, 0, 0, 0 }, 6, -ENOTSUP,
	  "not emulated" },
	{ "lea eax, [eip+0x10]", { 0x67, 0x8d, 0x05, 0x10, 0, 0, 0 }, 7,
	  -ENOTSUP, "EIP" },
	{ "into (invalid in 64-bit mode)", { 0xce }, 1, -EILSEQ,
	  "undecodable" },
};

static void
test_refused(void)
{
	for (size_t i = 0; i < sizeof(refused_cases) / sizeof(refused_cases[0]);
	     i++) {
		const struct refused_case *c = &refused_cases[i];
		struct arch_displaced d;
		char err[256] = "";
		int ret = displace(c->code, c->len, ADDR, SLOT, &d, err,
				   sizeof(err));

		CHECK(ret == c->ret, "%s: %d (%s)", c->name, ret, err);
		CHECK(strstr(err, c->why), "%s: reason '%s' lacks '%s'",
		      c->name, err, c->why);
		/* No buffer for the reason is fine too. */
		CHECK(displace(c->code, c->len, ADDR, SLOT, &d, NULL, 0) ==
			      c->ret, "%s without err", c->name);
	}
}

static void
test_bad_input(void)
{
	static const uint8_t jmp[] = { 0xe9, 0x10, 0x00, 0x00, 0x00 };
	struct arch_displaced d;
	char err[128] = "";

	CHECK(arch_displace(jmp, 3, ADDR, SLOT, &d, err, sizeof(err)) ==
		      -EILSEQ, "truncated: %s", err);
	CHECK(arch_displace(jmp, 0, ADDR, SLOT, &d, err, sizeof(err)) ==
		      -EINVAL, "empty");
	CHECK(arch_displace(NULL, 5, ADDR, SLOT, &d, err, sizeof(err)) ==
		      -EINVAL, "NULL");
	CHECK(arch_displace(jmp, 5, ADDR, SLOT, &d, err, 1) == 0 &&
		      d.kind == ARCH_DISPLACED_EMULATE, "exact length");
}

/* The CPU's verdict on condition CC under flags FL, by setcc. The red zone
   is stepped over before pushing the flags. */
#define SETCC(cc)                                                           \
	static int setcc_##cc(uint64_t fl)                                  \
	{                                                                   \
		uint8_t r;                                                  \
		__asm__("sub $128, %%rsp\n\t"                               \
			"pushq %1\n\t"                                      \
			"popfq\n\t"                                         \
			"set" #cc " %0\n\t"                                 \
			"add $128, %%rsp"                                   \
			: "=q"(r)                                           \
			: "r"(fl)                                           \
			: "cc");                                            \
		return r;                                                   \
	}
SETCC(o) SETCC(no) SETCC(b) SETCC(ae) SETCC(e) SETCC(ne) SETCC(be) SETCC(a)
SETCC(s) SETCC(ns) SETCC(p) SETCC(np) SETCC(l) SETCC(ge) SETCC(le) SETCC(g)

static int (*const setcc[16])(uint64_t) = {
	setcc_o, setcc_no, setcc_b, setcc_ae, setcc_e, setcc_ne, setcc_be,
	setcc_a, setcc_s, setcc_ns, setcc_p, setcc_np, setcc_l, setcc_ge,
	setcc_le, setcc_g,
};

/* Bit I of M picks flag I of CF, PF, ZF, SF, OF; bit 1 is always set. */
static uint64_t
flags_of(unsigned int m)
{
	static const uint32_t bit[] = { CF, PF, ZF, SF, OF };
	uint64_t fl = 0x2;

	for (int i = 0; i < 5; i++)
		if (m & (1u << i))
			fl |= bit[i];
	return fl;
}

static void
fake_regs(struct user_regs_struct *r, uint64_t eflags)
{
	memset(r, 0x5a, sizeof(*r));
	r->rip = ADDR + 1;
	r->rsp = 0x7ffd12345678;
	r->eflags = eflags;
}

struct emu_case {
	const char *name;
	uint8_t code[ARCH_MAX_INSN];
	size_t len;
	enum arch_emulate_op op;
	uint8_t cond;
	int32_t rel;
};

static const struct emu_case emu_cases[] = {
	{ "jmp rel32", { 0xe9, 0x00, 0x01, 0, 0 }, 5, ARCH_EMULATE_JMP, 0,
	  0x100 },
	{ "jmp rel32 to itself", { 0xe9, 0xfb, 0xff, 0xff, 0xff }, 5,
	  ARCH_EMULATE_JMP, 0, -5 },
	{ "jmp rel8 to itself", { 0xeb, 0xfe }, 2, ARCH_EMULATE_JMP, 0, -2 },
	{ "jmp rel8 +127", { 0xeb, 0x7f }, 2, ARCH_EMULATE_JMP, 0, 127 },
	{ "bnd jmp rel32", { 0xf2, 0xe9, 0x10, 0, 0, 0 }, 6,
	  ARCH_EMULATE_JMP, 0, 0x10 },
	{ "call rel32", { 0xe8, 0x10, 0, 0, 0 }, 5, ARCH_EMULATE_CALL, 0,
	  0x10 },
	{ "call rel32 -2 GiB", { 0xe8, 0, 0, 0, 0x80 }, 5, ARCH_EMULATE_CALL,
	  0, INT32_MIN },
	{ "je rel8", { 0x74, 0x10 }, 2, ARCH_EMULATE_JCC, 4, 0x10 },
	{ "jg rel8 back", { 0x7f, 0xf0 }, 2, ARCH_EMULATE_JCC, 15, -16 },
	{ "ds-hinted je rel8", { 0x3e, 0x74, 0x10 }, 3, ARCH_EMULATE_JCC, 4,
	  0x10 },
	{ "jo rel32", { 0x0f, 0x80, 0x00, 0x10, 0, 0 }, 6, ARCH_EMULATE_JCC,
	  0, 0x1000 },
	{ "jne rel32", { 0x0f, 0x85, 0x78, 0x56, 0x34, 0x12 }, 6,
	  ARCH_EMULATE_JCC, 5, 0x12345678 },
};

static void
check_emulate(const struct emu_case *c, const struct arch_displaced *d)
{
	uint64_t target = plus(ADDR + c->len, c->rel), push = 0;
	struct user_regs_struct r, want;

	for (unsigned int m = 0; m < 32; m++) {
		fake_regs(&r, flags_of(m));
		want = r;
		want.rip = target;
		switch (c->op) {
		case ARCH_EMULATE_JMP:
			CHECK(arch_emulate(d, ADDR, &r, &push) == 0, "%s",
			      c->name);
			break;
		case ARCH_EMULATE_CALL:
			want.rsp -= 8;
			CHECK(arch_emulate(d, ADDR, &r, &push) == 1, "%s",
			      c->name);
			CHECK(push == ADDR + c->len, "%s: push %#llx", c->name,
			      (unsigned long long)push);
			break;
		default:
			if (!setcc[c->cond](r.eflags))
				want.rip = ADDR + c->len;
			CHECK(arch_emulate(d, ADDR, &r, &push) == 0, "%s",
			      c->name);
			break;
		}
		CHECK(memcmp(&r, &want, sizeof(r)) == 0,
		      "%s flags %#llx: rip %#llx want %#llx", c->name,
		      (unsigned long long)flags_of(m),
		      (unsigned long long)r.rip, (unsigned long long)want.rip);
	}
}

static void
test_emulate_cases(void)
{
	for (size_t i = 0; i < sizeof(emu_cases) / sizeof(emu_cases[0]); i++) {
		const struct emu_case *c = &emu_cases[i];
		struct arch_displaced d;
		char err[256] = "";
		int ret = displace(c->code, c->len, ADDR, SLOT, &d, err,
				   sizeof(err));

		CHECK(ret == 0, "%s: %d %s", c->name, ret, err);
		if (ret)
			continue;
		CHECK(d.kind == ARCH_DISPLACED_EMULATE && d.op == c->op &&
			      d.len == c->len && d.rel == c->rel &&
			      (c->op != ARCH_EMULATE_JCC || d.cond == c->cond),
		      "%s: kind %d op %d len %zu rel %d cond %u", c->name,
		      d.kind, d.op, d.len, d.rel, d.cond);
		CHECK(d.slot_len == 0, "%s", c->name);
		check_emulate(c, &d);
	}
}

/* Every condition code, decoded from its own opcode, against setcc. */
static void
test_all_conditions(void)
{
	for (uint8_t cc = 0; cc < 16; cc++) {
		struct emu_case c = { "jcc", { (uint8_t)(0x70 | cc), 0x20 },
				      2, ARCH_EMULATE_JCC, cc, 0x20 };
		struct emu_case c32 = { "jcc rel32",
					{ 0x0f, (uint8_t)(0x80 | cc), 0xe0,
					  0xff, 0xff, 0xff },
					6, ARCH_EMULATE_JCC, cc, -0x20 };
		struct arch_displaced d;

		CHECK(displace(c.code, c.len, ADDR, SLOT, &d, NULL, 0) == 0 &&
			      d.cond == cc, "cc %u", cc);
		check_emulate(&c, &d);
		CHECK(displace(c32.code, c32.len, ADDR, SLOT, &d, NULL, 0) ==
			      0 && d.cond == cc, "cc32 %u", cc);
		check_emulate(&c32, &d);
	}
}

static void
test_emulate_refuses_xol(void)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 };
	struct arch_displaced d;
	struct user_regs_struct r;
	uint64_t push;

	fake_regs(&r, 0x2);
	CHECK(displace(push_r12, 2, ADDR, SLOT, &d, NULL, 0) == 0, "push");
	CHECK(arch_emulate(&d, ADDR, &r, &push) == -EINVAL, "emulate XOL");
}

static void
test_orig_pc(void)
{
	static const uint8_t push_r12[] = { 0x41, 0x54 };
	static const uint8_t jmp[] = { 0xeb, 0xfe };
	struct arch_displaced d;

	CHECK(displace(push_r12, 2, ADDR, SLOT, &d, NULL, 0) == 0, "push");
	CHECK(arch_xol_orig_pc(&d, ADDR, SLOT, SLOT) == ADDR, "at copy");
	CHECK(arch_xol_orig_pc(&d, ADDR, SLOT, SLOT + 2) == ADDR + 2,
	      "at jump back");
	CHECK(arch_xol_orig_pc(&d, ADDR, SLOT, SLOT + 7) == SLOT + 7,
	      "past slot");
	CHECK(arch_xol_orig_pc(&d, ADDR, SLOT, SLOT - 1) == SLOT - 1,
	      "before slot");
	CHECK(displace(jmp, 2, ADDR, SLOT, &d, NULL, 0) == 0, "jmp");
	CHECK(arch_xol_orig_pc(&d, ADDR, SLOT, SLOT) == SLOT, "emulated");
}

/* Real entry points. LEN and PREFIX are what Debian 12 ships (glibc 2.36,
   libstdc++ 6.0.30, tracing-techniques.md §1.6), checked only there;
   SECOND_JMP: the instruction after endbr64 is a tail jmp rel32. */
struct entry {
	const char *name;
	size_t len;
	const char *prefix;
	bool rip_relative;
	bool second_jmp;
};

static const struct entry libc_entries[] = {
	{ "malloc", 2, "\x41\x54", false, false },
	{ "free", 3, "\x48\x85\xff", false, false },
	{ "calloc", 2, "\x41\x55", false, false },
	{ "realloc", 2, "\x41\x57", false, false },
	{ "memalign", 7, "\x80\x3d", true, false },
	{ "posix_memalign", 7, "\x80\x3d", true, false },
	{ "aligned_alloc", 7, "\x80\x3d", true, false },
	{ "valloc", 7, "\x80\x3d", true, false },
	{ "pvalloc", 7, "\x80\x3d", true, false },
	{ "reallocarray", 3, "\x48\x89\xf0", false, false },
	{ "__libc_malloc", 2, "\x41\x54", false, false },
	{ "__libc_free", 3, "\x48\x85\xff", false, false },
	{ "__libc_calloc", 2, "\x41\x55", false, false },
	{ "__libc_realloc", 2, "\x41\x57", false, false },
	{ "__libc_memalign", 7, "\x80\x3d", true, false },
	{ "__libc_valloc", 7, "\x80\x3d", true, false },
	{ "__libc_pvalloc", 7, "\x80\x3d", true, false },
	{ "malloc_usable_size", 0, NULL, false, false },
};

#define ENDBR64 "\xf3\x0f\x1e\xfa"
static const struct entry libstdcxx_entries[] = {
	{ "_Znwm", 4, ENDBR64, false, false },
	{ "_Znam", 4, ENDBR64, false, true },
	{ "_ZnwmRKSt9nothrow_t", 4, ENDBR64, false, false },
	{ "_ZnamRKSt9nothrow_t", 4, ENDBR64, false, false },
	{ "_ZnwmSt11align_val_t", 4, ENDBR64, false, false },
	{ "_ZnamSt11align_val_t", 4, ENDBR64, false, true },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", 4, ENDBR64, false, false },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", 4, ENDBR64, false, false },
	{ "_ZdlPv", 4, ENDBR64, false, true },
	{ "_ZdaPv", 4, ENDBR64, false, true },
	{ "_ZdlPvm", 4, ENDBR64, false, true },
	{ "_ZdaPvm", 4, ENDBR64, false, true },
	{ "_ZdlPvRKSt9nothrow_t", 4, ENDBR64, false, true },
	{ "_ZdaPvRKSt9nothrow_t", 4, ENDBR64, false, true },
	{ "_ZdlPvSt11align_val_t", 4, ENDBR64, false, true },
	{ "_ZdaPvSt11align_val_t", 4, ENDBR64, false, true },
	{ "_ZdlPvmSt11align_val_t", 4, ENDBR64, false, false },
	{ "_ZdaPvmSt11align_val_t", 4, ENDBR64, false, false },
};

/* Displace the instruction at VADDR + BIAS into a slot 2 MiB below the
   object and check the slot; then with a slot 3 GiB above. Returns the
   displaced instruction in *D. */
static int
check_real(const char *what, const uint8_t *code, size_t n, uint64_t vaddr,
	   struct arch_displaced *d)
{
	uint64_t addr = BIAS + vaddr, slot = BIAS - (2u << 20);
	uint64_t far = addr + 3 * GIB;
	struct arch_displaced fd;
	char err[256] = "";
	int ret = arch_displace(code, n, addr, slot, d, err, sizeof(err));

	CHECK(ret == 0, "%s: %d %s", what, ret, err);
	if (ret)
		return ret;
	if (d->kind == ARCH_DISPLACED_EMULATE)
		return 0;
	CHECK(jumps_back(d, addr, slot), "%s", what);
	CHECK((retarget_offset(d, addr, slot) >= 0) == d->rip_relative &&
		      retarget_offset(d, addr, slot) != -2,
	      "%s: %s", what, d->text);
	ret = arch_displace(code, n, addr, far, &fd, err, sizeof(err));
	if (d->rip_relative) {
		CHECK(ret == -ERANGE, "%s far: %d", what, ret);
	} else {
		CHECK(ret == 0 && fd.slot_len == fd.len + 14 &&
			      jumps_back(&fd, addr, far),
		      "%s far: %d %s", what, ret, err);
	}
	return 0;
}

static void
check_entry(struct elf_object *obj, const struct entry *e, bool known,
	    int *nrip)
{
	uint8_t code[ARCH_MAX_INSN];
	struct arch_displaced d, d2;
	uint64_t vaddr;
	int n;

	CHECK(elf_object_lookup(obj, e->name, &vaddr) == 0, "%s", e->name);
	n = elf_object_read(obj, vaddr, code, sizeof(code));
	CHECK(n == (int)sizeof(code), "%s: read %d", e->name, n);
	if (n <= 0 || check_real(e->name, code, (size_t)n, vaddr, &d))
		return;
	CHECK(d.kind == ARCH_DISPLACED_XOL, "%s: %s", e->name, d.text);
	*nrip += d.rip_relative;
	if (known && e->len)
		CHECK(d.len == e->len && d.rip_relative == e->rip_relative &&
			      memcmp(d.orig, e->prefix, strlen(e->prefix)) == 0,
		      "%s: len %zu rip %d '%s'", e->name, d.len,
		      d.rip_relative, d.text);
	if (d.len != 4 || memcmp(d.orig, ENDBR64, 4) != 0)
		return;
	/* After endbr64 comes the real prologue, or a tail call: that one
	   must be emulated, with the rel32 that is in the file. */
	if (check_real(e->name, code + d.len, (size_t)n - d.len,
		       vaddr + d.len, &d2) || !known || !e->second_jmp)
		return;
	CHECK(d2.kind == ARCH_DISPLACED_EMULATE && d2.op == ARCH_EMULATE_JMP &&
		      d2.len == 5 && d2.rel == get32(code + d.len + 1),
	      "%s second: %s", e->name, d2.text);
}

/* free's second instruction, je rel32, from the file: emulated as jcc. */
static void
check_free_je(struct elf_object *obj)
{
	uint8_t code[2 * ARCH_MAX_INSN];
	struct arch_displaced d;
	uint64_t vaddr;
	int n;

	if (elf_object_lookup(obj, "free", &vaddr) != 0)
		return;
	n = elf_object_read(obj, vaddr, code, sizeof(code));
	if (n < 3 + 6 || memcmp(code, "\x48\x85\xff\x0f\x84", 5) != 0)
		return;
	CHECK(check_real("free+3", code + 3, ARCH_MAX_INSN, vaddr + 3, &d) ==
			      0 &&
		      d.kind == ARCH_DISPLACED_EMULATE &&
		      d.op == ARCH_EMULATE_JCC && d.cond == 4 && d.len == 6,
	      "free+3: %s", d.text);
}

static int
test_object(const char *path, const struct entry *list, size_t count,
	    bool known)
{
	struct elf_object *obj = elf_object_open(path);
	int nrip = 0;

	if (!obj) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < count; i++)
		check_entry(obj, &list[i], known, &nrip);
	check_free_je(obj);
	printf("%s: %zu entry points displaced, %d RIP-relative%s\n", path,
	       count, nrip, known ? " (Debian 12 bytes checked)" : "");
	elf_object_close(obj);
	return 0;
}

static bool
libstdcxx_known(void)
{
	char target[64];
	ssize_t n = readlink(LIBSTDCXX, target, sizeof(target) - 1);

	if (n < 0)
		return false;
	target[n] = '\0';
	return strcmp(target, "libstdc++.so.6.0.30") == 0;
}

int
main(void)
{
	test_xol_cases();
	test_far_slot();
	test_reach_edges();
	test_refused();
	test_bad_input();
	test_emulate_cases();
	test_all_conditions();
	test_emulate_refuses_xol();
	test_orig_pc();
	if (test_object(LIBC, libc_entries,
			sizeof(libc_entries) / sizeof(libc_entries[0]),
			strcmp(gnu_get_libc_version(), "2.36") == 0) < 0)
		return EXIT_HARNESS;
	if (test_object(LIBSTDCXX, libstdcxx_entries,
			sizeof(libstdcxx_entries) /
				sizeof(libstdcxx_entries[0]),
			libstdcxx_known()) < 0)
		return EXIT_HARNESS;
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
