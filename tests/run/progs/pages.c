/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Page-level calls whose sizes are known (tests/run/pages.sh, for
   --pages-as-heap=yes): each step in a function of its own, so that the
   profile's tree says which bytes each call site holds. With P = 4096:
     grow_brk        sbrk(3P) then shrink_brk sbrk(-P): 2P left
     map_ten         mmap 10P, then unmap_part munmaps its last 2P: 8P left
     map_eight       mmap 8P, then its top 4P munmapped: 4P left
     remap_grow      mremap in place 4P -> 8P: +4P
     remap_shrink    mremap 8P -> 6P: the tail 2P go (remap_grow's)
     remap_move      mremap 6P to a free place (MREMAP_FIXED): 6P, all its
     map_fixed       mmap 2P MAP_FIXED over map_ten's first pages: 2P
                     more (Massif counts them again)
     map_fail        an mmap that fails: nothing
   then prints one line and exits 0. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define P 4096UL
#define NOINLINE __attribute__((noinline))

static NOINLINE void grow_brk(void) { sbrk(3 * P); }
static NOINLINE void shrink_brk(void) { sbrk(-(intptr_t)P); }

static NOINLINE char *
map_pages(size_t n)
{
	return mmap(NULL, n * P, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static NOINLINE char *map_ten(void) { return map_pages(10); }
static NOINLINE char *map_eight(void) { return map_pages(8); }
static NOINLINE void unmap_part(char *p, size_t from, size_t n)
{
	munmap(p + from * P, n * P);
}
static NOINLINE char *remap_grow(char *p)
{
	return mremap(p, 4 * P, 8 * P, 0);
}
static NOINLINE char *remap_shrink(char *p)
{
	return mremap(p, 8 * P, 6 * P, 0);
}
static NOINLINE char *remap_move(char *p, char *to)
{
	return mremap(p, 6 * P, 6 * P, MREMAP_MAYMOVE | MREMAP_FIXED, to);
}
static NOINLINE char *map_fixed(char *at)
{
	return mmap(at, 2 * P, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}
static NOINLINE char *map_fail(void)
{
	return mmap(NULL, (size_t)1 << 62, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

int
main(void)
{
	/* The break is page-aligned before anything allocates. */
	grow_brk();
	shrink_brk();
	char *ten = map_ten();
	unmap_part(ten, 8, 2);
	char *eight = map_eight();
	unmap_part(eight, 4, 4);
	char *grown = remap_grow(eight);
	char *shrunk = remap_shrink(grown);
	/* A free place for the move: mapped, then given back. */
	char *to = map_pages(6);
	unmap_part(to, 0, 6);
	char *moved = remap_move(shrunk, to);
	char *fixed = map_fixed(ten);
	char *failed = map_fail();
	int ok = ten != MAP_FAILED && grown == eight && shrunk == eight &&
		 moved == to && fixed == ten && failed == MAP_FAILED;
	printf("pages: %s\n", ok ? "ok" : "unexpected");
	return ok ? 0 : 1;
}
