/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process for `heaptrace attach` to attach to and detach from
   (tests/run/attach.sh). It announces itself with "ready\n" on stdout
   (no stdio: its buffer would be an allocation), then, by MODE:

   threads SECONDS  four threads fill blocks with patterns (malloc, calloc,
                    realloc, posix_memalign), check every byte and free
                    them, and map and unmap a page range, for SECONDS
                    (0: until end of input on stdin);
                    exit 0 when every check passed, 1 (with a line on
                    stderr) otherwise.
   crowded          as threads 0, after taking (with 4 KiB of PROT_NONE)
                    every address 32 MiB apart within 768 MiB of each
                    MiB of its executable mappings: where heaptrace looks
                    for room for its scratch pages first, as the pages
                    left by many killed sessions would.
   read             one read() on stdin, blocking; exit 0 when it got
                    "hello" (no EINTR, nothing lost), else 1.
   sleep MS         one nanosleep of MS milliseconds; exit 0 when at least
                    MS passed, else 1.
   alloc            wait for a byte on stdin, then malloc 3 x 1000 bytes
                    and free one (all from alloc_three), say "done\n",
                    wait for a second byte, and exit 0.
   unknown          as alloc, with two blocks made before "ready" (500 and
                    700 bytes): after alloc_three the first is freed and
                    the second realloc'd to 1500 bytes (in touch_old).
   signals          two threads malloc, check and free small blocks in a
                    loop while a third sends each a SIGUSR1 about every
                    50 us, whose handler mallocs, checks and frees 300
                    blocks itself (unless it interrupted libc: glibc's
                    malloc is not async-signal-safe), until end of input
                    on stdin: a thread is nearly always in its handler,
                    interrupted as often as not inside an allocator call
                    (in the inline stub, attached); exit 0 when every
                    check passed and every thread's handler allocated,
                    1 otherwise.

   Built with ATTACHEE_OWN_MALLOC, the executable defines malloc and free
   itself, forwarding to glibc's __libc_malloc and __libc_free: heaptrace
   then patches code both in the executable and in libc, too far apart
   for one scratch page to serve both (as with redis, whose jemalloc is
   in its executable). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#define THREADS 4

static volatile int stop;
static volatile int failed;

static void
say(const char *s)
{
	ssize_t w = write(1, s, strlen(s));
	(void)w;
}

static void
fail(const char *s)
{
	ssize_t w = write(2, s, strlen(s));
	(void)w;
	failed = 1;
}

#ifdef ATTACHEE_OWN_MALLOC
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

void *
malloc(size_t n)
{
	return __libc_malloc(n);
}

void
free(void *p)
{
	__libc_free(p);
}
#endif

static void
fill(unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7);
}

static int
check(const unsigned char *p, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(seed * 31 + i * 7))
			return 0;
	return 1;
}

static void *
worker(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;
	unsigned char *held[16] = { 0 };
	size_t size[16] = { 0 };
	while (!stop) {
		/* page calls too: they must not fail (ENOSYS) after a
		   --pages-as-heap=yes session */
		unsigned char *pg = mmap(NULL, 65536, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pg == MAP_FAILED) {
			fail("attachee: mmap failed\n");
		} else {
			pg[0] = pg[65535] = 1;
			if (munmap(pg, 65536))
				fail("attachee: munmap failed\n");
		}
		for (int k = 0; k < 16; k++) {
			seed = seed * 1103515245u + 12345u;
			if (held[k]) {
				if (!check(held[k], size[k], (unsigned)k + size[k]))
					fail("attachee: a block changed\n");
				if (seed & 1) {
					size_t nsz = 16 + (seed >> 8) % 3000;
					unsigned char *q = realloc(held[k], nsz);
					size_t keep = nsz < size[k] ? nsz : size[k];
					if (!q || !check(q, keep, (unsigned)k + size[k]))
						fail("attachee: realloc lost bytes\n");
					held[k] = q;
					size[k] = nsz;
					fill(q, nsz, (unsigned)k + nsz);
					continue;
				}
				free(held[k]);
				held[k] = NULL;
				continue;
			}
			size[k] = 1 + (seed >> 8) % 4000;
			void *m = NULL;
			switch ((seed >> 4) % 3) {
			case 0:
				m = malloc(size[k]);
				break;
			case 1:
				m = calloc(1, size[k]);
				break;
			default:
				if (posix_memalign(&m, 64, size[k]))
					m = NULL;
				break;
			}
			if (!m) {
				fail("attachee: allocation failed\n");
				continue;
			}
			held[k] = m;
			fill(held[k], size[k], (unsigned)k + size[k]);
		}
	}
	for (int k = 0; k < 16; k++)
		free(held[k]);
	return NULL;
}

static uint64_t
now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int
run_threads(unsigned seconds)
{
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, worker,
				   (void *)(uintptr_t)(i + 1)))
			return 3;
	say("ready\n");
	if (seconds == 0) {
		/* Until end of input: as long as the test needs, however
		   slow a loaded machine makes its attaches. */
		for (;;) {
			char c;
			ssize_t n = read(0, &c, 1);
			if (n == 0 || (n < 0 && errno != EINTR))
				break;
		}
	} else {
		uint64_t end = now_ms() + seconds * 1000ULL;
		while (now_ms() < end)
			usleep(10000);
	}
	stop = 1;
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	return failed;
}

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static void
take_hints(uintptr_t lo, uintptr_t hi)
{
	for (uintptr_t mib = lo & ~(uintptr_t)0xfffff; mib < hi;
	     mib += 1 << 20) {
		for (int k = -24; k <= 24; k++) {
			uintptr_t at = mib + (uintptr_t)((intptr_t)k << 25);
			if (k && at > 0x10000)
				mmap((void *)at, 4096, PROT_NONE,
				     MAP_PRIVATE | MAP_ANONYMOUS |
					     MAP_FIXED_NOREPLACE,
				     -1, 0); /* taken already: as good */
		}
	}
}

/* Every executable file mapping's hints taken (see "crowded"). */
static int
crowd(void)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	static char text[1 << 16];
	ssize_t n = fd < 0 ? -1 : read(fd, text, sizeof(text) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	text[n] = 0;
	uintptr_t ranges[64][2];
	int nr = 0;
	for (char *line = text; *line && nr < 64;) {
		char *end = strchr(line, '\n');
		if (end)
			*end = 0;
		unsigned long lo, hi;
		char perms[5];
		if (sscanf(line, "%lx-%lx %4s", &lo, &hi, perms) == 3 &&
		    perms[2] == 'x' && strchr(line, '/')) {
			ranges[nr][0] = lo;
			ranges[nr++][1] = hi;
		}
		line = end ? end + 1 : line + strlen(line);
	}
	/* after reading: the mappings made change the list */
	for (int i = 0; i < nr; i++)
		take_hints(ranges[i][0], ranges[i][1]);
	return nr;
}

static int
run_read(void)
{
	say("ready\n");
	char buf[16];
	ssize_t n = read(0, buf, sizeof(buf));
	if (n < 0) {
		fail(errno == EINTR ? "attachee: read: EINTR\n"
				    : "attachee: read failed\n");
		return 1;
	}
	return n == 5 && memcmp(buf, "hello", 5) == 0 ? 0 : 1;
}

static int
run_sleep(unsigned ms)
{
	say("ready\n");
	uint64_t t0 = now_ms();
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (long)(ms % 1000) * 1000000 };
	if (nanosleep(&ts, NULL)) {
		fail("attachee: nanosleep interrupted\n");
		return 1;
	}
	if (now_ms() - t0 + 1 < ms) {
		fail("attachee: woke up early\n");
		return 1;
	}
	return 0;
}

static void *kept[3];

__attribute__((noinline)) static void
alloc_three(void)
{
	for (int i = 0; i < 3; i++)
		kept[i] = malloc(1000);
	free(kept[1]);
}

static void *old_blocks[2];

__attribute__((noinline)) static void
touch_old(void)
{
	free(old_blocks[0]);
	old_blocks[1] = realloc(old_blocks[1], 1500);
}

static int
run_alloc(int unknown)
{
	char c;
	if (unknown) {
		old_blocks[0] = malloc(500);
		old_blocks[1] = malloc(700);
	}
	say("ready\n");
	if (read(0, &c, 1) != 1)
		return 1;
	alloc_three();
	if (unknown)
		touch_old();
	say("done\n");
	if (read(0, &c, 1) != 1)
		return 1;
	return 0;
}

/* One block of 8 to 207 bytes through malloc, its bytes checked before
   the free. */
static void
churn(unsigned seed)
{
	size_t n = 8 + seed % 200;
	unsigned char *p = malloc(n);
	if (!p) {
		fail("attachee: malloc failed\n");
		return;
	}
	fill(p, n, seed);
	if (!check(p, n, seed))
		fail("attachee: a block changed\n");
	free(p);
}

static volatile sig_atomic_t handled[2];
static volatile pid_t churner_tid[2];
static uintptr_t libc_lo, libc_hi; /* the code of malloc's library */

/* [*LO, *HI): the executable mapping that holds ADDR. */
static int
code_around(uintptr_t addr, uintptr_t *lo, uintptr_t *hi)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		char perms[5];
		if (sscanf(line, "%lx-%lx %4s", &a, &b, perms) == 3 &&
		    perms[2] == 'x' && addr >= a && addr < b) {
			*lo = a;
			*hi = b;
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* glibc's malloc is not async-signal-safe (its per-thread cache is
   updated in steps), so the handler allocates only when the thread was
   interrupted outside libc's code: in the program, in the inline stub
   (what this mode is for), or in a trampoline. */
static void
on_usr1(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)si;
	uintptr_t pc = (uintptr_t)((ucontext_t *)uc)->uc_mcontext.gregs[REG_RIP];
	if (pc >= libc_lo && pc < libc_hi)
		return;
	int saved = errno;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	for (unsigned i = 0; i < 300; i++)
		churn(i * 13 + 7);
	handled[tid == churner_tid[1]] = 1;
	errno = saved;
}

static void *
churner(void *arg)
{
	unsigned who = (unsigned)(uintptr_t)arg;
	/* Every size the handler takes has been freed once: glibc's
	   per-thread cache made and never empty for it, so that a handler
	   never needs the arena lock that the call it interrupted may
	   hold. */
	for (unsigned seed = 0; seed < 200; seed++)
		churn(seed);
	churner_tid[who] = (pid_t)syscall(SYS_gettid);
	/* one byte checked: most of the time in the allocator's calls */
	for (unsigned seed = who; !stop; seed++) {
		unsigned char *p = malloc(8 + seed % 200);
		if (!p) {
			fail("attachee: malloc failed\n");
			continue;
		}
		*(volatile unsigned char *)p = (unsigned char)seed;
		if (*(volatile unsigned char *)p != (unsigned char)seed)
			fail("attachee: a block changed\n");
		free(p);
	}
	return NULL;
}

static void *
signaller(void *arg)
{
	(void)arg;
	struct timespec gap = { .tv_nsec = 50000 };
	while (!stop) {
		for (int k = 0; k < 2; k++)
			if (churner_tid[k])
				syscall(SYS_tgkill, getpid(), churner_tid[k],
					SIGUSR1);
		nanosleep(&gap, NULL);
	}
	return NULL;
}

static int
run_signals(void)
{
	if (!code_around((uintptr_t)dlsym(RTLD_DEFAULT, "malloc"), &libc_lo,
			 &libc_hi)) {
		fail("attachee: malloc's code not found in /proc/self/maps\n");
		return 2;
	}
	struct sigaction sa = { .sa_sigaction = on_usr1,
				.sa_flags = SA_RESTART | SA_SIGINFO };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th[3];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, churner, (void *)(uintptr_t)i))
			return 3;
	if (pthread_create(&th[2], NULL, signaller, NULL))
		return 3;
	say("ready\n");
	for (;;) {
		char c;
		ssize_t n = read(0, &c, 1);
		if (n == 0 || (n < 0 && errno != EINTR))
			break;
	}
	stop = 1;
	for (int i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	if (!handled[0] || !handled[1])
		fail("attachee: a thread's handler never ran\n");
	return failed;
}

int
main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "threads"))
		return run_threads((unsigned)atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "crowded")) {
		if (!crowd()) {
			fail("attachee: cannot read /proc/self/maps\n");
			return 2;
		}
		return run_threads(0);
	}
	if (argc >= 2 && !strcmp(argv[1], "read"))
		return run_read();
	if (argc >= 3 && !strcmp(argv[1], "sleep"))
		return run_sleep((unsigned)atoi(argv[2]));
	if (argc >= 2 && !strcmp(argv[1], "alloc"))
		return run_alloc(0);
	if (argc >= 2 && !strcmp(argv[1], "unknown"))
		return run_alloc(1);
	if (argc >= 2 && !strcmp(argv[1], "signals"))
		return run_signals();
	fail("usage: attachee threads SECONDS | crowded | read | sleep MS | "
	     "alloc | unknown | signals\n");
	return 2;
}
