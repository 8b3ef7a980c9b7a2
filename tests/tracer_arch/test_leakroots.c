/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracer/leak/leakroots.c: root selection from hand-made maps texts (each
   memcheck rule: permissions, kernel and device mappings, heaptrace's own
   pages, stacks cut at the lowest SP minus the red zone, live blocks cut
   out, edges), the memory reader on this process (a short read at an
   unmapped page), its copies of ranges (of this process and of a child:
   reads and views of the copy after the memory changed, reads running
   past a copy, LEAKROOTS_COPY_MAX), glibc's heaps found by their
   heap_info (hand-made ones, then a thread's real arena) and the roots
   left without them, the vtable test on words pointing at this test's
   own code, glibc's pointer to the chunk after a block (hand-made
   headers and real glibc blocks), and a traced child whose leaks
   leak_classify must find from its roots, memory and registers. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapshot/leak.h"
#include "tests/check.h"
#include "tracer/leak/leakroots.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_ASAN 1
#endif
#endif

struct want {
	uint64_t start, end;
};

/* Roots of MAPS are exactly WANT[0..N). */
static void
expect(const char *what, const char *maps,
       const struct leakroots_range *ex, size_t nex, const uint64_t *sps,
       size_t nsps, const struct leak_block *b, size_t nb,
       const struct want *w, size_t n)
{
	struct leak_root *r;
	size_t nr;
	int rc = leakroots_from_maps(maps, ex, nex, sps, nsps, b, nb, &r, &nr);
	CHECK(rc == 0, "%s: rc %d", what, rc);
	if (rc)
		return;
	CHECK(nr == n, "%s: %zu roots, want %zu", what, nr, n);
	for (size_t i = 0; i < nr && i < n; i++)
		CHECK(r[i].start == w[i].start &&
			      r[i].start + r[i].len == w[i].end,
		      "%s: root %zu is %#llx-%#llx, want %#llx-%#llx", what, i,
		      (unsigned long long)r[i].start,
		      (unsigned long long)(r[i].start + r[i].len),
		      (unsigned long long)w[i].start,
		      (unsigned long long)w[i].end);
	if (nr != n)
		for (size_t i = 0; i < nr; i++)
			fprintf(stderr, "  got %#llx-%#llx\n",
				(unsigned long long)r[i].start,
				(unsigned long long)(r[i].start + r[i].len));
	free(r);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char maps_basic[] =
	"555555554000-555555556000 r--p 00000000 08:01 1234  /usr/bin/prog\n"
	"555555556000-555555558000 r-xp 00002000 08:01 1234  /usr/bin/prog\n"
	"555555558000-555555559000 r--p 00004000 08:01 1234  /usr/bin/prog\n"
	"555555559000-55555555a000 rw-p 00005000 08:01 1234  /usr/bin/prog\n"
	"55555555a000-55555555b000 rw-p 00000000 00:00 0 \n"
	"55555555b000-55555557c000 rw-p 00000000 00:00 0     [heap]\n"
	"7ffff7d00000-7ffff7d10000 rw-s 00000000 00:05 77    /SYSV00000000 (deleted)\n"
	"7ffff7d10000-7ffff7d11000 rw-s 00000000 00:1a 78    /dev/shm/seg\n"
	"7ffff7d11000-7ffff7d12000 rw-s 00000000 00:06 5     /dev/dri/renderD128\n"
	"7ffff7d12000-7ffff7d13000 rw-p 00000000 00:06 4     /dev/zero (deleted)\n"
	"7ffff7d13000-7ffff7d14000 -w-p 00000000 00:00 0 \n"
	"7ffff7d14000-7ffff7d15000 ---p 00000000 00:00 0 \n"
	"7ffff7d15000-7ffff7d16000 r--p 00000000 00:00 0 \n"
	"7ffff7fc1000-7ffff7fc5000 r--p 00000000 00:00 0     [vvar]\n"
	"7ffff7fc5000-7ffff7fc7000 r-xp 00000000 00:00 0     [vdso]\n"
	"7ffff7fc7000-7ffff7fc8000 rw-p 00000000 00:00 0     [vvar_vclock]\n"
	"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0     [stack]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]\n";

/* Which mappings are roots, with no thread, block nor exclusion. */
static void
test_selection(void)
{
	static const struct want w[] = {
		{ 0x555555559000, 0x55555555a000 }, /* .data */
		{ 0x55555555a000, 0x55555555b000 }, /* .bss */
		{ 0x55555555b000, 0x55555557c000 }, /* [heap] */
		{ 0x7ffff7d00000, 0x7ffff7d10000 }, /* SysV shm */
		{ 0x7ffff7d10000, 0x7ffff7d11000 }, /* /dev/shm file */
		{ 0x7ffff7d12000, 0x7ffff7d13000 }, /* /dev/zero */
		{ 0x7ffffffde000, 0x7ffffffff000 }, /* [stack]: no SP given */
	};
	expect("selection", maps_basic, NULL, 0, NULL, 0, NULL, 0, w, N(w));
	expect("empty", "", NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	/* A last line without a newline, and junk lines. */
	static const struct want w2[] = { { 0x1000, 0x3000 } };
	expect("no newline", "garbage\n\n1000-3000 rw-p 00000000 00:00 0",
	       NULL, 0, NULL, 0, NULL, 0, w2, N(w2));
}

/* heaptrace's own pages: the ring (a whole mapping) and a scratch page
   cut from the middle of a mapping, and an exclusion over two maps. */
static void
test_exclusions(void)
{
	static const char maps[] =
		"10000-20000 rw-s 00000000 00:01 9   /memfd:heaptrace-ring (deleted)\n"
		"20000-24000 rw-p 00000000 00:00 0 \n"
		"30000-34000 rw-p 00000000 00:00 0 \n"
		"34000-38000 rw-p 00000000 00:00 0 \n";
	static const struct leakroots_range ex[] = {
		{ 0x21000, 0x22000 },	/* a page inside */
		{ 0x10000, 0x20000 },	/* the ring, exactly */
		{ 0x33000, 0x35000 },	/* across two mappings */
	};
	static const struct want w[] = {
		{ 0x20000, 0x21000 }, { 0x22000, 0x24000 },
		{ 0x30000, 0x33000 }, { 0x35000, 0x38000 },
	};
	expect("exclusions", maps, ex, N(ex), NULL, 0, NULL, 0, w, N(w));
}

/* Stacks: cut below the lowest SP of the mapping minus 128, the main
   [stack] and an anonymous pthread stack; the red zone clamped at the
   mapping's start; a mapping with no SP (an exited thread's cached
   stack) whole; an SP in a file mapping cuts nothing. */
static void
test_stacks(void)
{
	static const char maps[] =
		"555555559000-55555555a000 rw-p 00005000 08:01 1234  /usr/bin/prog\n"
		"7ffff7000000-7ffff7001000 ---p 00000000 00:00 0 \n"
		"7ffff7001000-7ffff7801000 rw-p 00000000 00:00 0 \n"
		"7ffff7a00000-7ffff7a01000 ---p 00000000 00:00 0 \n"
		"7ffff7a01000-7ffff8201000 rw-p 00000000 00:00 0 \n"
		"7ffff8300000-7ffff8310000 rw-p 00000000 00:00 0 \n"
		"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0     [stack]\n";
	static const uint64_t sps[] = {
		0x7fffffffe010, /* main thread */
		0x7fffffffd000, /* a lower SP in the same [stack] */
		0x7ffff77ff000, /* a pthread */
		0x7ffff8300040, /* 64 bytes above its mapping's start */
		0x555555559800, /* in the data of the program: no cut */
	};
	static const struct want w[] = {
		{ 0x555555559000, 0x55555555a000 },
		{ 0x7ffff77ff000 - 128, 0x7ffff7801000 },
		{ 0x7ffff7a01000, 0x7ffff8201000 }, /* cached stack: whole */
		{ 0x7ffff8300000, 0x7ffff8310000 }, /* red zone clamped */
		{ 0x7fffffffd000 - 128, 0x7ffffffff000 },
	};
	expect("stacks", maps, NULL, 0, sps, N(sps), NULL, 0, w, N(w));
}

/* Live blocks cut out of the roots: in any order, adjacent ones, one at
   a mapping's start, one at its end, one spanning two mappings, one
   covering a mapping whole, one outside every root, and one of size 0. */
static void
test_blocks(void)
{
	static const char maps[] =
		"1000-5000 rw-p 00000000 00:00 0     [heap]\n"
		"5000-9000 rw-p 00000000 00:00 0 \n"
		"a000-b000 rw-p 00000000 00:00 0 \n"
		"c000-d000 rw-p 00000000 00:00 0 \n";
	struct leak_block b[] = {
		{ .addr = 0x2000, .size = 0x10 },
		{ .addr = 0x1000, .size = 0x20 },   /* at the start */
		{ .addr = 0x2010, .size = 0x30 },   /* adjacent to 0x2000 */
		{ .addr = 0x4ff0, .size = 0x20 },   /* spans 2 mappings */
		{ .addr = 0x8ff8, .size = 0x8 },    /* at the end */
		{ .addr = 0xa000, .size = 0x1000 }, /* the whole mapping */
		{ .addr = 0xb800, .size = 0x100 },  /* in no root */
		{ .addr = 0xc800, .size = 0 },      /* empty */
		{ .addr = 0x3000, .size = 0x100 },
		{ .addr = 0x3080, .size = 0x10 },   /* inside one (overlap) */
	};
	static const struct want w[] = {
		{ 0x1020, 0x2000 }, { 0x2040, 0x3000 }, { 0x3100, 0x4ff0 },
		{ 0x5010, 0x8ff8 }, { 0xc000, 0xd000 },
	};
	expect("blocks", maps, NULL, 0, NULL, 0, b, N(b), w, N(w));

	/* Everything together: a block in the stack above the SP, an
	   exclusion and a block meeting. */
	static const char maps2[] =
		"7ffffffde000-7ffffffff000 rw-p 00000000 00:00 0     [stack]\n"
		"800000-810000 rw-p 00000000 00:00 0 \n";
	uint64_t sp = 0x7fffffff0000;
	struct leak_block b2[] = {
		{ .addr = 0x7fffffff8000, .size = 0x100 },
		{ .addr = 0x7ffffffde000, .size = 0x100 }, /* below SP */
		{ .addr = 0x804000, .size = 0x1000 },
	};
	static const struct leakroots_range ex[] = { { 0x803000,
						       0x804000 } };
	static const struct want w2[] = {
		{ 0x800000, 0x803000 },
		{ 0x805000, 0x810000 },
		{ 0x7fffffff0000 - 128, 0x7fffffff8000 },
		{ 0x7fffffff8100, 0x7ffffffff000 },
	};
	expect("together", maps2, ex, N(ex), &sp, 1, b2, N(b2), w2, N(w2));
}

/* The reader on this process: whole, partial and page-crossing reads,
   a read running into an unmapped page is short, one starting there
   fails; then the /proc/self/mem fallback the same way. */
static void
test_reader(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 3 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	if (m == MAP_FAILED)
		return;
	CHECK(munmap(m + 2 * pg, pg) == 0, "munmap");
	for (long i = 0; i < 2 * pg; i++)
		m[i] = (uint8_t)(i * 7 + 3);
	uint64_t base = (uint64_t)(uintptr_t)m;
	uint8_t *buf = malloc(3 * pg);

	for (int pass = 0; pass < 2; pass++) {
		struct leakroots_reader r;
		leakroots_reader_init(&r, getpid());
		r.use_mem = pass; /* pass 1: /proc/PID/mem */
		const char *how = pass ? "mem" : "vm";
		ssize_t got;

		memset(buf, 0, 3 * pg);
		got = leakroots_read(&r, base + 5, buf, 100);
		CHECK(got == 100 && memcmp(buf, m + 5, 100) == 0,
		      "%s: small read %zd", how, got);
		got = leakroots_read(&r, base + 100, buf, pg);
		CHECK(got == pg && memcmp(buf, m + 100, pg) == 0,
		      "%s: page-crossing read %zd", how, got);
		got = leakroots_read(&r, base + pg - 8, buf, 2 * pg);
		CHECK(got == pg + 8 && memcmp(buf, m + pg - 8, pg + 8) == 0,
		      "%s: short read into the hole: %zd, want %ld", how, got,
		      pg + 8);
		got = leakroots_read(&r, base, buf, 3 * pg);
		CHECK(got == 2 * pg && memcmp(buf, m, 2 * pg) == 0,
		      "%s: read of all: %zd", how, got);
		got = leakroots_read(&r, base + 2 * pg, buf, 16);
		CHECK(got == -1, "%s: read in the hole: %zd", how, got);
		got = leakroots_read(&r, base + 2 * pg + 100, buf, pg);
		CHECK(got == -1, "%s: read from the hole on: %zd", how, got);
		got = leakroots_read(&r, base, buf, 0);
		CHECK(got == 0, "%s: empty read: %zd", how, got);
		/* A large read: more pages than one batch of iovecs. */
		size_t big = 1500 * (size_t)pg;
		uint8_t *bm = mmap(NULL, big, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint8_t *bb = malloc(big);
		if (bm != MAP_FAILED && bb) {
			for (size_t i = 0; i < big; i += 512)
				bm[i] = (uint8_t)(i >> 9);
			got = leakroots_read(&r, (uintptr_t)bm, bb, big);
			CHECK(got == (ssize_t)big && memcmp(bb, bm, big) == 0,
			      "%s: large read %zd", how, got);
		}
		if (bm != MAP_FAILED)
			munmap(bm, big);
		free(bb);
		CHECK(r.use_mem == pass, "%s: fell back", how);
		leakroots_reader_fini(&r);
	}
	free(buf);
	munmap(m, 2 * pg);
}

/* ---- a traced child with leaks ---- */

void *volatile g_keep; /* a global root of the child */

enum { K_GLOBAL, K_INHEAP, K_LOST, K_UNDERLOST, K_NBLOCKS };

/* Allocates the child's blocks; their addresses and sizes go to FD.
   Sizes are multiples of 16 so that glibc's top-chunk pointer never
   points inside one (it would be an interior pointer, in no root
   memcheck has). */
static __attribute__((noinline)) void
child_alloc(int fd)
{
	uint64_t msg[2 * K_NBLOCKS];
	void **a = malloc(64);	    /* kept in a global */
	void **b = malloc(32);	    /* only in A */
	void **c = malloc(48);	    /* pointer dropped */
	void **d = malloc(80);	    /* only in C: indirectly lost */
	memset(a, 0, 64);
	memset(b, 0, 32);
	memset(c, 0, 48);
	memset(d, 0, 80);
	a[0] = b;
	c[1] = d;
	g_keep = a;
	msg[0] = (uintptr_t)a, msg[1] = 64;
	msg[2] = (uintptr_t)b, msg[3] = 32;
	msg[4] = (uintptr_t)c, msg[5] = 48;
	msg[6] = (uintptr_t)d, msg[7] = 80;
	if (write(fd, msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		_exit(2);
	explicit_bzero(msg, sizeof(msg));
	__asm__ volatile("" : : : "memory");
}

/* Overwrites the stack below the caller, where stale copies of the
   pointers may still be. */
static __attribute__((noinline)) void
scrub(void)
{
	volatile char junk[32768];
	explicit_bzero((char *)junk, sizeof(junk));
}

static void
test_child(void)
{
#ifdef HAVE_ASAN
	fprintf(stderr, "traced child: skipped under AddressSanitizer\n");
	return;
#endif
	int p[2];
	CHECK(pipe(p) == 0, "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid < 0)
		return;
	if (pid == 0) {
		close(p[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(3);
		child_alloc(p[1]);
		close(p[1]);
		scrub();
		raise(SIGSTOP);
		_exit(0);
	}
	close(p[1]);
	uint64_t msg[2 * K_NBLOCKS];
	ssize_t n = read(p[0], msg, sizeof(msg));
	close(p[0]);
	int st;
	pid_t w = waitpid(pid, &st, 0);
	if (w == pid && WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		/* PTRACE_TRACEME refused: this test is itself traced. */
		fprintf(stderr, "traced child: skipped (already traced)\n");
		return;
	}
	CHECK(n == (ssize_t)sizeof(msg), "block list: %zd", n);
	CHECK(w == pid && WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP,
	      "child did not stop: %#x", st);
	if (n != (ssize_t)sizeof(msg) || w != pid || !WIFSTOPPED(st)) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return;
	}

	uint64_t regs[LEAKROOTS_NREGS], sp = 0;
	int rc = leakroots_thread_regs(pid, regs, &sp);
	CHECK(rc == 0, "regs: %d", rc);
	CHECK(sp != 0 && regs[6] == sp, "sp %#llx", (unsigned long long)sp);

	struct leak_block b[K_NBLOCKS];
	memset(b, 0, sizeof(b));
	for (int i = 0; i < K_NBLOCKS; i++) {
		b[i].addr = msg[2 * i];
		b[i].size = msg[2 * i + 1];
	}
	struct leak_root *roots;
	size_t nroots;
	rc = leakroots_of_pid(pid, NULL, 0, &sp, 1, b, K_NBLOCKS, &roots,
			      &nroots);
	CHECK(rc == 0 && nroots > 0, "roots: %d, %zu", rc, nroots);
	if (rc == 0) {
		/* No block memory is a root; the global is in one. */
		uint64_t g = (uintptr_t)&g_keep;
		int in_root = 0;
		for (size_t i = 0; i < nroots; i++) {
			for (int k = 0; k < K_NBLOCKS; k++)
				CHECK(roots[i].start + roots[i].len <=
						      b[k].addr ||
					      b[k].addr + b[k].size <=
						      roots[i].start,
				      "block %d in root %zu", k, i);
			if (g >= roots[i].start &&
			    g < roots[i].start + roots[i].len)
				in_root = 1;
		}
		CHECK(in_root, "the global is in no root");

		struct leakroots_reader r;
		leakroots_reader_init(&r, pid);
		uint64_t v = 0;
		CHECK(leakroots_read(&r, g, &v, 8) == 8 && v == b[K_GLOBAL].addr,
		      "child's global %#llx", (unsigned long long)v);
		struct leak_input in = {
			.blocks = b, .nblocks = K_NBLOCKS,
			.roots = roots, .nroots = nroots,
			.regs = regs, .nregs = LEAKROOTS_NREGS,
			.read = leakroots_read, .ctx = &r,
			.heuristics = LEAK_HEUR_ALL,
		};
		struct leak_totals t;
		leak_classify(&in, &t);
		CHECK(b[K_GLOBAL].kind == LEAK_REACHABLE, "global: %s",
		      leak_kind_name(b[K_GLOBAL].kind));
		CHECK(b[K_INHEAP].kind == LEAK_REACHABLE, "in heap: %s",
		      leak_kind_name(b[K_INHEAP].kind));
		CHECK(b[K_LOST].kind == LEAK_DEFINITE, "lost: %s",
		      leak_kind_name(b[K_LOST].kind));
		CHECK(b[K_LOST].indirect_bytes == 80 &&
			      b[K_LOST].indirect_blocks == 1,
		      "lost's clique: %llu bytes, %llu blocks",
		      (unsigned long long)b[K_LOST].indirect_bytes,
		      (unsigned long long)b[K_LOST].indirect_blocks);
		CHECK(b[K_UNDERLOST].kind == LEAK_INDIRECT &&
			      b[K_UNDERLOST].parent == K_LOST,
		      "under lost: %s, parent %zu",
		      leak_kind_name(b[K_UNDERLOST].kind),
		      b[K_UNDERLOST].parent);
		CHECK(t.bytes[LEAK_DEFINITE] == 48 &&
			      t.bytes[LEAK_INDIRECT] == 80 &&
			      t.bytes[LEAK_REACHABLE] == 96,
		      "totals %llu %llu %llu",
		      (unsigned long long)t.bytes[LEAK_DEFINITE],
		      (unsigned long long)t.bytes[LEAK_INDIRECT],
		      (unsigned long long)t.bytes[LEAK_REACHABLE]);
		fprintf(stderr,
			"traced child: %zu roots, %llu bytes scanned: %s %s "
			"%s %s\n",
			nroots, (unsigned long long)t.scanned_bytes,
			leak_kind_name(b[0].kind), leak_kind_name(b[1].kind),
			leak_kind_name(b[2].kind), leak_kind_name(b[3].kind));
		CHECK(t.unreadable_bytes == 0, "unreadable %llu",
		      (unsigned long long)t.unreadable_bytes);
		leakroots_reader_fini(&r);
		free(roots);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
}

/* ---- glibc's heaps (leakroots_glibc_heaps) ---- */

/* glibc's heap_info (malloc/arena.c) as the function reads it. */
struct fake_heap_info {
	uint64_t ar_ptr, prev, size, mprotect_size;
};

#define HEAP_MAX ((uint64_t)64 << 20)

/* A block glibc always maps alone: above the 32 MiB its mmap threshold
   can rise to (freeing a mapped block raises it to that block's size,
   and this process has freed some of several MiB). */
#define MAPPED_SIZE ((size_t)40 << 20)

/* glibc's own allocator, reached even under AddressSanitizer (which
   replaces malloc but not these), so that its chunks and arenas exist in
   every build. */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

/* Ranges OUT[0..N) are exactly WANT[0..NW). */
static void
expect_ranges(const char *what, const struct leakroots_range *out, size_t n,
	      const struct want *w, size_t nw)
{
	CHECK(n == nw, "%s: %zu ranges, want %zu", what, n, nw);
	for (size_t i = 0; i < n && i < nw; i++)
		CHECK(out[i].lo == w[i].start && out[i].hi == w[i].end,
		      "%s: range %zu is %#llx-%#llx, want %#llx-%#llx", what,
		      i, (unsigned long long)out[i].lo,
		      (unsigned long long)out[i].hi,
		      (unsigned long long)w[i].start,
		      (unsigned long long)w[i].end);
	if (n != nw)
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "  got %#llx-%#llx\n",
				(unsigned long long)out[i].lo,
				(unsigned long long)out[i].hi);
}

/* leakroots_glibc_heaps on MAPS through R, compared with WANT. */
static void
expect_heaps(const char *what, const char *maps, struct leakroots_reader *r,
	     const struct want *w, size_t nw)
{
	struct leakroots_range *out = NULL;
	size_t n = 0;
	int rc = leakroots_glibc_heaps(maps, r, &out, &n);
	CHECK(rc == 0, "%s: rc %d", what, rc);
	if (rc == 0)
		expect_ranges(what, out, n, w, nw);
	free(out);
}

static void
put_info(uint64_t at, uint64_t ar_ptr, uint64_t prev, uint64_t size,
	 uint64_t mprotect_size)
{
	struct fake_heap_info h = { ar_ptr, prev, size, mprotect_size };
	memcpy((void *)(uintptr_t)at, &h, sizeof(h));
}

/* Hand-made heaps in this process's memory, at 64 MiB aligned addresses
   of a PROT_NONE reservation (one page made writable at each), described
   by a hand-made maps text; read through a reader on this process. The
   [heap] is listed whole; an anonymous (or [anon:...]) mapping lists a
   heap from each aligned address holding a plausible heap_info, up to
   its mprotect_size or the mapping's end, never the part of the mapping
   below it (a large block's mapping the kernel merged with the heap);
   file, read-only, [stack] mappings and unreadable or implausible
   heap_infos are not heaps. Then the roots with these heaps excluded: a
   block in a file mapping or in an anonymous mapping without heap_info
   is cut out alone, the rest of those mappings stays a root. */
static void
test_glibc_heaps(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t span = 8 * HEAP_MAX;
	void *res = mmap(NULL, span, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(res != MAP_FAILED, "reserve: %s", strerror(errno));
	if (res == MAP_FAILED)
		return;
	uint64_t s[7];
	s[0] = ((uint64_t)(uintptr_t)res + HEAP_MAX - 1) & ~(HEAP_MAX - 1);
	for (int k = 1; k < 7; k++)
		s[k] = s[0] + (uint64_t)k * HEAP_MAX;
	for (int k = 0; k < 6; k++) /* s[6] stays unreadable */
		CHECK(mprotect((void *)(uintptr_t)s[k], pg,
			       PROT_READ | PROT_WRITE) == 0,
		      "mprotect %d", k);

	put_info(s[0], s[0] + 0x20, 0, 0x21000, 0x30000); /* first heap */
	put_info(s[1], s[0] + 0x20, s[0], 0x1000, 0x8000); /* a later one */
	put_info(s[2], s[2] + 0x20, 0, 0x1000, 0x1000);   /* in a file */
	put_info(s[3], s[3] + 0x20, 0, 0x1000, 0x1000);   /* read-only */
	put_info(s[4], s[4] + 0x20, 0, 0x2000, 0x4000);   /* two heaps in */
	put_info(s[5], s[4] + 0x20, s[4], 0x2000, 0x10000); /* one mapping */

	char maps[2048];
	snprintf(maps, sizeof(maps),
		 "1000-3000 rw-p 00000000 00:00 0     [heap]\n"
		 "%llx-%llx rw-p 00000000 00:00 0 \n"
		 "%llx-%llx rw-p 00000000 00:00 0     [anon:glibc heap]\n"
		 "%llx-%llx rw-p 00000000 08:01 99    /tmp/heap.img\n"
		 "%llx-%llx r--p 00000000 00:00 0 \n"
		 "%llx-%llx rw-p 00000000 00:00 0 \n"
		 "%llx-%llx rw-p 00000000 00:00 0 \n",
		 (unsigned long long)(s[0] - 0x100000),
		 (unsigned long long)(s[0] + 0x40000),
		 (unsigned long long)s[1], (unsigned long long)(s[1] + 0x5000),
		 (unsigned long long)s[2], (unsigned long long)(s[2] + 0x40000),
		 (unsigned long long)s[3], (unsigned long long)(s[3] + 0x40000),
		 (unsigned long long)(s[4] - 0x1000),
		 (unsigned long long)(s[5] + 0x3000),
		 (unsigned long long)s[6], (unsigned long long)(s[6] + 0x40000));

	struct leakroots_reader r;
	leakroots_reader_init(&r, getpid());
	const struct want w[] = {
		{ 0x1000, 0x3000 },		   /* [heap], whole */
		{ s[0], s[0] + 0x30000 },	   /* from s0, mprotect_size */
		{ s[1], s[1] + 0x5000 },	   /* cut at the mapping's end */
		{ s[4], s[4] + 0x4000 },	   /* two heaps, one mapping */
		{ s[5], s[5] + 0x3000 },
	};
	expect_heaps("glibc heaps", maps, &r, w, N(w));

	struct leakroots_range *heaps = NULL;
	size_t nheaps = 0;
	int rc = leakroots_glibc_heaps(maps, &r, &heaps, &nheaps);
	CHECK(rc == 0 && nheaps == N(w), "heaps again: %d %zu", rc, nheaps);
	if (rc == 0 && nheaps == N(w)) {
		/* The roots with the heaps left out, as the leak check asks:
		   a large block's mapping merged below s0 (the block cut
		   out), a block in the file mapping and one in the mapping
		   without heap_info cut out alone, and one in a heap. */
		uint64_t big = s[0] - 0x100000 + 16;
		struct leak_block b[] = {
			{ .addr = big, .size = 0xf0000 },
			{ .addr = s[2] + 0x100, .size = 0x40 },
			{ .addr = s[6] + 0x2000, .size = 0x1000 },
			{ .addr = s[0] + 0x1000, .size = 0x100 },
			{ .addr = 0x1100, .size = 0x20 }, /* in [heap] */
		};
		const struct want roots[] = {
			{ s[0] - 0x100000, big },
			{ big + 0xf0000, s[0] },
			{ s[0] + 0x30000, s[0] + 0x40000 },
			{ s[2], s[2] + 0x100 },
			{ s[2] + 0x140, s[2] + 0x40000 },
			{ s[4] - 0x1000, s[4] },
			{ s[4] + 0x4000, s[5] },
			{ s[6], s[6] + 0x2000 },
			{ s[6] + 0x3000, s[6] + 0x40000 },
		};
		expect("roots without the heaps", maps, heaps, nheaps, NULL,
		       0, b, N(b), roots, N(roots));
	}
	free(heaps);

	/* Each implausible heap_info, on one mapping whose plausible
	   heap_info (the first line) is listed. */
	char one[256];
	uint64_t a = s[4];
	snprintf(one, sizeof(one), "%llx-%llx rw-p 00000000 00:00 0 \n",
		 (unsigned long long)a, (unsigned long long)(a + 0x40000));
	const struct want w1[] = { { a, a + 0x8000 } };
	static const struct {
		const char *what;
		uint64_t ar_off, prev, size, mprotect_size;
		int prev_from_base, listed;
	} v[] = {
		{ "plausible first heap", 0x20, 0, 0x2000, 0x8000, 0, 1 },
		{ "plausible later heap", 0x20, 0, 0x2000, 0x8000, 1, 1 },
		{ "no arena", (uint64_t)-1, 0, 0x2000, 0x8000, 0, 0 },
		{ "arena beyond the first page", 0x2000, 0, 0x2000, 0x8000, 0,
		  0 },
		{ "arena before the heap", (uint64_t)-0x20, 0, 0x2000, 0x8000,
		  0, 0 },
		{ "unaligned prev", 0x20, 0x1000, 0x2000, 0x8000, 1, 0 },
		{ "size 0", 0x20, 0, 0, 0x8000, 0, 0 },
		{ "size past the mapping", 0x20, 0, 0x41000, 0x41000, 0, 0 },
		{ "mprotect_size below size", 0x20, 0, 0x2000, 0x1000, 0, 0 },
		{ "size above 64 MiB", 0x20, 0, HEAP_MAX + 0x1000,
		  HEAP_MAX + 0x1000, 0, 0 },
	};
	for (size_t i = 0; i < N(v); i++) {
		uint64_t ar = v[i].ar_off == (uint64_t)-1 ? 0 : a + v[i].ar_off;
		uint64_t prev = v[i].prev_from_base ? s[0] + v[i].prev : 0;
		put_info(a, ar, prev, v[i].size, v[i].mprotect_size);
		expect_heaps(v[i].what, one, &r, w1, v[i].listed ? 1 : 0);
	}

	/* A plausible heap_info in a [stack], and in a mapping holding no
	   64 MiB aligned address: not read as a heap. */
	put_info(a, a + 0x20, 0, 0x2000, 0x8000);
	snprintf(one, sizeof(one),
		 "%llx-%llx rw-p 00000000 00:00 0     [stack]\n"
		 "%llx-%llx rw-p 00000000 00:00 0 \n",
		 (unsigned long long)a, (unsigned long long)(a + 0x40000),
		 (unsigned long long)(a + 0x1000),
		 (unsigned long long)(a + 0x2000));
	expect_heaps("stack and unaligned", one, &r, NULL, 0);

	leakroots_reader_fini(&r);
	munmap(res, span);
}

static void *
arena_thread(void *arg)
{
	(void)arg;
	return __libc_malloc(200);
}

/* glibc's real heaps in this process: a block a new thread allocates
   (in a new arena) and one of the main thread's (in the [heap]) each lie
   in a listed heap; a mapped block, in a mapping of its own, does not;
   the heaps come in address order. */
static void
test_glibc_heaps_real(void)
{
	/* The main thread first: the first thread to call glibc's malloc
	   gets the main arena (with AddressSanitizer, nothing has yet). */
	void *mb = __libc_malloc(200);
	pthread_t th;
	void *tb = NULL;
	CHECK(pthread_create(&th, NULL, arena_thread, NULL) == 0,
	      "pthread_create");
	CHECK(pthread_join(th, &tb) == 0 && tb, "thread's block");
	void *big = __libc_malloc(MAPPED_SIZE);
	CHECK(mb && big, "malloc");
	char *maps = NULL;
	int rc = leakroots_read_maps(getpid(), &maps);
	CHECK(rc == 0, "maps: %d", rc);
	struct leakroots_reader r;
	leakroots_reader_init(&r, getpid());
	struct leakroots_range *h = NULL;
	size_t n = 0;
	if (rc == 0)
		rc = leakroots_glibc_heaps(maps, &r, &h, &n);
	CHECK(rc == 0, "glibc heaps: %d", rc);
	int in_t = -1, in_m = -1, in_big = -1;
	for (size_t i = 0; i < n; i++) {
		if (i)
			CHECK(h[i - 1].hi <= h[i].lo, "heaps %zu, %zu unordered",
			      i - 1, i);
		uint64_t t = (uintptr_t)tb, m = (uintptr_t)mb,
			 g = (uintptr_t)big;
		if (t >= h[i].lo && t + 200 <= h[i].hi)
			in_t = (int)i;
		if (m >= h[i].lo && m + 200 <= h[i].hi)
			in_m = (int)i;
		if (g < h[i].hi && g + MAPPED_SIZE > h[i].lo)
			in_big = (int)i;
	}
	CHECK(in_t >= 0, "the thread's block %p in no heap", tb);
	if (in_t >= 0)
		CHECK(h[in_t].lo % HEAP_MAX == 0,
		      "the thread's heap at %#llx is not 64 MiB aligned",
		      (unsigned long long)h[in_t].lo);
	CHECK(in_m >= 0 && in_m != in_t, "the main block %p: heap %d", mb,
	      in_m);
	CHECK(in_big < 0, "the mapped block %p is in heap %d", big, in_big);
	free(h);
	leakroots_reader_fini(&r);
	free(maps);
	__libc_free(big);
	__libc_free(mb);
	__libc_free(tb);
}

/* ---- Copies of the target's memory (leakroots_reader_copy) ---- */

/* A reader on this process: copies of ranges are read from the copy after
   the memory changes, a read running past a copy's end goes on in live
   memory (or into the next copy), leakroots_view gives the copy's bytes
   for ranges inside one copy and NULL otherwise; a copy stops at the
   first unreadable page, nothing is copied of an unreadable range, and
   no copy goes beyond LEAKROOTS_COPY_MAX bytes in all. */
static void
test_reader_copy(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 6 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap: %s", strerror(errno));
	if (m == MAP_FAILED)
		return;
	CHECK(munmap(m + 5 * pg, pg) == 0, "munmap");
	for (long i = 0; i < 5 * pg; i++)
		m[i] = (uint8_t)(i * 13 + 1);
	uint8_t *old = malloc(5 * pg);
	memcpy(old, m, 5 * pg);
	uint64_t base = (uintptr_t)m;

	struct leakroots_reader r;
	leakroots_reader_init(&r, getpid());
	CHECK(leakroots_reader_copy(&r, base, base + 2 * pg) == 0, "copy 1");
	CHECK(leakroots_reader_copy(&r, base + 2 * pg, base + 3 * pg) == 0,
	      "copy 2");
	/* runs into the unmapped page: holds pages 3 and 4 only */
	CHECK(leakroots_reader_copy(&r, base + 3 * pg, base + 7 * pg) == 0,
	      "copy 3");
	/* wholly unreadable: no copy */
	CHECK(leakroots_reader_copy(&r, base + 5 * pg, base + 6 * pg) == 0,
	      "copy of nothing");
	CHECK(r.n_copies == 3, "%zu copies", r.n_copies);
	CHECK(r.copied == (size_t)5 * pg, "%zu bytes copied", r.copied);
	if (r.n_copies == 3)
		CHECK(r.copies[2].lo == base + 3 * pg &&
			      r.copies[2].hi == base + 5 * pg,
		      "copy 3 is %#llx-%#llx",
		      (unsigned long long)r.copies[2].lo,
		      (unsigned long long)r.copies[2].hi);

	/* The memory changes after the copies. */
	for (long i = 0; i < 5 * pg; i++)
		m[i] = (uint8_t)~old[i];

	uint8_t buf[256];
	ssize_t got = leakroots_read(&r, base + 100, buf, 64);
	CHECK(got == 64 && memcmp(buf, old + 100, 64) == 0,
	      "read in copy 1: %zd", got);
	/* across copies 1 and 2: both copied */
	got = leakroots_read(&r, base + 2 * pg - 32, buf, 64);
	CHECK(got == 64 && memcmp(buf, old + 2 * pg - 32, 64) == 0,
	      "read across two copies: %zd", got);
	/* past the end of copy 3: copied bytes, then nothing readable */
	got = leakroots_read(&r, base + 5 * pg - 16, buf, 64);
	CHECK(got == 16 && memcmp(buf, old + 5 * pg - 16, 16) == 0,
	      "read past the last copy: %zd", got);

	const uint8_t *v = leakroots_view(&r, base + 8, 16);
	CHECK(v && memcmp(v, old + 8, 16) == 0, "view in copy 1");
	v = leakroots_view(&r, base, 2 * (size_t)pg);
	CHECK(v && memcmp(v, old, 2 * pg) == 0, "view of copy 1 whole");
	v = leakroots_view(&r, base + 3 * pg, 2 * (size_t)pg);
	CHECK(v && memcmp(v, old + 3 * pg, 2 * pg) == 0, "view of copy 3");
	CHECK(leakroots_view(&r, base + 2 * pg - 8, 16) == NULL,
	      "view across two copies");
	CHECK(leakroots_view(&r, base, 2 * (size_t)pg + 1) == NULL,
	      "view one byte past a copy");
	CHECK(leakroots_view(&r, base + 5 * pg - 8, 16) == NULL,
	      "view past the last copy");
	CHECK(leakroots_view(&r, base - 8, 16) == NULL,
	      "view from before the copies");
	CHECK(leakroots_view(&r, base + 5 * pg, 8) == NULL,
	      "view outside the copies");
	leakroots_reader_fini(&r);
	CHECK(r.n_copies == 0 && r.copied == 0 && r.copies == NULL,
	      "fini kept copies");

	/* A read running from a copy into live memory gets the live bytes
	   after it. */
	leakroots_reader_init(&r, getpid());
	CHECK(leakroots_reader_copy(&r, base + pg, base + 2 * pg) == 0,
	      "copy of page 1");
	for (long i = 0; i < 5 * pg; i++)
		m[i] = old[i];
	got = leakroots_read(&r, base + 2 * pg - 16, buf, 48);
	uint8_t want[48];
	for (int i = 0; i < 16; i++)
		want[i] = (uint8_t)~old[2 * pg - 16 + i];
	memcpy(want + 16, old + 2 * pg, 32);
	CHECK(got == 48 && memcmp(buf, want, 48) == 0,
	      "read from a copy into live memory: %zd", got);

	/* LEAKROOTS_COPY_MAX: with all but one page held, two pages are
	   not copied (they are read live), one page is. */
	r.copied = LEAKROOTS_COPY_MAX - (size_t)pg;
	CHECK(leakroots_reader_copy(&r, base + 3 * pg, base + 5 * pg) == 0,
	      "copy over the limit");
	CHECK(r.n_copies == 1 && r.copied == LEAKROOTS_COPY_MAX - (size_t)pg,
	      "over the limit: %zu copies, %zu bytes", r.n_copies, r.copied);
	CHECK(leakroots_view(&r, base + 3 * pg, 8) == NULL,
	      "view of what was not copied");
	CHECK(leakroots_reader_copy(&r, base + 3 * pg, base + 4 * pg) == 0,
	      "copy up to the limit");
	CHECK(r.n_copies == 2 && r.copied == LEAKROOTS_COPY_MAX,
	      "up to the limit: %zu copies, %zu bytes", r.n_copies,
	      r.copied);
	CHECK(leakroots_reader_copy(&r, base + 4 * pg, base + 4 * pg + 8) ==
		      0 && r.n_copies == 2,
	      "copy beyond a full reader");
	leakroots_reader_fini(&r);
	free(old);
	munmap(m, 5 * pg);
}

/* The same on a child process: a page copied from it keeps its bytes
   after the child changes them, the page after it reads the change. */
static void
test_reader_copy_child(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	int to_child[2], to_parent[2];
	CHECK(pipe(to_child) == 0 && pipe(to_parent) == 0, "pipe");
	pid_t pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid < 0)
		return;
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		uint8_t *c = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (c == MAP_FAILED)
			_exit(2);
		memset(c, 0xa5, 2 * pg);
		uint64_t a = (uintptr_t)c;
		char go;
		if (write(to_parent[1], &a, sizeof(a)) != sizeof(a) ||
		    read(to_child[0], &go, 1) != 1)
			_exit(3);
		memset(c, 0x5a, 2 * pg);
		if (write(to_parent[1], &go, 1) != 1)
			_exit(4);
		while (read(to_child[0], &go, 1) > 0)
			;
		_exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	uint64_t a = 0;
	char go = 'g';
	CHECK(read(to_parent[0], &a, sizeof(a)) == sizeof(a), "child's page");
	struct leakroots_reader r;
	leakroots_reader_init(&r, pid);
	CHECK(leakroots_reader_copy(&r, a, a + pg) == 0 && r.n_copies == 1,
	      "copy of the child's page: %zu copies", r.n_copies);
	CHECK(write(to_child[1], &go, 1) == 1 &&
		      read(to_parent[0], &go, 1) == 1,
	      "child did not change its page");
	uint8_t buf[32], want[32];
	ssize_t got = leakroots_read(&r, a + 64, buf, 32);
	memset(want, 0xa5, 32);
	CHECK(got == 32 && memcmp(buf, want, 32) == 0,
	      "child: read in the copy %zd, %#x", got, buf[0]);
	got = leakroots_read(&r, a + pg - 16, buf, 32);
	memset(want + 16, 0x5a, 16);
	CHECK(got == 32 && memcmp(buf, want, 32) == 0,
	      "child: read past the copy %zd, %#x %#x", got, buf[0], buf[16]);
	const uint8_t *v = leakroots_view(&r, a, (size_t)pg);
	CHECK(v && v[0] == 0xa5 && v[pg - 1] == 0xa5, "child: view");
	CHECK(leakroots_view(&r, a + pg, 8) == NULL, "child: view past");
	leakroots_reader_fini(&r);
	close(to_child[1]);
	close(to_parent[0]);
	int st;
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		      WEXITSTATUS(st) == 0,
	      "child status %#x", st);
}

/* ---- Vtables (leakroots_index_maps, leakroots_is_vtable) ---- */

static __attribute__((noinline)) int
vt_fn_a(int x)
{
	return x + 1;
}

static __attribute__((noinline)) int
vt_fn_b(int x)
{
	return x * 3;
}

struct fake_line {
	uint64_t lo, hi;
	char text[200];
};

static int
cmp_line(const void *a, const void *b)
{
	const struct fake_line *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* A maps text of hand-made file mappings over pages of this process,
   with the real executable mapping of this test's code: words in a page
   called a readable file mapping are vtables when 2 of their first 20
   point into the code (memcheck's rule), read through a reader on this
   process. */
static void
test_vtable(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t fa = (uintptr_t)vt_fn_a, fb = (uintptr_t)vt_fn_b;
	CHECK(vt_fn_a(1) + vt_fn_b(1) == 5, "functions");

	/* This binary's code mapping, as /proc/self/maps has it. */
	char *self = NULL;
	CHECK(leakroots_read_maps(getpid(), &self) == 0, "maps");
	uint64_t xlo = 0, xhi = 0;
	for (char *line = self; line && *line;) {
		char *nl = strchr(line, '\n');
		unsigned long lo, hi;
		char perms[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
		    fa >= lo && fa < hi) {
			CHECK(perms[2] == 'x', "code mapping %s", perms);
			xlo = lo;
			xhi = hi;
		}
		line = nl ? nl + 1 : NULL;
	}
	free(self);
	CHECK(xlo && fb >= xlo && fb < xhi, "code mapping of the test");
	if (!xlo)
		return;

	/* P0: the "vtables" (a readable file mapping), P1: unmapped, P2:
	   anonymous, P3: an executable-only file mapping, P4: a file
	   mapping with no access. */
	uint8_t *m = mmap(NULL, 5 * pg, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	CHECK(munmap(m + pg, pg) == 0, "munmap");
	uint64_t p0 = (uintptr_t)m, p2 = p0 + 2 * pg, p3 = p0 + 3 * pg,
		 p4 = p0 + 4 * pg;
	struct fake_line lines[] = {
		{ p0, p0 + pg, "r--p 00000000 08:01 41   /fake/libvt.so" },
		{ p2, p2 + pg, "rw-p 00000000 00:00 0 " },
		{ p3, p3 + pg, "--xp 00001000 08:01 42   /fake/exec-only.so" },
		{ p4, p4 + pg, "---p 00002000 08:01 42   /fake/exec-only.so" },
		{ xlo, xhi, "r-xp 00001000 08:01 43   /fake/test_leakroots" },
		{ 0x1000, 0x2000, "rw-p 00000000 00:00 0     [heap]" },
	};
	qsort(lines, N(lines), sizeof(lines[0]), cmp_line);
	char maps[2048];
	size_t len = 0;
	for (size_t i = 0; i < N(lines); i++)
		len += (size_t)snprintf(maps + len, sizeof(maps) - len,
					"%llx-%llx %s\n",
					(unsigned long long)lines[i].lo,
					(unsigned long long)lines[i].hi,
					lines[i].text);

	struct leakroots_maps ix;
	CHECK(leakroots_index_maps(maps, &ix) == 0, "index");
	/* the file mappings that are readable or executable */
	CHECK(ix.n == 3, "%zu file mappings indexed", ix.n);
	for (size_t i = 0; i < ix.n; i++) {
		const struct leakroots_map *e = &ix.v[i];
		if (i)
			CHECK(ix.v[i - 1].hi <= e->lo, "index unordered");
		if (e->lo == p0)
			CHECK(e->hi == p0 + pg && e->readable && !e->executable,
			      "P0 indexed as %d %d", e->readable,
			      e->executable);
		else if (e->lo == p3)
			CHECK(!e->readable && e->executable,
			      "P3 indexed as %d %d", e->readable,
			      e->executable);
		else
			CHECK(e->lo == xlo && e->hi == xhi && e->readable &&
				      e->executable,
			      "mapping %#llx indexed",
			      (unsigned long long)e->lo);
	}

	uint64_t *w0 = (uint64_t *)m, *w2 = (uint64_t *)(m + 2 * pg),
		 *w3 = (uint64_t *)(m + 3 * pg), *w4 = (uint64_t *)(m + 4 * pg);
	/* 32 words per case in P0 */
	enum { TWO, ONE, TWENTIETH, TWENTYFIRST, DATA, SAME, JUNK1, JUNK2,
	       NCASES };
	uint64_t *c[NCASES];
	for (int i = 0; i < NCASES; i++)
		c[i] = w0 + 32 * i;
	c[TWO][0] = fa, c[TWO][1] = fb;
	c[ONE][5] = fa;
	c[TWENTIETH][0] = fa, c[TWENTIETH][19] = fb;
	c[TWENTYFIRST][0] = fa, c[TWENTYFIRST][20] = fb;
	c[DATA][0] = p0 + 8, c[DATA][1] = p0 + 16; /* readable, not code */
	c[SAME][3] = fa, c[SAME][4] = fa;
	c[JUNK1][0] = 0x1234, c[JUNK1][1] = p2, c[JUNK1][2] = fb,
	c[JUNK1][3] = 0x1010, c[JUNK1][4] = xhi;
	c[JUNK2][0] = 0x1234, c[JUNK2][1] = p2, c[JUNK2][2] = fb,
	c[JUNK2][3] = 0x1010, c[JUNK2][9] = xlo;
	/* two code pointers in the last 2 words before the hole */
	uint64_t *end = (uint64_t *)(m + pg) - 2;
	end[0] = fa, end[1] = fb;
	/* code pointers in the anonymous, exec-only and no-access pages */
	w2[0] = fa, w2[1] = fb;
	w3[0] = fa, w3[1] = fb;
	w4[0] = fa, w4[1] = fb;

	struct leakroots_reader r;
	leakroots_reader_init(&r, getpid());
	static const struct {
		const char *what;
		bool want;
	} cases[NCASES] = {
		[TWO] = { "2 code pointers", true },
		[ONE] = { "1 code pointer", false },
		[TWENTIETH] = { "the 2nd in the 20th word", true },
		[TWENTYFIRST] = { "the 2nd in the 21st word", false },
		[DATA] = { "pointers into a data file mapping", false },
		[SAME] = { "the same function twice", true },
		[JUNK1] = { "1 code pointer among junk", false },
		[JUNK2] = { "2 code pointers among junk", true },
	};
	for (int i = 0; i < NCASES; i++) {
		bool got = leakroots_is_vtable(&ix, &r, (uintptr_t)c[i]);
		CHECK(got == cases[i].want, "%s: %d", cases[i].what, got);
	}
	CHECK(leakroots_is_vtable(&ix, &r, (uintptr_t)end),
	      "2 code pointers before an unreadable page");
	CHECK(!leakroots_is_vtable(&ix, &r, p2),
	      "vtable in an anonymous mapping");
	CHECK(!leakroots_is_vtable(&ix, &r, p3),
	      "vtable in an executable-only file mapping");
	CHECK(!leakroots_is_vtable(&ix, &r, p4),
	      "vtable in a file mapping with no access");
	CHECK(!leakroots_is_vtable(&ix, &r, 0x1000), "vtable in the [heap]");
	CHECK(!leakroots_is_vtable(&ix, &r, p0 + pg),
	      "vtable in the unmapped page");
	leakroots_reader_fini(&r);
	leakroots_maps_fini(&ix);
	CHECK(ix.v == NULL && ix.n == 0, "maps_fini");
	munmap(m, pg);
	munmap(m + 2 * pg, 3 * pg);
}

/* ---- glibc's pointer to the next chunk ---- */

/* Hand-made chunk headers (the size word at LO - 8), then real glibc
   blocks of this process: a 24-byte one (a 32-byte chunk) and a mapped
   one (IS_MMAPPED: never). */
static void
test_chunk_pointer(void)
{
	struct leakroots_reader r;
	leakroots_reader_init(&r, getpid());
	_Alignas(16) uint64_t chunk[16] = { 0 };
	uint64_t lo = (uintptr_t)&chunk[2];
	chunk[1] = 48 | 1; /* PREV_INUSE */
	CHECK(leakroots_glibc_chunk_pointer(&r, lo + 32, lo),
	      "next chunk of a 48-byte chunk");
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 16, lo), "lo + 16");
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 8, lo), "lo + 8");
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 48, lo), "lo + 48");
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 40, lo), "lo + 40");
	chunk[1] = 48 | 1 | 4; /* NON_MAIN_ARENA too */
	CHECK(leakroots_glibc_chunk_pointer(&r, lo + 32, lo),
	      "next chunk of a non-main arena's chunk");
	chunk[1] = 48 | 2; /* IS_MMAPPED */
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 32, lo),
	      "next chunk of an mmapped chunk");
	chunk[1] = 56 | 1; /* no chunk of glibc's: its next one unaligned */
	CHECK(!leakroots_glibc_chunk_pointer(&r, lo + 40, lo),
	      "next chunk not 16-byte aligned");
	chunk[1] = 48 | 1;
	CHECK(!leakroots_glibc_chunk_pointer(&r, 16, 8), "block below 16");
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * pg, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m != MAP_FAILED) {
		CHECK(mprotect(m + pg, pg, PROT_READ | PROT_WRITE) == 0,
		      "mprotect");
		uint64_t ulo = (uintptr_t)(m + pg); /* size word unreadable */
		CHECK(!leakroots_glibc_chunk_pointer(&r, ulo + 32, ulo),
		      "unreadable size word");
		munmap(m, 2 * pg);
	}

	uint8_t *b = __libc_malloc(24);
	uint8_t *g = __libc_malloc(MAPPED_SIZE);
	CHECK(b && g, "malloc");
	if (b && g) {
		uint64_t bs, gs;
		memcpy(&bs, b - 8, 8);
		memcpy(&gs, g - 8, 8);
		CHECK((bs & ~(uint64_t)7) == 32 && !(bs & 2),
		      "glibc's 24-byte chunk %#llx", (unsigned long long)bs);
		CHECK(gs & 2, "glibc's mapped chunk %#llx",
		      (unsigned long long)gs);
		uint64_t blo = (uintptr_t)b, glo = (uintptr_t)g;
		CHECK(leakroots_glibc_chunk_pointer(&r, blo + 16, blo),
		      "next chunk of a real 24-byte block");
		CHECK(!leakroots_glibc_chunk_pointer(&r, blo + 8, blo),
		      "8 bytes into a real 24-byte block");
		CHECK(!leakroots_glibc_chunk_pointer(
			      &r, glo - 16 + (gs & ~(uint64_t)7), glo),
		      "after a real mmapped block");
		CHECK(!leakroots_glibc_chunk_pointer(&r, glo + 16, glo),
		      "16 bytes into a real mmapped block");
	}
	__libc_free(g);
	__libc_free(b);
	leakroots_reader_fini(&r);
}

int
main(void)
{
	test_selection();
	test_exclusions();
	test_stacks();
	test_blocks();
	test_reader();
	test_glibc_heaps();
	test_glibc_heaps_real();
	test_reader_copy();
	test_reader_copy_child();
	test_vtable();
	test_chunk_pointer();
	test_child();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
