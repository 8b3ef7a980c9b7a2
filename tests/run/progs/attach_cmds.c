/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A process steered line by line on stdin, for the attach cases of
   tests/run/attach.sh that need allocations at exact moments around an
   attach and a detach. It says "ready\n" on stdout at start, answers each
   command with "ok COMMAND\n" once it is done (an error with "error
   COMMAND\n"), and at end of file says "bye\n" and exits 0, or 1 when
   one of its checks failed (with a line on stderr). No stdio: its buffers
   would be allocations of their own.

   malloc X SIZE  malloc SIZE bytes (in cmd_malloc) into slot X (a..y),
                  filled with a pattern
   free X         check slot X's pattern, free it (in cmd_free)
   spawn N SIZE   start N threads, each mallocing SIZE bytes (in
                  late_thread), filled; answered once all N hold theirs;
                  the threads then wait
   join           the threads check and free their blocks and end; joined
   dlopen PATH    dlopen PATH (the rest of the line, spaces and all;
                  RTLD_NOW, never closed) and call its
                  latelib_keep(), which mallocs and keeps 5000 bytes
                  (progs/latelib.c); answered "ok dlopen PATH"

   Built with HT_INTERPOSE, the executable defines malloc, calloc, realloc
   and free itself, forwarding to glibc's __libc_malloc etc. (so it is
   the allocator heaptrace must bind: the executable comes first in the
   link map), and one more command is there:

   block SIZE     start a thread whose malloc(SIZE) blocks inside malloc
                  (in wait_in_malloc, in read() on a pipe) before it
                  allocates; answered once that thread is in there
   release        let it go on: its malloc returns the block, which the
                  thread fills and checks and keeps in slot z; joined */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define MAX_THREADS 16

static int failed;

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

static void
fill(unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(tag + i * 7);
}

static int
intact(const unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(tag + i * 7))
			return 0;
	return 1;
}

#ifdef HT_INTERPOSE
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

/* Set in the blocking thread only, until its malloc(block_size). */
static __thread int blocker;
static size_t block_size;
static int inside_pipe[2], release_pipe[2];

NOINLINE static void
wait_in_malloc(void)
{
	char c = 'x';
	if (write(inside_pipe[1], &c, 1) != 1 ||
	    read(release_pipe[0], &c, 1) != 1)
		fail("attach_cmds: wait_in_malloc: pipe failed\n");
}

void *
malloc(size_t n)
{
	if (blocker && n == block_size) {
		blocker = 0;
		wait_in_malloc();
	}
	return __libc_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	return __libc_calloc(n, size);
}

void *
realloc(void *p, size_t n)
{
	return __libc_realloc(p, n);
}

void
free(void *p)
{
	__libc_free(p);
}
#endif

static unsigned char *slot[26];
static size_t slot_size[26];

NOINLINE static int
cmd_malloc(int x, size_t n)
{
	if (slot[x])
		return 0;
	slot[x] = malloc(n);
	if (!slot[x])
		return 0;
	slot_size[x] = n;
	fill(slot[x], n, (unsigned)x);
	return 1;
}

NOINLINE static int
cmd_free(int x)
{
	if (!slot[x])
		return 0;
	if (!intact(slot[x], slot_size[x], (unsigned)x))
		fail("attach_cmds: a block changed\n");
	free(slot[x]);
	slot[x] = NULL;
	return 1;
}

static pthread_t late[MAX_THREADS];
static int n_late;
static size_t late_size;
static int late_ready[2], late_go[2];

NOINLINE static void *
late_thread(void *arg)
{
	unsigned tag = (unsigned)(uintptr_t)arg;
	unsigned char *p = malloc(late_size);
	char c = 'x';
	if (p)
		fill(p, late_size, tag);
	if (write(late_ready[1], &c, 1) != 1 || read(late_go[0], &c, 1) != 1)
		fail("attach_cmds: late_thread: pipe failed\n");
	if (!p || !intact(p, late_size, tag))
		fail("attach_cmds: a thread's block changed\n");
	free(p);
	return NULL;
}

static int
cmd_spawn(int n, size_t size)
{
	if (n_late || n < 1 || n > MAX_THREADS)
		return 0;
	late_size = size;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&late[i], NULL, late_thread,
				   (void *)(uintptr_t)(100 + i)))
			return 0;
		n_late++;
	}
	for (int i = 0; i < n; i++) {
		char c;
		if (read(late_ready[0], &c, 1) != 1)
			return 0;
	}
	return 1;
}

static int
cmd_join(void)
{
	if (!n_late)
		return 0;
	for (int i = 0; i < n_late; i++)
		if (write(late_go[1], "g", 1) != 1)
			return 0;
	for (int i = 0; i < n_late; i++)
		pthread_join(late[i], NULL);
	n_late = 0;
	return 1;
}

static int
cmd_dlopen(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	if (!h)
		return 0;
	int (*keep)(void) = (int (*)(void))(uintptr_t)dlsym(h, "latelib_keep");
	return keep && keep() == 5000;
}

#ifdef HT_INTERPOSE
static pthread_t blocked;
static int blocking;

NOINLINE static void *
blocked_thread(void *arg)
{
	(void)arg;
	blocker = 1;
	unsigned char *p = malloc(block_size);
	if (!p) {
		fail("attach_cmds: the blocked malloc failed\n");
		return NULL;
	}
	fill(p, block_size, 25);
	if (!intact(p, block_size, 25))
		fail("attach_cmds: the blocked malloc's block changed\n");
	slot[25] = p;
	slot_size[25] = block_size;
	return NULL;
}

static int
cmd_block(size_t n)
{
	char c;
	if (blocking || slot[25])
		return 0;
	block_size = n;
	if (pthread_create(&blocked, NULL, blocked_thread, NULL))
		return 0;
	blocking = 1;
	return read(inside_pipe[0], &c, 1) == 1;
}

static int
cmd_release(void)
{
	if (!blocking || write(release_pipe[1], "r", 1) != 1)
		return 0;
	pthread_join(blocked, NULL);
	blocking = 0;
	return slot[25] != NULL;
}
#endif

/* A slot name: one letter a..y (z is the blocked malloc's). */
static int
slot_of(const char *s)
{
	if (s[0] < 'a' || s[0] > 'y' || s[1])
		return -1;
	return s[0] - 'a';
}

static int
run(char *line)
{
	/* PATH is the rest of the line: the build may lie on a path with
	   spaces. */
	if (!strncmp(line, "dlopen ", 7))
		return cmd_dlopen(line + 7);
	char *arg[4] = { 0 };
	int n = 0;
	for (char *t = strtok(line, " "); t && n < 4; t = strtok(NULL, " "))
		arg[n++] = t;
	if (n == 3 && !strcmp(arg[0], "malloc") && slot_of(arg[1]) >= 0)
		return cmd_malloc(slot_of(arg[1]), (size_t)atol(arg[2]));
	if (n == 2 && !strcmp(arg[0], "free") &&
	    (slot_of(arg[1]) >= 0 || !strcmp(arg[1], "z")))
		return cmd_free(arg[1][0] - 'a');
	if (n == 3 && !strcmp(arg[0], "spawn"))
		return cmd_spawn(atoi(arg[1]), (size_t)atol(arg[2]));
	if (n == 1 && !strcmp(arg[0], "join"))
		return cmd_join();
#ifdef HT_INTERPOSE
	if (n == 2 && !strcmp(arg[0], "block"))
		return cmd_block((size_t)atol(arg[1]));
	if (n == 1 && !strcmp(arg[0], "release"))
		return cmd_release();
#endif
	return 0;
}

int
main(void)
{
	if (pipe(late_ready) || pipe(late_go))
		return 2;
#ifdef HT_INTERPOSE
	if (pipe(inside_pipe) || pipe(release_pipe))
		return 2;
#endif
	say("ready\n");
	static char line[4096];
	size_t len = 0;
	for (;;) {
		char c;
		ssize_t r = read(0, &c, 1);
		if (r <= 0)
			break;
		if (c != '\n') {
			if (len + 1 < sizeof(line))
				line[len++] = c;
			continue;
		}
		line[len] = 0;
		char echo[sizeof(line)];
		memcpy(echo, line, len + 1);
		len = 0;
		/* the answer in one write: a test reading it never sees
		   half a line */
		char answer[sizeof(line) + 8];
		size_t alen = 0;
		const char *word = run(line) ? "ok " : "error ";
		memcpy(answer, word, strlen(word));
		alen += strlen(word);
		memcpy(answer + alen, echo, strlen(echo));
		alen += strlen(echo);
		answer[alen++] = '\n';
		answer[alen] = 0;
		say(answer);
	}
	say("bye\n");
	return failed;
}
