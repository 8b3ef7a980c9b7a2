/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Moving mremaps under --pages-as-heap=yes (tests/run/pages_move.sh;
   issue 13). With P = 4096:
     map_big      mmap 512P, kept: the process's biggest total from now
                  on, so that each deallocation below checks for a peak
     map_three    mmap 3P (a)
     guard        mprotect a's last page PROT_NONE: a mapping of its own
                  now, in the way of a growth in place (no page call)
     grow_move    mremap a's first 2P to 5P, MREMAP_MAYMOVE: it moves
     map_one      mmap 1P (to), then unmap gives it back: a free place
     shrink_move  mremap the 5P to 1P at `to` (MREMAP_FIXED)
     unmap        the guard page
   The last mapping stays. No stdio (its buffer would be allocated): one
   write(2) of a line, exit 0 when every call did what is said above. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sys/mman.h>
#include <unistd.h>

#define P 4096UL
#define NOINLINE __attribute__((noinline))

static NOINLINE char *
map_pages(size_t n)
{
	return mmap(NULL, n * P, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

static NOINLINE char *map_big(void) { return map_pages(512); }
static NOINLINE char *map_three(void) { return map_pages(3); }
static NOINLINE char *map_one(void) { return map_pages(1); }
static NOINLINE int guard(char *a) { return mprotect(a + 2 * P, P, PROT_NONE); }
static NOINLINE char *grow_move(char *a)
{
	return mremap(a, 2 * P, 5 * P, MREMAP_MAYMOVE);
}
static NOINLINE char *shrink_move(char *b, char *to)
{
	return mremap(b, 5 * P, P, MREMAP_MAYMOVE | MREMAP_FIXED, to);
}
static NOINLINE int unmap(char *p, size_t n) { return munmap(p, n * P); }

int
main(void)
{
	char *big = map_big();
	char *a = map_three();
	int ok = big != MAP_FAILED && a != MAP_FAILED && guard(a) == 0;
	char *b = ok ? grow_move(a) : MAP_FAILED;
	ok = ok && b != MAP_FAILED && b != a;
	char *to = map_one();
	ok = ok && to != MAP_FAILED && unmap(to, 1) == 0;
	char *c = ok ? shrink_move(b, to) : MAP_FAILED;
	ok = ok && c == to && unmap(a + 2 * P, 1) == 0;
	static const char yes[] = "pages_move: ok\n", no[] = "pages_move: unexpected\n";
	if (write(1, ok ? yes : no, ok ? sizeof(yes) - 1 : sizeof(no) - 1) < 0)
		return 2;
	return ok ? 0 : 1;
}
