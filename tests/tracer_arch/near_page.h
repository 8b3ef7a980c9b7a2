/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Pages at chosen distances from some code, for the tests that run
   relocated instructions in this process: one within rel32 reach, one out
   of it. Each is a fresh read-write anonymous page of PAGESZ bytes. */
#ifndef HT_TESTS_TRACER_ARCH_NEAR_PAGE_H
#define HT_TESTS_TRACER_ARCH_NEAR_PAGE_H

#include <stdint.h>
#include <sys/mman.h>

/* A page at exactly HINT, or MAP_FAILED. */
static void *
page_at(uint64_t hint, long pagesz)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	void *p = mmap((void *)(uintptr_t)hint, (size_t)pagesz,
		       PROT_READ | PROT_WRITE, flags, -1, 0);

	if (p != MAP_FAILED && p != (void *)(uintptr_t)hint) {
		munmap(p, (size_t)pagesz);
		return MAP_FAILED;
	}
	return p;
}

/* A page within 1 GiB below NEAR (below, to stay out of the brk heap). */
static void *
page_near(uint64_t near, long pagesz)
{
	uint64_t base = near & ~(uint64_t)(pagesz - 1);

	for (uint64_t d = 16u << 20; d <= 1u << 30; d += 16u << 20) {
		void *p = page_at(base - d, pagesz);

		if (p != MAP_FAILED)
			return p;
	}
	return MAP_FAILED;
}

/* A page more than 2 GiB away from NEAR, in either direction. */
static void *
page_far(uint64_t near, long pagesz)
{
	uint64_t base = near & ~(uint64_t)(pagesz - 1);
	uint64_t far = 4ull << 30;
	void *p = mmap(NULL, (size_t)pagesz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t a = (uint64_t)(uintptr_t)p;

	if (p != MAP_FAILED && (a > base + far || a + far < base))
		return p;
	if (p != MAP_FAILED)
		munmap(p, (size_t)pagesz);
	for (uint64_t d = far; d <= 64 * far; d += far) {
		p = page_at(base + d, pagesz);
		if (p != MAP_FAILED)
			return p;
		if (base > d && (p = page_at(base - d, pagesz)) != MAP_FAILED)
			return p;
	}
	return MAP_FAILED;
}

#endif
