/* SPDX-License-Identifier: GPL-2.0-or-later */
/* arch_relocate_prologue and arch_patch_range_is_safe without running the
   result: hand-assembled prologues with answers worked out by hand, the
   allocator entry points of this machine's libc.so.6 and libstdc++.so.6
   read from disk (their bytes and targets printed), refusals, and every
   function of both objects swept once. Copies are checked by re-deriving
   absolute targets from their bytes, never by asking the decoder again;
   that one checker serves every part, hence one file past 800 lines. */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/tracer_arch/bytes.h"
#include "tracer/arch/arch.h"
#include "tracer/target/elfsym.h"

#define LIBC "/usr/lib/x86_64-linux-gnu/libc.so.6"
#define LIBSTDCXX "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"

#define ADDR 0x7f1200100000ull /* where the hand-assembled code "is" */
#define DEST 0x7f1200000000ull /* its copy, 1 MiB below */
#define BIAS 0x7f3a00000000ull /* where the real libraries "are" */
#define RDEST (BIAS - (2u << 20)) /* their copies, 2 MiB below */
#define GIB (1ull << 30)
#define PATCH ARCH_PATCH_JMP_LEN


/* A direct branch, parsed by hand from its N bytes at AT. */
struct branch {
	int op; /* 'j' jmp, 'c' call, 'b' jcc */
	int cond;
	size_t npfx, rellen;
	uint64_t target;
};

static bool
parse_branch(const uint8_t *p, size_t n, uint64_t at, struct branch *b)
{
	size_t k = 0, oplen = 1;

	memset(b, 0, sizeof(*b));
	while (k < n && (p[k] == 0xf2 || p[k] == 0x2e || p[k] == 0x3e))
		k++;
	if (k >= n)
		return false;
	b->npfx = k;
	if (p[k] == 0xeb || p[k] == 0xe9) {
		b->op = 'j';
		b->rellen = p[k] == 0xeb ? 1 : 4;
	} else if (p[k] == 0xe8) {
		b->op = 'c';
		b->rellen = 4;
	} else if (p[k] >= 0x70 && p[k] <= 0x7f) {
		b->op = 'b';
		b->cond = p[k] & 0xf;
		b->rellen = 1;
	} else if (p[k] == 0x0f && k + 1 < n && (p[k + 1] & 0xf0) == 0x80) {
		b->op = 'b';
		b->cond = p[k + 1] & 0xf;
		b->rellen = 4;
		oplen = 2;
	} else {
		return false;
	}
	if (k + oplen + b->rellen != n)
		return false;
	b->target = plus(at + n, b->rellen == 1 ? (int8_t)p[k + oplen] :
						 get32(p + k + oplen));
	return true;
}

/* Check R, built from CODE at ADDR for DEST, instruction by instruction:
   each one is copied ('c'), has only its disp32 changed and reaching the
   same address ('r'), or is a branch re-encoded as rel32 to the same
   target ('b'). KINDS gets one letter per instruction. Then the jump
   back. Returns false (counted) at the first problem. */
static bool
check_relocated(const char *what, const struct arch_relocated *r,
		const uint8_t *code, uint64_t addr, uint64_t dest,
		char *kinds)
{
	size_t off = 0, pos = 0;
	int before = failures;

	CHECK(r->covered >= PATCH && r->ninsn > 0 &&
		      memcmp(r->orig, code, r->covered) == 0,
	      "%s: covered %zu", what, r->covered);
	for (size_t i = 0; i < r->ninsn && failures == before; i++) {
		const struct arch_reloc_insn *ri = &r->insn[i];
		const uint8_t *o = code + off, *n = r->code + pos;
		struct branch bo, bn;

		kinds[i] = '?';
		CHECK(ri->off == off && ri->new_off == pos, "%s #%zu", what, i);
		if (parse_branch(o, ri->len, addr + off, &bo)) {
			CHECK(parse_branch(n, ri->new_len, dest + pos, &bn) &&
				      bn.op == bo.op && bn.cond == bo.cond &&
				      bn.target == bo.target &&
				      bn.rellen == 4 && bn.npfx == bo.npfx &&
				      memcmp(n, o, bo.npfx) == 0,
			      "%s #%zu: branch not kept", what, i);
			kinds[i] = 'b';
		} else if (ri->new_len == ri->len &&
			   memcmp(o, n, ri->len) == 0) {
			kinds[i] = 'c';
		} else {
			CHECK(ri->new_len == ri->len, "%s #%zu", what, i);
			for (size_t k = 1; k + 4 <= ri->len; k++) {
				if (memcmp(o, n, k) != 0 ||
				    memcmp(o + k + 4, n + k + 4,
					   ri->len - k - 4) != 0)
					continue;
				if (plus(addr + off + ri->len, get32(o + k)) ==
				    plus(dest + pos + ri->len, get32(n + k)))
					kinds[i] = 'r';
			}
			CHECK(kinds[i] == 'r', "%s #%zu: changed wrongly", what,
			      i);
		}
		off += ri->len;
		pos += ri->new_len;
	}
	kinds[r->ninsn] = '\0';
	if (failures != before)
		return false;
	/* After a flow's end, padding may be covered, never copied. */
	CHECK((r->ends ? off <= r->covered : off == r->covered) &&
		      pos == r->back_off,
	      "%s: %zu %zu", what, off, pos);
	if (r->ends) {
		CHECK(r->len == pos, "%s: bytes after the end", what);
	} else if (r->len == pos + 5) {
		CHECK(r->code[pos] == 0xe9 &&
			      plus(dest + pos + 5, get32(r->code + pos + 1)) ==
				      addr + r->covered,
		      "%s: jump back", what);
	} else {
		CHECK(r->len == pos + 14 && r->code[pos] == 0xff &&
			      r->code[pos + 1] == 0x25 &&
			      get32(r->code + pos + 2) == 0 &&
			      get64(r->code + pos + 6) == addr + r->covered,
		      "%s: absolute jump back", what);
	}
	return failures == before;
}

/* Relocate the N bytes of CODE (the whole "function") at ADDR for DEST
   with a 5-byte patch. */
static int
reloc(const uint8_t *code, size_t n, uint64_t dest, struct arch_relocated *r,
      char *err, size_t errlen)
{
	return arch_relocate_prologue(code, n, ADDR, PATCH, dest, r, err,
				      errlen);
}

struct good_case {
	const char *name;
	uint8_t code[32];
	size_t len;
	size_t covered;
	const char *kinds;
	bool ends, call;
	uint64_t target; /* of the branch, 0 when none */
};

static const struct good_case good_cases[] = {
	{ "malloc-like", { 0x41, 0x54, 0x55, 0x53, 0x48, 0x89, 0xfb, 0x90 },
	  8, 7, "cccc", false, false, 0 },
	{ "free-like: test; je rel32",
	  { 0x48, 0x85, 0xff, 0x0f, 0x84, 0xbf, 0, 0, 0, 0x55 }, 10, 9, "cb",
	  false, false, ADDR + 9 + 0xbf },
	{ "test; je rel8 (re-encoded to 0f 84)",
	  { 0x48, 0x85, 0xff, 0x74, 0x10, 0x90 }, 6, 5, "cb", false, false,
	  ADDR + 5 + 0x10 },
	{ "xor; jg rel8 backwards", { 0x31, 0xc0, 0x7f, 0x80, 0x90, 0x90 }, 6,
	  5, "cbc", false, false, ADDR + 4 - 128 },
	{ "ds-hinted je rel8 keeps its prefix",
	  { 0x31, 0xc0, 0x3e, 0x74, 0x10, 0x90 }, 6, 5, "cb", false, false,
	  ADDR + 5 + 0x10 },
	{ "cmp byte [rip+0x123456], 0",
	  { 0x80, 0x3d, 0x56, 0x34, 0x12, 0x00, 0x00, 0x74, 0x07 }, 9, 7, "r",
	  false, false, 0 },
	{ "endbr64; jmp rel32 (_Znam)",
	  { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9, 0xf7, 0x02, 0xff, 0xff }, 9, 9, "cb",
	  true, false, ADDR + 9 - 0xfd09 },
	{ "endbr64; jmp rel8", { 0xf3, 0x0f, 0x1e, 0xfa, 0xeb, 0x20 }, 6, 6,
	  "cb", true, false, ADDR + 6 + 0x20 },
	{ "jmp rel32 alone (jemalloc's _Znam)", { 0xe9, 0, 1, 0, 0 }, 5, 5,
	  "b", true, false, ADDR + 5 + 0x100 },
	{ "jmp qword [rip+0x10] (a PLT slot)",
	  { 0xff, 0x25, 0x10, 0, 0, 0, 0x68, 0, 0, 0, 0 }, 11, 6, "r", true,
	  false, 0 },
	{ "push rbx; call rel32 (last)", { 0x53, 0xe8, 0x10, 0, 0, 0, 0x5b },
	  7, 6, "cb", false, true, ADDR + 6 + 0x10 },
	{ "call rel32 (-mfentry)", { 0xe8, 0x10, 0, 0, 0, 0x55 }, 6, 5, "b",
	  false, true, ADDR + 5 + 0x10 },
	{ "xor; je ADDR (a branch to the entry is kept)",
	  { 0x31, 0xc0, 0x74, 0xfc, 0x90 }, 5, 5, "cbc", false, false, ADDR },
	{ "xor; je ADDR + covered", { 0x31, 0xc0, 0x74, 0x01, 0x90, 0x90 }, 6,
	  5, "cbc", false, false, ADDR + 5 },
	{ "lea rax, [rip-7] (the entry itself)",
	  { 0x48, 0x8d, 0x05, 0xf9, 0xff, 0xff, 0xff }, 7, 7, "r", false,
	  false, 0 },
	{ "push; push; push; push; ret (exactly 5)",
	  { 0x41, 0x54, 0x55, 0x53, 0xc3 }, 5, 5, "cccc", true, false, 0 },
};

static void
check_good(const struct good_case *c, uint64_t dest)
{
	struct arch_relocated r;
	char err[256] = "", kinds[ARCH_PATCH_MAX + 1];
	int ret = reloc(c->code, c->len, dest, &r, err, sizeof(err));

	CHECK(ret == 0, "%s: %d %s", c->name, ret, err);
	if (ret || !check_relocated(c->name, &r, c->code, ADDR, dest, kinds))
		return;
	CHECK(r.covered == c->covered && strcmp(kinds, c->kinds) == 0 &&
		      r.ends == c->ends && r.call == c->call,
	      "%s: covered %zu kinds %s ends %d call %d", c->name, r.covered,
	      kinds, r.ends, r.call);
	CHECK(r.rip_relative == (strchr(c->kinds, 'r') != NULL), "%s",
	      c->name);
	CHECK(r.text[0] != '\0', "%s", c->name);
	if (c->target) {
		struct branch b;
		const struct arch_reloc_insn *ri = &r.insn[1];

		if (c->kinds[0] == 'b')
			ri = &r.insn[0];
		CHECK(parse_branch(r.code + ri->new_off, ri->new_len,
				   dest + ri->new_off, &b) &&
			      b.target == c->target,
		      "%s: target", c->name);
	}
}

/* Exact bytes, computed by hand, for the two shapes of the brief. */
static void
test_exact(void)
{
	/* free: test rdi,rdi; je +0xbf. The je moves from ADDR + 3 to
	   DEST + 3, its target ADDR + 9 + 0xbf stays:
	   rel = ADDR + 0xc8 - (DEST + 9) = 0x100000 + 0xbf.
	   Jump back: ADDR + 9 - (DEST + 9 + 5) = 0x100000 - 5. */
	static const uint8_t free_code[] = { 0x48, 0x85, 0xff, 0x0f, 0x84,
					     0xbf, 0, 0, 0 };
	static const uint8_t free_copy[] = { 0x48, 0x85, 0xff, 0x0f, 0x84,
					     0xbf, 0x00, 0x10, 0x00, 0xe9,
					     0xfb, 0xff, 0x0f, 0x00 };
	/* endbr64; jmp rel8 +0x20: target ADDR + 0x26;
	   rel32 = ADDR + 0x26 - (DEST + 9) = 0x100000 + 0x1d; no jump
	   back. */
	static const uint8_t jmp_code[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xeb,
					    0x20 };
	static const uint8_t jmp_copy[] = { 0xf3, 0x0f, 0x1e, 0xfa, 0xe9,
					    0x1d, 0x00, 0x10, 0x00 };
	/* cmp byte [rip+0x123456], 0: disp = 0x123456 + 0x100000. */
	static const uint8_t cmp_code[] = { 0x80, 0x3d, 0x56, 0x34, 0x12,
					    0x00, 0x00 };
	static const uint8_t cmp_copy[] = { 0x80, 0x3d, 0x56, 0x34, 0x22,
					    0x00, 0x00, 0xe9, 0xfb, 0xff,
					    0x0f, 0x00 };
	struct arch_relocated r;
	uint8_t patch[PATCH];

	CHECK(reloc(free_code, sizeof(free_code), DEST, &r, NULL, 0) == 0 &&
		      r.len == sizeof(free_copy) &&
		      memcmp(r.code, free_copy, r.len) == 0 && r.back_off == 9,
	      "free copy");
	CHECK(r.ninsn == 2 && r.insn[1].off == 3 && r.insn[1].len == 6 &&
		      r.insn[1].new_off == 3 && r.insn[1].new_len == 6,
	      "free map");
	CHECK(strcmp(r.text, "test rdi, rdi; je 0x7f12001000c8") == 0,
	      "text '%s'", r.text);
	CHECK(reloc(jmp_code, sizeof(jmp_code), DEST, &r, NULL, 0) == 0 &&
		      r.len == sizeof(jmp_copy) &&
		      memcmp(r.code, jmp_copy, r.len) == 0 && r.ends &&
		      r.back_off == r.len && r.insn[1].new_len == 5,
	      "jmp copy");
	CHECK(reloc(cmp_code, sizeof(cmp_code), DEST, &r, NULL, 0) == 0 &&
		      r.len == sizeof(cmp_copy) &&
		      memcmp(r.code, cmp_copy, r.len) == 0 && r.rip_relative,
	      "cmp copy");
	/* The patch: jmp rel32 from ADDR to DEST = -0x100000 - 5. */
	CHECK(arch_encode_patch_jump(ADDR, DEST, patch) == 0 &&
		      memcmp(patch, "\xe9\xfb\xff\xef\xff", 5) == 0,
	      "patch bytes");
	CHECK(arch_encode_patch_jump(ADDR, ADDR + 5 + INT32_MAX, patch) == 0 &&
		      get32(patch + 1) == INT32_MAX, "patch INT32_MAX");
	CHECK(arch_encode_patch_jump(ADDR, ADDR + 6 + INT32_MAX, patch) ==
		      -ERANGE, "patch out of reach");
	CHECK(arch_encode_patch_jump(ADDR, ADDR + 5 - (1ull << 31), patch) ==
		      0 && get32(patch + 1) == INT32_MIN, "patch INT32_MIN");
}

static void
test_good(void)
{
	for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]);
	     i++) {
		check_good(&good_cases[i], DEST);
		check_good(&good_cases[i], ADDR + GIB);
	}
	test_exact();
}

/* A copy more than 2 GiB away: plain prologues jump back absolutely;
   branches and RIP-relative operands are refused. */
static void
test_far(void)
{
	for (size_t i = 0; i < sizeof(good_cases) / sizeof(good_cases[0]);
	     i++) {
		const struct good_case *c = &good_cases[i];
		uint64_t dests[] = { ADDR + 3 * GIB, ADDR - 3 * GIB };

		for (size_t j = 0; j < 2; j++) {
			struct arch_relocated r;
			char err[256] = "", kinds[ARCH_PATCH_MAX + 1];
			int ret = reloc(c->code, c->len, dests[j], &r, err,
					sizeof(err));

			if (strcspn(c->kinds, "br") != strlen(c->kinds)) {
				CHECK(ret == -ERANGE && strstr(err, "reach"),
				      "%s: %d '%s'", c->name, ret, err);
				continue;
			}
			CHECK(ret == 0, "%s: %d %s", c->name, ret, err);
			if (ret ||
			    !check_relocated(c->name, &r, c->code, ADDR,
					     dests[j], kinds))
				continue;
			CHECK(r.ends || r.len == r.back_off + 14, "%s",
			      c->name);
		}
	}
}

/* A branch target at the edges of rel32 reach from the copy. */
static void
test_reach_edges(void)
{
	/* je rel32 at ADDR; the copy's je at DEST ends at DEST + 6. */
	uint8_t code[] = { 0x0f, 0x84, 0, 0, 0, 0 };
	struct arch_relocated r;
	uint64_t target;

	target = DEST + 6 + INT32_MAX;
	memcpy(code + 2, &(int32_t){ (int32_t)(target - (ADDR + 6)) }, 4);
	CHECK(reloc(code, 6, DEST, &r, NULL, 0) == 0 &&
		      get32(r.code + 2) == INT32_MAX, "je INT32_MAX");
	target++;
	memcpy(code + 2, &(int32_t){ (int32_t)(target - (ADDR + 6)) }, 4);
	CHECK(reloc(code, 6, DEST, &r, NULL, 0) == -ERANGE, "je INT32_MAX+1");
}

struct bad_case {
	const char *name;
	uint8_t code[32];
	size_t len;
	size_t min_bytes;
	int ret;
	const char *why; /* words the reason must contain */
};

static const struct bad_case bad_cases[] = {
	/* A flow's end followed by code (not padding up to the 16-byte
	   boundary) cannot be covered. */
	{ "ret, then code", { 0xc3, 0x53, 0x90, 0x90, 0x90, 0x90 }, 6,
	  5, -ENOSPC, "shorter" },
	{ "xor eax, eax; ret", { 0x31, 0xc0, 0xc3, 0x53, 0xcc, 0xcc }, 6, 5,
	  -ENOSPC, "'ret'" },
	{ "jmp rel8 first", { 0xeb, 0x10, 0x53, 0x90, 0x90, 0x90 }, 6, 5,
	  -ENOSPC, "flow" },
	{ "endbr64; jmp rax", { 0xf3, 0x0f, 0x1e, 0xfa, 0xff, 0xe0 }, 6, 7,
	  -ENOSPC, "'jmp rax'" },
	{ "ud2 first", { 0x0f, 0x0b, 0x53, 0x90, 0x90, 0x90 }, 6, 5, -ENOSPC,
	  "ud2" },
	{ "push rbx (function of 1 byte)", { 0x53 }, 1, 5, -ENOSPC,
	  "ends at +1" },
	{ "push rbx; syscall", { 0x53, 0x0f, 0x05, 0x90, 0x90 }, 5, 5,
	  -ENOTSUP, "at +1: syscall" },
	{ "push rbx; lock inc [rax]", { 0x53, 0xf0, 0xff, 0x00, 0x90, 0x90 },
	  6, 5, -ENOTSUP, "LOCK" },
	{ "push rbx; call rax", { 0x53, 0xff, 0xd0, 0x90, 0x90 }, 5, 5,
	  -ENOTSUP, "indirect call" },
	{ "push rbx; hlt", { 0x53, 0xf4, 0x90, 0x90, 0x90 }, 5, 5, -ENOTSUP,
	  "privileged" },
	{ "push rbx; int3", { 0x53, 0xcc, 0x90, 0x90, 0x90 }, 5, 5, -ENOTSUP,
	  "breakpoint" },
	{ "push rbx; loop", { 0x53, 0xe2, 0xfe, 0x90, 0x90 }, 5, 5, -ENOTSUP,
	  "loop" },
	{ "xor; je into its own range", { 0x31, 0xc0, 0x74, 0xfe, 0x90 }, 5,
	  5, -ENOTSUP, "+2 lies inside" },
	{ "je forward into the range",
	  { 0x31, 0xc0, 0x74, 0x00, 0x48, 0x89, 0xfb }, 7, 5, -ENOTSUP,
	  "+4 lies inside" },
	{ "lea rax, [rip-6] (inside)",
	  { 0x48, 0x8d, 0x05, 0xfa, 0xff, 0xff, 0xff }, 7, 5, -ENOTSUP,
	  "+1 lies inside" },
	{ "call rel32 before more instructions",
	  { 0x53, 0xe8, 0x10, 0, 0, 0, 0x5b, 0x90 }, 8, 7, -ENOTSUP,
	  "callee" },
	{ "truncated mov", { 0x53, 0x48, 0x89 }, 3, 5, -EILSEQ, "truncated" },
	{ "into (invalid in 64-bit mode)", { 0x53, 0xce, 0x90, 0x90, 0x90 },
	  5, 5, -EILSEQ, "undecodable" },
	{ "no bytes", { 0x90 }, 0, 5, -EINVAL, "no code" },
	{ "patch of 0 bytes", { 0x90 }, 1, 0, -EINVAL, "0 bytes" },
	{ "patch of 17 bytes", { 0x90 }, 1, ARCH_PATCH_MAX + 1, -EINVAL,
	  "17 bytes" },
};

static void
test_bad(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		struct arch_relocated r;
		char err[256] = "";
		int ret = arch_relocate_prologue(c->code, c->len, ADDR,
						 c->min_bytes, DEST, &r, err,
						 sizeof(err));

		CHECK(ret == c->ret, "%s: %d (%s)", c->name, ret, err);
		CHECK(strstr(err, c->why), "%s: reason '%s' lacks '%s'",
		      c->name, err, c->why);
		CHECK(arch_relocate_prologue(c->code, c->len, ADDR,
					     c->min_bytes, DEST, &r, NULL,
					     0) == c->ret,
		      "%s without err", c->name);
	}
}

/* ld.so's _dl_debug_state: a lone ret, then nop padding to the next
   16-byte boundary (Debian 12's bytes), which never runs: the patch
   covers the ret and the padding, and the copy is the ret alone. */
static void
test_padding(void)
{
	static const uint8_t code[16] = {
		0xc3, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x0f, 0x1f, 0x40, 0x00,
	};
	struct arch_relocated r;
	char err[256] = "";
	int ret = arch_relocate_prologue(code, sizeof(code), ADDR, 5, DEST,
					 &r, err, sizeof(err));
	CHECK(ret == 0, "ret + padding: %d (%s)", ret, err);
	CHECK(r.covered == 12 && r.len == 1 && r.code[0] == 0xc3 && r.ends,
	      "ret + padding: covered %zu, copy of %zu bytes", r.covered,
	      r.len);
}

/* A 16-byte patch over jcc rel8s: the largest copy the limits allow. */
static void
test_longest(void)
{
	uint8_t code[40];
	struct arch_relocated r;
	char err[256] = "", kinds[ARCH_PATCH_MAX + 1];

	for (size_t i = 0; i < 16; i += 2) {
		code[i] = 0x74;
		code[i + 1] = 0x30;
	}
	memset(code + 16, 0x90, sizeof(code) - 16);
	CHECK(arch_relocate_prologue(code, sizeof(code), ADDR, ARCH_PATCH_MAX,
				     DEST, &r, err, sizeof(err)) == 0,
	      "longest: %s", err);
	CHECK(r.ninsn == 8 && r.covered == 16 && r.len == 8 * 6 + 5 &&
		      check_relocated("longest", &r, code, ADDR, DEST, kinds) &&
		      strcmp(kinds, "bbbbbbbb") == 0,
	      "longest: %zu %zu %zu", r.ninsn, r.covered, r.len);
}

static void
test_pc_map(void)
{
	/* test edi,edi (2); je rel8 (2 -> 6); push rbx (1); then back. */
	static const uint8_t code[] = { 0x85, 0xff, 0x74, 0x10, 0x53, 0x90 };
	static const struct {
		uint64_t pc;
		int ret;
		uint64_t want;
	} to_copy[] = {
		{ ADDR, 1, DEST }, { ADDR + 2, 1, DEST + 2 },
		{ ADDR + 4, 1, DEST + 8 }, { ADDR + 1, -EINVAL, 0 },
		{ ADDR + 3, -EINVAL, 0 }, { ADDR + 5, 0, ADDR + 5 },
		{ ADDR - 1, 0, ADDR - 1 },
	}, to_orig[] = {
		{ DEST, 1, ADDR }, { DEST + 2, 1, ADDR + 2 },
		{ DEST + 8, 1, ADDR + 4 }, { DEST + 9, 1, ADDR + 5 },
		{ DEST + 3, -EINVAL, 0 }, { DEST + 10, -EINVAL, 0 },
		{ DEST + 14, 0, DEST + 14 }, { DEST - 1, 0, DEST - 1 },
	};
	struct arch_relocated r;
	uint64_t out;

	CHECK(reloc(code, sizeof(code), DEST, &r, NULL, 0) == 0 &&
		      r.covered == 5 && r.back_off == 9 && r.len == 14,
	      "pc map setup");
	for (size_t i = 0; i < sizeof(to_copy) / sizeof(to_copy[0]); i++) {
		int ret = arch_relocated_pc_to_copy(&r, ADDR, DEST,
						    to_copy[i].pc, &out);

		CHECK(ret == to_copy[i].ret &&
			      (ret < 0 || out == to_copy[i].want),
		      "to_copy +%lld: %d %#llx",
		      (long long)(to_copy[i].pc - ADDR), ret,
		      (unsigned long long)out);
	}
	for (size_t i = 0; i < sizeof(to_orig) / sizeof(to_orig[0]); i++) {
		int ret = arch_relocated_pc_to_orig(&r, ADDR, DEST,
						    to_orig[i].pc, &out);

		CHECK(ret == to_orig[i].ret &&
			      (ret < 0 || out == to_orig[i].want),
		      "to_orig +%lld: %d %#llx",
		      (long long)(to_orig[i].pc - DEST), ret,
		      (unsigned long long)out);
	}
	/* With no jump back, the copy's end maps to nothing. */
	CHECK(reloc(good_cases[7].code, good_cases[7].len, DEST, &r, NULL, 0) ==
			      0 && r.ends &&
		      arch_relocated_pc_to_orig(&r, ADDR, DEST, DEST + r.len,
						&out) == 0 &&
		      arch_relocated_pc_to_orig(&r, ADDR, DEST, DEST + 4,
						&out) == 1 &&
		      out == ADDR + 4,
	      "no jump back");
}

/* A hand-made function (at ADDR):
     +0  push rbx             53
     +1  mov rbx, rdi         48 89 fb
     +4  test rdi, rdi        48 85 ff
     +7  jne +1               75 xx      (the brief's case: into its 2nd
                                          instruction)
     +9  pop rbx              5b
     +10 ret                  c3
   and variants with the branch at +7 aimed elsewhere. */
static void
test_range_safety(void)
{
	uint8_t f[] = { 0x53, 0x48, 0x89, 0xfb, 0x48, 0x85, 0xff, 0x75, 0,
			0x5b, 0xc3 };
	const size_t n = sizeof(f);
	struct arch_relocated r;
	char err[256] = "";
	int ret;

	f[8] = (uint8_t)(int8_t)(1 - 9); /* to +1 */
	CHECK(reloc(f, n, DEST, &r, NULL, 0) == 0 && r.covered == 7,
	      "setup: covered %zu", r.covered);
	ret = arch_patch_range_is_safe(f, n, ADDR, r.covered, err,
				       sizeof(err));
	CHECK(ret == -ENOTSUP && strstr(err, "'jne ") &&
		      strstr(err, "at +7 targets +1"),
	      "into the 2nd instruction: %d '%s'", ret, err);
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 1, NULL, 0) == 0,
	      "a 1-byte range has no interior");
	f[8] = (uint8_t)(int8_t)(0 - 9); /* to +0, the entry */
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 7, err, sizeof(err)) == 0,
	      "to the entry: %s", err);
	f[8] = (uint8_t)(int8_t)(7 - 9); /* to +7, just past the range */
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 7, err, sizeof(err)) == 0,
	      "past the range: %s", err);
	f[8] = (uint8_t)(int8_t)(6 - 9); /* to +6, the range's last byte */
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 7, err, sizeof(err)) ==
		      -ENOTSUP, "last byte");
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 6, err, sizeof(err)) == 0,
	      "range one byte shorter");
	f[8] = 0;
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 7, err, sizeof(err)) == 0,
	      "plain: %s", err);
	CHECK(arch_patch_range_is_safe(f, n, ADDR, n + 1, err, sizeof(err)) ==
		      -EINVAL, "range past the function");
	CHECK(arch_patch_range_is_safe(f, n, ADDR, 0, err, sizeof(err)) ==
		      -EINVAL, "empty range");
	{
		/* call, lea, jmp rel32 and jrcxz into the interior */
		static const struct {
			const char *name;
			uint8_t tail[8];
			size_t len;
		} kinds[] = {
			{ "call", { 0xe8, 0, 0, 0, 0 }, 5 },
			{ "lea", { 0x48, 0x8d, 0x05, 0, 0, 0, 0 }, 7 },
			{ "jmp", { 0xe9, 0, 0, 0, 0 }, 5 },
			{ "jrcxz", { 0xe3, 0 }, 2 },
		};
		uint8_t g[32];

		for (size_t i = 0; i < 4; i++) {
			size_t len = kinds[i].len, rel = len == 2 ? 1 : 4;
			/* after f's 11 bytes; target +2 */
			int32_t disp = 2 - (int32_t)(n + len);

			memcpy(g, f, n);
			memcpy(g + n, kinds[i].tail, len);
			if (rel == 1)
				g[n + len - 1] = (uint8_t)(int8_t)disp;
			else
				memcpy(g + n + len - 4, &disp, 4);
			ret = arch_patch_range_is_safe(g, n + len, ADDR, 7,
						       err, sizeof(err));
			CHECK(ret == -ENOTSUP &&
				      strstr(err, "at +11 targets +2"),
			      "%s: %d '%s'", kinds[i].name, ret, err);
		}
	}
	/* Undecodable bytes stop the sweep. */
	f[9] = 0xce;
	ret = arch_patch_range_is_safe(f, n, ADDR, 7, err, sizeof(err));
	CHECK(ret == -EILSEQ && strstr(err, "+9"), "undecodable: %d '%s'",
	      ret, err);
}

/* Real entry points. Expected: what Debian 12 ships (glibc 2.36-9+deb12u14,
   libstdc++ 6.0.30; tracing-techniques.md §1.6), checked only when the
   object is that very build (ANCHOR is at ANCHOR_VADDR). TARGET is the
   absolute address (object-relative) of the re-encoded branch or the
   re-targeted operand, 0 when none. */
struct entry {
	const char *name;
	size_t covered;
	const char *kinds;
	bool ends;
	uint64_t target;
};

static const struct entry libc_entries[] = {
	{ "malloc", 7, "cccc", false, 0 },
	{ "free", 9, "cb", false, 0x98fb8 },
	{ "calloc", 5, "cc", false, 0 },
	{ "realloc", 6, "ccc", false, 0 },
	{ "memalign", 7, "r", false, 0x1da488 },
	{ "aligned_alloc", 7, "r", false, 0x1da488 },
	{ "posix_memalign", 7, "r", false, 0x1da488 },
	{ "valloc", 7, "r", false, 0x1da488 },
	{ "pvalloc", 7, "r", false, 0x1da488 },
	{ "reallocarray", 6, "cc", false, 0 },
	{ "__libc_malloc", 7, "cccc", false, 0 },
	{ "__libc_free", 9, "cb", false, 0x98fb8 },
	{ "__libc_calloc", 5, "cc", false, 0 },
	{ "__libc_realloc", 6, "ccc", false, 0 },
	{ "__libc_memalign", 7, "r", false, 0x1da488 },
	{ "__libc_valloc", 7, "r", false, 0x1da488 },
	{ "__libc_pvalloc", 7, "r", false, 0x1da488 },
};

static const struct entry libstdcxx_entries[] = {
	{ "_Znwm", 7, "cc", false, 0 },
	{ "_Znam", 9, "cb", true, 0x998d0 },
	{ "_ZnwmRKSt9nothrow_t", 8, "cc", false, 0 },
	{ "_ZnamRKSt9nothrow_t", 8, "cc", false, 0 },
	{ "_ZnwmSt11align_val_t", 5, "cc", false, 0 },
	{ "_ZnamSt11align_val_t", 9, "cb", true, 0x9ba10 },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", 8, "cc", false, 0 },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", 8, "cc", false, 0 },
	{ "_ZdlPv", 9, "cb", true, 0x9a860 },
	{ "_ZdaPv", 9, "cb", true, 0x9a000 },
	{ "_ZdlPvm", 9, "cb", true, 0x9a000 },
	{ "_ZdaPvm", 9, "cb", true, 0x9d108 },
	{ "_ZdlPvRKSt9nothrow_t", 9, "cb", true, 0x9a000 },
	{ "_ZdaPvRKSt9nothrow_t", 9, "cb", true, 0x9d108 },
	{ "_ZdlPvSt11align_val_t", 9, "cb", true, 0x9a860 },
	{ "_ZdaPvSt11align_val_t", 9, "cb", true, 0x9a960 },
	{ "_ZdlPvmSt11align_val_t", 7, "cc", false, 0 },
	{ "_ZdaPvmSt11align_val_t", 7, "cc", false, 0 },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", 9, "cb", true, 0x9a960 },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", 9, "cb", true, 0x9c0a0 },
};

/* The absolute address R's instruction I refers to, re-derived by hand
   from the copy's bytes at DEST: a branch's target, or the disp32 that
   ends a re-targeted instruction of 7 bytes (cmp byte [rip+d], imm8 has
   its imm8 last, so the disp32 sits at +2). */
static uint64_t
copy_target(const struct arch_relocated *r, size_t i, uint64_t dest)
{
	const struct arch_reloc_insn *ri = &r->insn[i];
	const uint8_t *p = r->code + ri->new_off;
	struct branch b;

	if (parse_branch(p, ri->new_len, dest + ri->new_off, &b))
		return b.target;
	if (p[0] == 0x80 && p[1] == 0x3d && ri->new_len == 7)
		return plus(dest + ri->new_off + 7, get32(p + 2));
	return 0;
}

static void
print_copy(const char *name, uint64_t vaddr, const struct arch_relocated *r,
	   const char *kinds, int unsafe, const char *why)
{
	printf("  %-38s +%#-8llx covered %2zu (%s) %-42s -> %2zu bytes:",
	       name, (unsigned long long)vaddr, r->covered, kinds, r->text,
	       r->len);
	for (size_t i = 0; i < r->len; i++)
		printf(" %02x", r->code[i]);
	printf("%s%s%s\n", unsafe ? "  UNSAFE: " : "", unsafe ? why : "",
	       r->ends ? "  (ends, no jump back)" : "");
}

static void
check_entry(struct elf_object *obj, const struct entry *e, bool known,
	    int *nok)
{
	struct elf_symbol sym;
	struct arch_relocated r, far;
	char err[256] = "", kinds[ARCH_PATCH_MAX + 1] = "";
	uint8_t *code;
	uint64_t addr;
	int n, ret, safe;

	ret = elf_object_find(obj, e->name, &sym);
	CHECK(ret == 0 && sym.size > 0 && !sym.ifunc, "%s: %d", e->name, ret);
	if (ret || sym.size == 0 || sym.ifunc)
		return;
	code = malloc(sym.size);
	n = elf_object_read(obj, sym.vaddr, code, sym.size);
	CHECK(n == (int)sym.size, "%s: read %d", e->name, n);
	addr = BIAS + sym.vaddr;
	ret = arch_relocate_prologue(code, sym.size, addr, PATCH, RDEST, &r,
				     err, sizeof(err));
	CHECK(ret == 0, "%s: %d %s", e->name, ret, err);
	if (ret || !check_relocated(e->name, &r, code, addr, RDEST, kinds)) {
		free(code);
		return;
	}
	safe = arch_patch_range_is_safe(code, sym.size, addr, r.covered, err,
					sizeof(err));
	CHECK(safe == 0, "%s: %d %s", e->name, safe, err);
	print_copy(e->name, sym.vaddr, &r, kinds, safe, err);
	if (known) {
		uint64_t t = 0;

		CHECK(r.covered == e->covered && strcmp(kinds, e->kinds) == 0 &&
			      r.ends == e->ends,
		      "%s: covered %zu kinds %s", e->name, r.covered, kinds);
		for (size_t i = 0; i < r.ninsn; i++)
			if (kinds[i] != 'c')
				t = copy_target(&r, i, RDEST);
		CHECK(t == (e->target ? BIAS + e->target : 0),
		      "%s: target %#llx", e->name,
		      (unsigned long long)(t - BIAS));
	}
	/* 3 GiB away: only plain prologues relocate, jumping back
	   absolutely. */
	ret = arch_relocate_prologue(code, sym.size, addr, PATCH,
				     addr + 3 * GIB, &far, err, sizeof(err));
	if (strcspn(kinds, "br") != strlen(kinds))
		CHECK(ret == -ERANGE, "%s far: %d", e->name, ret);
	else
		CHECK(ret == 0 && far.len == far.back_off + 14 &&
			      check_relocated(e->name, &far, code, addr,
					      addr + 3 * GIB, kinds),
		      "%s far: %d %s", e->name, ret, err);
	++*nok;
	free(code);
}

struct func {
	uint64_t vaddr, size;
	const char *name; /* borrowed from the ELF handle */
};

static int
by_vaddr(const void *a, const void *b)
{
	const struct func *x = a, *y = b;

	return x->vaddr < y->vaddr ? -1 : x->vaddr > y->vaddr;
}

/* Relocate and sweep one function; returns its arch_relocate_prologue
   result, and sets *UNSAFE when arch_patch_range_is_safe objects. Prints
   the reason for either. */
static int
sweep_func(struct elf_object *obj, const struct func *f, bool *unsafe)
{
	struct arch_relocated r;
	char err[256] = "", kinds[ARCH_PATCH_MAX + 1];
	uint8_t *code = malloc(f->size);
	uint64_t addr = BIAS + f->vaddr;
	int ret, safe = 0;

	*unsafe = false;
	if (!code || elf_object_read(obj, f->vaddr, code, f->size) !=
			     (int)f->size) {
		free(code);
		return -EIO;
	}
	ret = arch_relocate_prologue(code, f->size, addr, PATCH, RDEST, &r,
				     err, sizeof(err));
	if (ret == 0) {
		check_relocated(f->name, &r, code, addr, RDEST, kinds);
		safe = arch_patch_range_is_safe(code, f->size, addr, r.covered,
						err, sizeof(err));
		*unsafe = safe != 0;
	}
	if (ret || safe)
		printf("    %s: %s\n", f->name, err);
	free(code);
	return ret;
}

/* Every defined function of PATH's .dynsym (once per address), relocated
   and swept: nothing may fail for a reason other than those documented,
   and every copy made must check out. Prints the refusals and a tally. */
static int
sweep_object(const char *path, struct elf_object *obj)
{
	static const int codes[5] = { 0, -ENOTSUP, -ENOSPC, -EILSEQ,
				      -ERANGE };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int counts[5] = { 0 }, nunsafe = 0, total = 0;
	struct func *fs = NULL;
	size_t nfs = 0;
	Elf_Scn *scn = NULL;
	Elf *elf;

	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return -1;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM ||
		    !(data = elf_getdata(scn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		fs = realloc(fs, (nfs + n) * sizeof(*fs));
		if (!fs)
			return -1;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;

			if (gelf_getsym(data, (int)i, &s) &&
			    GELF_ST_TYPE(s.st_info) == STT_FUNC &&
			    s.st_shndx != SHN_UNDEF && s.st_size > 0)
				fs[nfs++] = (struct func){
					s.st_value, s.st_size,
					elf_strptr(elf, sh.sh_link, s.st_name)
				};
		}
	}
	if (nfs)
		qsort(fs, nfs, sizeof(*fs), by_vaddr);
	for (size_t i = 0; i < nfs; i++) {
		bool unsafe;
		int ret, k;

		if (i > 0 && fs[i].vaddr == fs[i - 1].vaddr)
			continue;
		ret = sweep_func(obj, &fs[i], &unsafe);
		for (k = 0; k < 5 && codes[k] != ret; k++)
			;
		CHECK(k < 5, "%s: %d", fs[i].name, ret);
		if (k < 5)
			counts[k]++;
		nunsafe += unsafe;
		total++;
	}
	printf("%s: %d functions swept: %d relocated, %d of them with code "
	       "entering the patched range (or undecodable); refused: %d "
	       "ENOTSUP, %d ENOSPC, %d EILSEQ, %d ERANGE\n",
	       path, total, counts[0], nunsafe, counts[1], counts[2],
	       counts[3], counts[4]);
	free(fs);
	elf_end(elf);
	close(fd);
	return 0;
}

static int
test_object(const char *path, const struct entry *list, size_t count,
	    const char *anchor, uint64_t anchor_vaddr)
{
	struct elf_object *obj = elf_object_open(path);
	uint64_t v;
	bool known;
	int nok = 0;

	if (!obj) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	known = elf_object_lookup(obj, anchor, &v) == 0 && v == anchor_vaddr;
	printf("%s%s:\n", path, known ? " (the Debian 12 build: bytes "
					"and targets checked)" : "");
	for (size_t i = 0; i < count; i++)
		check_entry(obj, &list[i], known, &nok);
	printf("%s: %d of %zu entry points relocated\n", path, nok, count);
	if (sweep_object(path, obj) < 0) {
		elf_object_close(obj);
		return -1;
	}
	elf_object_close(obj);
	return 0;
}

int
main(void)
{
	test_good();
	test_far();
	test_reach_edges();
	test_bad();
	test_padding();
	test_longest();
	test_pc_map();
	test_range_safety();
	if (test_object(LIBC, libc_entries,
			sizeof(libc_entries) / sizeof(libc_entries[0]), "free",
			0x98ef0) < 0)
		return EXIT_HARNESS;
	if (test_object(LIBSTDCXX, libstdcxx_entries,
			sizeof(libstdcxx_entries) /
				sizeof(libstdcxx_entries[0]),
			"_Znwm", 0xa9570) < 0)
		return EXIT_HARNESS;
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
