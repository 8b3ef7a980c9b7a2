/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A service with one working thread and N idle ones, for
   bench/attach-pause.sh: how long does the working thread stand still
   while heaptrace attaches and detaches?

   The working thread loops on a little work plus a malloc and a free, and
   reads CLOCK_MONOTONIC after each iteration: a gap between two readings
   longer than GAP_MIN_NS is kept (its end and its length). The N idle
   threads wait on a condition variable that is never signalled, as the
   idle workers of a thread pool do. The working thread also watches the
   first byte of malloc (heaptrace patches it while attached): the first
   change and the change back are kept as the moments it saw the attach
   and the detach finished; and, every millisecond, its own TracerPid:
   the first time it reads 0 after a tracer is the moment it was let go
   (the end of the detach, for it).

   Usage: pause N             run until SIGTERM or SIGINT, then print to
                              stdout "patched NS", "unpatched NS",
                              "released NS" (0: not seen) and
                              "gap END_NS LEN_NS" lines
          pause now           print CLOCK_MONOTONIC in ns (the script's
                              clock, the same as the program's)
   It prints "ready PID" on stderr once every thread is waiting, then
   "attached" and "detached" when malloc's first byte changes and changes
   back. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define GAP_MIN_NS 200000ULL /* 0.2 ms: shorter gaps are scheduling noise */
#define MAX_GAPS 200000

static volatile sig_atomic_t stop;
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int idle_waiting;

static struct gap {
	uint64_t end, len;
} gaps[MAX_GAPS];
static size_t n_gaps;

static uint64_t
now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void *
idle(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&idle_lock);
	idle_waiting++;
	for (;;) /* never signalled: the process ends with the threads in it */
		pthread_cond_wait(&idle_cond, &idle_lock);
	return NULL;
}

/* This thread's TracerPid, from /proc (no stdio: no allocation). */
static long
tracer_pid(void)
{
	char buf[2048];
	int fd = open("/proc/thread-self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	const char *at = strstr(buf, "TracerPid:");
	return at ? strtol(at + 10, NULL, 10) : -1;
}

/* A few microseconds of work that the compiler cannot drop. */
static uint64_t
work(uint64_t seed)
{
	size_t size = 64 + seed % 512;
	unsigned char *p = malloc(size);
	if (!p)
		abort();
	memset(p, (int)seed, size);
	uint64_t sum = seed;
	for (size_t i = 0; i < size; i++)
		sum = sum * 31 + p[i];
	free(p);
	return sum;
}

static void
work_loop(void)
{
	const volatile unsigned char *entry =
		(const unsigned char *)dlsym(RTLD_NEXT, "malloc");
	if (!entry)
		entry = (const unsigned char *)(uintptr_t)&malloc;
	unsigned char orig = *entry;
	uint64_t patched = 0, unpatched = 0, released = 0, sum = 0;
	uint64_t prev = now_ns(), looked = 0;
	int traced = 0;
	for (uint64_t i = 0; !stop; i++) {
		sum += work(i);
		uint64_t t = now_ns();
		if (t - prev > GAP_MIN_NS && n_gaps < MAX_GAPS)
			gaps[n_gaps++] = (struct gap){ t, t - prev };
		prev = t;
		unsigned char b = *entry;
		if (!patched && b != orig) {
			patched = t;
			fprintf(stderr, "attached\n");
		} else if (patched && !unpatched && b == orig) {
			unpatched = t;
			fprintf(stderr, "detached\n");
		}
		if (!released && t - looked > 1000000) {
			long tp = tracer_pid();
			looked = t;
			if (tp > 0)
				traced = 1;
			else if (tp == 0 && traced)
				released = now_ns();
		}
	}
	printf("patched %llu\nunpatched %llu\nreleased %llu\n",
	       (unsigned long long)patched, (unsigned long long)unpatched,
	       (unsigned long long)released);
	for (size_t i = 0; i < n_gaps; i++)
		printf("gap %llu %llu\n", (unsigned long long)gaps[i].end,
		       (unsigned long long)gaps[i].len);
	fprintf(stderr, "pause: %llu\n", (unsigned long long)(sum & 1));
}

int
main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "now")) {
		printf("%llu\n", (unsigned long long)now_ns());
		return 0;
	}
	if (argc != 2) {
		fprintf(stderr, "usage: pause N | pause now\n");
		return 2;
	}
	int n = atoi(argv[1]);
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (int i = 0; i < n; i++) {
		pthread_t th;
		if (pthread_create(&th, NULL, idle, NULL)) {
			fprintf(stderr, "pause: cannot create thread %d\n", i);
			return 1;
		}
	}
	for (;;) {
		pthread_mutex_lock(&idle_lock);
		int w = idle_waiting;
		pthread_mutex_unlock(&idle_lock);
		if (w == n)
			break;
		usleep(1000);
	}
	fprintf(stderr, "ready %d\n", (int)getpid());
	work_loop();
	return 0;
}
