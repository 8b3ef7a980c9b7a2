/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs jump-patched functions for real, in this process. The functions
   below (one blob, with the constant they load) are copied to a fresh
   page; each copy's prologue is relocated by arch_relocate_prologue into
   a page placed within rel32 reach of it (MAP_FIXED_NOREPLACE), and the
   copy (never the original) is patched with arch_encode_patch_jump, the
   rest of the covered range filled with int3. Calling the copy then runs
   patch, relocated prologue, jump back, rest of the function; the results
   must equal the original's. A wrong displacement reads the wrong
   constant; a wrong branch or jump back crashes or traps. Skips (77) when
   no executable page can be had at the distances wanted. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/tracer_arch/near_page.h"
#include "tracer/arch/arch.h"

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN extern const uint8_t ht_blob_start[], ht_blob_end[];
HIDDEN extern uint64_t ht_pf_k;
HIDDEN extern const uint8_t ht_pf_end[], ht_pc_end[], ht_pj_end[],
	ht_pl_end[];
long ht_pf(long x);
long ht_pc(long x);
long ht_pj(long x);
long ht_pl(long x);

/* ht_pf: (int)x >= 0 ? k + x : k - x. Its prologue: test edi, edi (2);
   js rel8 (2, re-encoded as js rel32); mov rax, [rip+k] (7, re-targeted):
   11 bytes covered.
   ht_pc: 2x + 1 through a call: push rbx (1); call rel32 (5, the last
   covered instruction: its callee returns into the relocated copy).
   ht_pj: x + 100 through a tail jump: endbr64 (4); jmp rel8 (2, re-encoded
   as jmp rel32; the copy ends there, no jump back).
   ht_pl: x + 3, a plain prologue: endbr64 (4); mov rax, rdi (3).
   Every branch and RIP-relative operand stays inside the blob, so that
   its copy works at its new address. */
__asm__(".text\n"
	".p2align 4\n"
	".globl ht_blob_start\n.hidden ht_blob_start\n"
	"ht_blob_start:\n"
	".globl ht_pf\n.hidden ht_pf\n.type ht_pf, @function\n"
	"ht_pf:\n"
	"	testl %edi, %edi\n"
	"	js 1f\n"
	"	movq ht_pf_k(%rip), %rax\n"
	"	addq %rdi, %rax\n"
	"	ret\n"
	"1:	movq ht_pf_k(%rip), %rax\n"
	"	subq %rdi, %rax\n"
	"	ret\n"
	".size ht_pf, .-ht_pf\n"
	".globl ht_pf_end\n.hidden ht_pf_end\n"
	"ht_pf_end:\n"
	".globl ht_pc\n.hidden ht_pc\n.type ht_pc, @function\n"
	"ht_pc:\n"
	"	pushq %rbx\n"
	"	call 2f\n"
	"	popq %rbx\n"
	"	ret\n"
	"2:	leaq 1(%rdi,%rdi), %rax\n"
	"	ret\n"
	".size ht_pc, .-ht_pc\n"
	".globl ht_pc_end\n.hidden ht_pc_end\n"
	"ht_pc_end:\n"
	".globl ht_pj\n.hidden ht_pj\n.type ht_pj, @function\n"
	"ht_pj:\n"
	"	endbr64\n"
	"	jmp 3f\n"
	"	int3\n"
	"3:	leaq 100(%rdi), %rax\n"
	"	ret\n"
	".size ht_pj, .-ht_pj\n"
	".globl ht_pj_end\n.hidden ht_pj_end\n"
	"ht_pj_end:\n"
	".globl ht_pl\n.hidden ht_pl\n.type ht_pl, @function\n"
	"ht_pl:\n"
	"	endbr64\n"
	"	movq %rdi, %rax\n"
	"	addq $3, %rax\n"
	"	ret\n"
	".size ht_pl, .-ht_pl\n"
	".globl ht_pl_end\n.hidden ht_pl_end\n"
	"ht_pl_end:\n"
	".p2align 3\n"
	".globl ht_pf_k\n.hidden ht_pf_k\n"
	"ht_pf_k:\n"
	"	.quad 0x123456789a\n"
	".globl ht_blob_end\n.hidden ht_blob_end\n"
	"ht_blob_end:\n");

typedef long (*fn_fn)(long);

static long pagesz;

struct fn {
	const char *name;
	fn_fn orig;
	const uint8_t *end;    /* what its ELF symbol size gives */
	size_t covered, ninsn; /* expected */
	bool ends, call;
};

static const struct fn fns[] = {
	{ "ht_pf", ht_pf, ht_pf_end, 11, 3, false, false },
	{ "ht_pc", ht_pc, ht_pc_end, 6, 2, false, true },
	{ "ht_pj", ht_pj, ht_pj_end, 6, 2, true, false },
	{ "ht_pl", ht_pl, ht_pl_end, 7, 2, false, false },
};
#define NFNS (sizeof(fns) / sizeof(fns[0]))
#define SLOT 64 /* bytes of the trampoline page per function */

static const long inputs[] = { 0, 1, 7, -1, -5, 1000000007, -(1l << 40),
			       INT64_MAX / 4 };

static size_t
blob_off(fn_fn f)
{
	return (size_t)((const uint8_t *)(uintptr_t)f - ht_blob_start);
}

static size_t
fn_len(const struct fn *fn)
{
	return (size_t)(fn->end - ht_blob_start) - blob_off(fn->orig);
}

static fn_fn
as_fn(const uint8_t *p)
{
	return (fn_fn)(uintptr_t)p;
}

/* Relocate every function of the blob copy at COPY into TRAMP (one SLOT
   each), then patch the copies. Returns 0, -1 (counted), or EXIT_SKIP. */
static int
build(uint8_t *copy, uint8_t *tramp, struct arch_relocated *r)
{
	memcpy(copy, ht_blob_start, (size_t)(ht_blob_end - ht_blob_start));
	for (size_t i = 0; i < NFNS; i++) {
		uint8_t *f = copy + blob_off(fns[i].orig);
		uint64_t addr = (uint64_t)(uintptr_t)f;
		uint64_t dest = (uint64_t)(uintptr_t)(tramp + i * SLOT);
		char err[256] = "";
		int ret;

		ret = arch_relocate_prologue(f, fn_len(&fns[i]), addr,
					     ARCH_PATCH_JMP_LEN, dest, &r[i], err,
					     sizeof(err));
		CHECK(ret == 0, "%s: %d %s", fns[i].name, ret, err);
		if (ret)
			return -1;
		CHECK(r[i].covered == fns[i].covered &&
			      r[i].ninsn == fns[i].ninsn &&
			      r[i].ends == fns[i].ends &&
			      r[i].call == fns[i].call && r[i].len <= SLOT,
		      "%s: covered %zu ninsn %zu (%s)", fns[i].name,
		      r[i].covered, r[i].ninsn, r[i].text);
		ret = arch_patch_range_is_safe(f, fn_len(&fns[i]), addr,
					       r[i].covered, err, sizeof(err));
		CHECK(ret == 0, "%s: range %d %s", fns[i].name, ret, err);
		memcpy(tramp + i * SLOT, r[i].code, r[i].len);
		CHECK(arch_encode_patch_jump(addr, dest, f) == 0, "%s: patch",
		      fns[i].name);
		memset(f + ARCH_PATCH_JMP_LEN, 0xcc,
		       r[i].covered - ARCH_PATCH_JMP_LEN);
	}
	if (mprotect(copy, (size_t)pagesz, PROT_READ | PROT_EXEC) < 0 ||
	    mprotect(tramp, (size_t)pagesz, PROT_READ | PROT_EXEC) < 0) {
		fprintf(stderr, "SKIP: mprotect(PROT_EXEC): %s\n",
			strerror(errno));
		return EXIT_SKIP;
	}
	return 0;
}

static void
run(uint8_t *copy, uint8_t *tramp, const struct arch_relocated *r)
{
	for (size_t i = 0; i < NFNS; i++) {
		fn_fn patched = as_fn(copy + blob_off(fns[i].orig));

		CHECK(patched != fns[i].orig &&
			      ((uint8_t *)(uintptr_t)patched)[0] == 0xe9,
		      "%s: patched", fns[i].name);
		for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++)
			CHECK(patched(inputs[k]) == fns[i].orig(inputs[k]),
			      "%s(%ld): %ld, want %ld", fns[i].name, inputs[k],
			      patched(inputs[k]), fns[i].orig(inputs[k]));
	}
	/* A thread stopped at ht_pf's mov (+4) when the patch was written
	   moves to the mov's copy (+8, after the js grew to 6 bytes), with
	   the same registers: k + x. */
	{
		uint64_t addr = (uint64_t)(uintptr_t)copy + blob_off(ht_pf);
		uint64_t dest = (uint64_t)(uintptr_t)tramp, pc, back;

		CHECK(arch_relocated_pc_to_copy(&r[0], addr, dest, addr + 4,
						&pc) == 1 &&
			      pc == dest + 8,
		      "ht_pf mov: %#llx", (unsigned long long)(pc - dest));
		CHECK(as_fn((const uint8_t *)(uintptr_t)pc)(11) ==
			      (long)ht_pf_k + 11,
		      "entered at the mov's copy");
		CHECK(arch_relocated_pc_to_orig(&r[0], addr, dest,
						dest + r[0].back_off,
						&back) == 1 &&
			      back == addr + 11,
		      "jump back");
	}
}

/* The absolute jump back, run: ht_pl relocated more than 2 GiB away from
   its copy (no rel32 patch could reach it, so it is called directly). */
static void
run_far(uint8_t *copy, uint8_t *far)
{
	uint8_t *f = copy + blob_off(ht_pl);
	struct arch_relocated r;
	char err[256] = "";
	int ret;

	/* From the original's bytes, as the copy is patched by now. */
	ret = arch_relocate_prologue((const uint8_t *)(uintptr_t)ht_pl,
				     fn_len(&fns[3]), (uint64_t)(uintptr_t)f,
				     ARCH_PATCH_JMP_LEN,
				     (uint64_t)(uintptr_t)far, &r, err,
				     sizeof(err));
	CHECK(ret == 0 && r.len == r.back_off + 14, "far: %d %s", ret, err);
	if (ret)
		return;
	memcpy(far, r.code, r.len);
	if (mprotect(far, (size_t)pagesz, PROT_READ | PROT_EXEC) < 0)
		return;
	for (size_t k = 0; k < sizeof(inputs) / sizeof(inputs[0]); k++)
		CHECK(as_fn(far)(inputs[k]) == ht_pl(inputs[k]), "far(%ld)",
		      inputs[k]);
	/* ht_pf cannot go there: its js and its load are out of reach. */
	f = copy + blob_off(ht_pf);
	CHECK(arch_relocate_prologue((const uint8_t *)(uintptr_t)ht_pf,
				     fn_len(&fns[0]), (uint64_t)(uintptr_t)f,
				     ARCH_PATCH_JMP_LEN,
				     (uint64_t)(uintptr_t)far, &r, NULL,
				     0) == -ERANGE,
	      "ht_pf far");
}

int
main(void)
{
	struct arch_relocated r[NFNS];
	uint8_t *copy, *tramp, *far;
	uint64_t k;
	int ret;

	pagesz = sysconf(_SC_PAGESIZE);
	if ((size_t)(ht_blob_end - ht_blob_start) > (size_t)pagesz ||
	    NFNS * SLOT > (size_t)pagesz)
		return EXIT_HARNESS;
	copy = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (copy == MAP_FAILED)
		return EXIT_HARNESS;
	tramp = page_near((uint64_t)(uintptr_t)copy, pagesz);
	far = page_far((uint64_t)(uintptr_t)copy, pagesz);
	if (tramp == MAP_FAILED || far == MAP_FAILED) {
		fprintf(stderr, "SKIP: no page at the distances wanted\n");
		return EXIT_SKIP;
	}
	ret = build(copy, tramp, r);
	if (ret == 0) {
		run(copy, tramp, r);
		/* The copy's constant, not the original's, is what its
		   relocated load reads. */
		k = 0x55aa55aa55;
		if (mprotect(copy, (size_t)pagesz, PROT_READ | PROT_WRITE) ==
		    0) {
			memcpy(copy + (size_t)((const uint8_t *)&ht_pf_k -
					       ht_blob_start),
			       &k, sizeof(k));
			mprotect(copy, (size_t)pagesz, PROT_READ | PROT_EXEC);
			CHECK(as_fn(copy + blob_off(ht_pf))(3) ==
				      (long)k + 3 &&
				      as_fn(copy + blob_off(ht_pf))(-3) ==
					      (long)k + 3,
			      "copy's constant");
		}
		run_far(copy, far);
	}
	munmap(copy, (size_t)pagesz);
	munmap(tramp, (size_t)pagesz);
	munmap(far, (size_t)pagesz);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	return ret == EXIT_SKIP ? EXIT_SKIP : 0;
}
