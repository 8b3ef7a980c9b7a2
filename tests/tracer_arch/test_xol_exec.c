/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Runs XOL slots for real, in this process: each function below begins with
   the instruction under test; its slot, built by arch_displace at the slot's
   own address, is called instead of the function, so the copy runs there,
   jumps back into the function and the function returns to us. A wrong
   displacement reads or writes the wrong variable; a wrong jump back
   crashes. Skips (77) when no executable page can be had near the code. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/tracer_arch/near_page.h"
#include "tracer/arch/arch.h"

#define HIDDEN __attribute__((visibility("hidden")))

HIDDEN long ht_value = 1000;
HIDDEN unsigned char ht_flag;
HIDDEN int ht_store;

long ht_fn_load(long x);
long ht_fn_cmp(void);
long ht_fn_store(long x);
long ht_fn_plain(long x);

/* ht_fn_load: mov rax, [rip+ht_value] (7 bytes), then rax += x.
   ht_fn_cmp: cmp byte [rip+ht_flag], 0 (imm8 after the disp32), then
   1 if the flag is set, else 2.
   ht_fn_store: mov dword [rip+ht_store], 0x5eed (imm32 after the disp32),
   then returns x.
   ht_fn_plain: lea rax, [rdi+3], no RIP-relative operand. */
__asm__(".text\n"
	".globl ht_fn_load\n.hidden ht_fn_load\n"
	".type ht_fn_load, @function\n"
	"ht_fn_load:\n"
	"	movq ht_value(%rip), %rax\n"
	"	addq %rdi, %rax\n"
	"	ret\n"
	".size ht_fn_load, .-ht_fn_load\n"
	".globl ht_fn_cmp\n.hidden ht_fn_cmp\n"
	".type ht_fn_cmp, @function\n"
	"ht_fn_cmp:\n"
	"	cmpb $0, ht_flag(%rip)\n"
	"	je 1f\n"
	"	movl $1, %eax\n"
	"	ret\n"
	"1:	movl $2, %eax\n"
	"	ret\n"
	".size ht_fn_cmp, .-ht_fn_cmp\n"
	".globl ht_fn_store\n.hidden ht_fn_store\n"
	".type ht_fn_store, @function\n"
	"ht_fn_store:\n"
	"	movl $0x5eed, ht_store(%rip)\n"
	"	movq %rdi, %rax\n"
	"	ret\n"
	".size ht_fn_store, .-ht_fn_store\n"
	".globl ht_fn_plain\n.hidden ht_fn_plain\n"
	".type ht_fn_plain, @function\n"
	"ht_fn_plain:\n"
	"	leaq 3(%rdi), %rax\n"
	"	ret\n"
	".size ht_fn_plain, .-ht_fn_plain\n");

typedef long (*fn1_fn)(long);
typedef long (*fn0_fn)(void);

static long pagesz;

/* Displace FN's first instruction into PAGE and make PAGE executable.
   Returns 0, -1 on a displacement failure (counted), or EXIT_SKIP. */
static int
build_slot(void *fn, void *page, const char *name, struct arch_displaced *d)
{
	uint64_t addr = (uint64_t)(uintptr_t)fn;
	uint64_t slot = (uint64_t)(uintptr_t)page;
	char err[256] = "";
	int ret;

	if (mprotect(page, (size_t)pagesz, PROT_READ | PROT_WRITE) < 0)
		return EXIT_SKIP;
	ret = arch_displace(fn, ARCH_MAX_INSN, addr, slot, d, err,
			    sizeof(err));
	CHECK(ret == 0 && d->kind == ARCH_DISPLACED_XOL, "%s: %d %s", name,
	      ret, err);
	if (ret || d->kind != ARCH_DISPLACED_XOL)
		return -1;
	memcpy(page, d->slot, d->slot_len);
	if (mprotect(page, (size_t)pagesz, PROT_READ | PROT_EXEC) < 0) {
		fprintf(stderr, "SKIP: mprotect(PROT_EXEC): %s\n",
			strerror(errno));
		return EXIT_SKIP;
	}
	return 0;
}

static fn1_fn
as_fn1(void *page)
{
	return (fn1_fn)(uintptr_t)page;
}

static int
run_near(void *page)
{
	struct arch_displaced d;
	int ret;

	ret = build_slot((void *)(uintptr_t)ht_fn_load, page, "load", &d);
	if (ret)
		return ret;
	CHECK(d.len == 7 && d.rip_relative && d.slot_len == 12, "load: %s",
	      d.text);
	ht_value = 1000;
	CHECK(as_fn1(page)(5) == 1005, "load");
	ht_value = 42;
	CHECK(as_fn1(page)(5) == 47, "load after change");

	ret = build_slot((void *)(uintptr_t)ht_fn_cmp, page, "cmp", &d);
	if (ret)
		return ret;
	CHECK(d.len == 7 && d.rip_relative && d.orig[6] == 0, "cmp: %s",
	      d.text);
	ht_flag = 0;
	CHECK(((fn0_fn)(uintptr_t)page)() == 2, "cmp, flag clear");
	ht_flag = 1;
	CHECK(((fn0_fn)(uintptr_t)page)() == 1, "cmp, flag set");

	ret = build_slot((void *)(uintptr_t)ht_fn_store, page, "store", &d);
	if (ret)
		return ret;
	CHECK(d.len == 10 && d.rip_relative, "store: %s", d.text);
	ht_store = 0;
	CHECK(as_fn1(page)(9) == 9 && ht_store == 0x5eed, "store: %#x",
	      ht_store);
	return 0;
}

static int
run_far(void *page)
{
	struct arch_displaced d;
	int ret;

	ret = build_slot((void *)(uintptr_t)ht_fn_plain, page, "plain", &d);
	if (ret)
		return ret;
	CHECK(d.slot_len == d.len + 14, "plain: slot_len %zu", d.slot_len);
	CHECK(as_fn1(page)(4) == 7, "plain via absolute jump back");
	return 0;
}

int
main(void)
{
	uint64_t code = (uint64_t)(uintptr_t)ht_fn_load;
	void *near, *far;
	int ret;

	pagesz = sysconf(_SC_PAGESIZE);
	/* The functions really start as described, whatever the compiler. */
	CHECK(memcmp((void *)(uintptr_t)ht_fn_load, "\x48\x8b\x05", 3) == 0,
	      "ht_fn_load");
	CHECK(memcmp((void *)(uintptr_t)ht_fn_cmp, "\x80\x3d", 2) == 0,
	      "ht_fn_cmp");
	if (failures)
		return EXIT_HARNESS;
	near = page_near(code, pagesz);
	far = page_far(code, pagesz);
	if (near == MAP_FAILED || far == MAP_FAILED) {
		fprintf(stderr, "SKIP: no page at the distances wanted\n");
		return EXIT_SKIP;
	}
	/* A failure counts even if a later step skips: a wrong slot may have
	   written over something the next step needs. */
	ret = run_near(near);
	if (ret != EXIT_SKIP)
		ret = run_far(far);
	munmap(near, (size_t)pagesz);
	munmap(far, (size_t)pagesz);
	if (failures) {
		fprintf(stderr, "%d failures\n", failures);
		return 1;
	}
	return ret == EXIT_SKIP ? EXIT_SKIP : 0;
}
