/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Many threads at once, for tests/run/manythreads.sh: more than the 1024
   the inline path's thread table once held.

   usage: manythreads N SIZE
   Starts N threads (64 KiB stacks) that wait, says "ready\n" on stdout
   once all of them wait, then reads one-byte commands on stdin:
     a   every thread mallocs SIZE bytes (in thread_alloc) and fills them;
         answered "allocated\n" once all of them hold theirs
     f   every thread checks its block and frees it; answered "freed\n"
   At end of file the threads end and are joined; it says "bye\n" and
   exits 0, or 1 when a check failed (with a line on stderr). Under
   --threshold=0 the peak holds exactly N * SIZE bytes in thread_alloc.
   No stdio: its buffers would be allocations of their own. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go = PTHREAD_COND_INITIALIZER;   /* a new command */
static pthread_cond_t done = PTHREAD_COND_INITIALIZER; /* a thread did it */
static unsigned gen;   /* commands given */
static char cmd;       /* the last one, 0 at the end */
static long n_done;    /* threads done with the last command */
static long n_waiting; /* threads started and waiting */
static size_t size;
static int failed;

static void
say(const char *s)
{
	ssize_t w = write(1, s, strlen(s));
	(void)w;
}

static void
complain(const char *s)
{
	ssize_t w = write(2, s, strlen(s));
	(void)w;
	failed = 1;
}

static NOINLINE unsigned char *
thread_alloc(size_t n, unsigned tag)
{
	unsigned char *p = malloc(n);
	if (p)
		memset(p, (int)(tag & 0xff), n);
	return p;
}

static NOINLINE void
thread_free(unsigned char *p, size_t n, unsigned tag)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != (unsigned char)(tag & 0xff)) {
			complain("manythreads: a block was overwritten\n");
			break;
		}
	free(p);
}

static void *
thread_main(void *arg)
{
	unsigned tag = (unsigned)(unsigned long)arg;
	unsigned char *block = NULL;
	unsigned seen = 0;
	pthread_mutex_lock(&lock);
	n_waiting++;
	pthread_cond_broadcast(&done);
	for (;;) {
		while (gen == seen)
			pthread_cond_wait(&go, &lock);
		seen = gen;
		char c = cmd;
		pthread_mutex_unlock(&lock);
		if (c == 'a' && !block) {
			block = thread_alloc(size, tag);
			if (!block)
				complain("manythreads: malloc failed\n");
		} else if (c == 'f' && block) {
			thread_free(block, size, tag);
			block = NULL;
		}
		pthread_mutex_lock(&lock);
		n_done++;
		pthread_cond_broadcast(&done);
		if (!c)
			break;
	}
	pthread_mutex_unlock(&lock);
	if (block)
		thread_free(block, size, tag);
	return NULL;
}

/* Give every thread command C and wait until all of them did it. */
static void
command(char c, long n)
{
	pthread_mutex_lock(&lock);
	cmd = c;
	gen++;
	n_done = 0;
	pthread_cond_broadcast(&go);
	while (n_done < n)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
}

int
main(int argc, char **argv)
{
	if (argc != 3) {
		complain("usage: manythreads N SIZE\n");
		return 2;
	}
	long n = atol(argv[1]);
	size = (size_t)atol(argv[2]);
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (long i = 0; i < n; i++)
		if (pthread_create(&t[i], &attr, thread_main,
				   (void *)(unsigned long)(i + 1))) {
			complain("manythreads: cannot create a thread\n");
			return 1;
		}
	pthread_mutex_lock(&lock);
	while (n_waiting < n)
		pthread_cond_wait(&done, &lock);
	pthread_mutex_unlock(&lock);
	say("ready\n");
	char c;
	while (read(0, &c, 1) == 1) {
		if (c != 'a' && c != 'f')
			continue;
		command(c, n);
		say(c == 'a' ? "allocated\n" : "freed\n");
	}
	command(0, n);
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	say("bye\n");
	return failed;
}
