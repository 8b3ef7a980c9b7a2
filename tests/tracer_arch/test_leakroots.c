/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tracer/leakroots.c: root selection from hand-made maps texts (each
   memcheck rule: permissions, kernel and device mappings, heaptrace's own
   pages, stacks cut at the lowest SP minus the red zone, live blocks cut
   out, edges), the memory reader on this process (a short read at an
   unmapped page), and a traced child whose leaks leak_classify must find
   from its roots, memory and registers. */
#include <errno.h>
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
#include "tracer/leakroots.h"

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

int
main(void)
{
	test_selection();
	test_exclusions();
	test_stacks();
	test_blocks();
	test_reader();
	test_child();
	if (failures)
		fprintf(stderr, "%d failure(s)\n", failures);
	return failures ? 1 : 0;
}
