/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The consumer going for good under stubs that wait for it, as when
   heaptrace dies: its process SIGKILLed (the kernel marks the ring's
   CONSUMER word RING_CONSUMER_DIED, walking the robust futex list the
   consumer registered), or ending normally (tracer_ring_free). The stubs
   run in another process, as in a target: producers blocked on a full
   ring and a thread waiting for the answer to a NOTIFY return at once,
   without a time-out, and every call from then on goes straight through.

   Three processes. This one directs and never makes a ring: consumer.c
   registers its robust list once per process, and a child inherits that
   it did but not the registration. The consumer, forked from this one,
   makes the ring and the stubs' code, then forks the producer, which
   inherits both (the ring is MAP_SHARED: one ring) and makes the calls;
   it is reparented to us (a subreaper) when the consumer goes. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "stubenv.h"
#include "tests/check.h"

enum { IX_MALLOC, IX_NOTIFY };

#define FAKE_BASE 0x7e0000000000ULL
#define PRODUCERS 3
#define AFTER 100            /* calls each producer makes once through */
#define PROMPT_NS 1000000000ULL /* "at once", on a loaded machine */
#define STUCK_NS 30000000000ULL
#define JOIN_S 10               /* a thread blocked that long never returns */

/* Between the three processes, in a MAP_SHARED page. */
struct shared {
	int blocked;       /* the producer's calls all wait: end the consumer */
	int end_now;       /* a normal end: the consumer frees its ring */
	uint64_t gone_ns;  /* when the consumer was ended */
	uint32_t consumer; /* its tid, which the ring's CONSUMER word holds */
	pid_t producer;
};
static struct shared *sh;

static uint64_t malloc_calls, notify_calls;

static uint64_t
fake_malloc(uint64_t size)
{
	__atomic_fetch_add(&malloc_calls, 1, __ATOMIC_RELAXED);
	return FAKE_BASE + size;
}

static void
fake_debug_state(void)
{
	__atomic_fetch_add(&notify_calls, 1, __ATOMIC_RELAXED);
}

/* ---- The producer: the target's threads ---- */

static volatile int stop;
static uint64_t calls[PRODUCERS], ret_ns[PRODUCERS], notify_ret_ns;

/* Calls until one waits for room for good; once that returns, AFTER
   more, which pass. */
static void *
producer(void *arg)
{
	uint64_t w = (uint64_t)(uintptr_t)arg, i = 0;
	env_thread_init();
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		tramp1(IX_MALLOC, w << 32 | i++);
	ret_ns[w] = env_now_ns();
	for (int k = 0; k < AFTER; k++)
		tramp1(IX_MALLOC, w << 32 | i++);
	calls[w] = i;
	return NULL;
}

/* _dl_debug_state, whose question nobody answers. */
static void *
notifier(void *arg)
{
	(void)arg;
	((void (*)(void))env.tramp[IX_NOTIFY])();
	notify_ret_ns = env_now_ns();
	return NULL;
}

static void
spawn(pthread_t *th, void *(*fn)(void *), uint64_t arg)
{
	if (pthread_create(th, NULL, fn, (void *)(uintptr_t)arg)) {
		fprintf(stderr, "pthread_create failed\n");
		_exit(EXIT_HARNESS);
	}
}

/* Join TH by DEADLINE (CLOCK_REALTIME for pthread_timedjoin_np), or
   leave: a thread still blocked is the failure this test is about. */
static void
join_by(pthread_t th, const struct timespec *deadline, const char *what)
{
	if (pthread_timedjoin_np(th, NULL, deadline)) {
		fprintf(stderr, "%s never returned\n", what);
		_exit(1);
	}
}

/* Until *WORD reaches WANT; false after STUCK_NS. */
static bool
wait_for(const volatile uint64_t *word, uint64_t want)
{
	uint64_t deadline = env_now_ns() + STUCK_NS;
	while (*word < want)
		if (env_now_ns() > deadline)
			return false;
		else
			usleep(1000);
	return true;
}

/* Make the calls wait (a NOTIFY for its answer, every producer for room
   in a ring nobody drains), let the director end the consumer, and check
   that everything goes on. */
static void
producer_main(void)
{
	struct ring_header *h = env.h;
	pthread_t nt, th[PRODUCERS];
	CHECK(h->consumer == sh->consumer && ring_recording(h),
	      "the consumer's tid %u in CONSUMER (%#x)", sh->consumer,
	      h->consumer);
	spawn(&nt, notifier, 0);
	/* Rung once the question is in the ring: it waits from then on. */
	const volatile uint32_t *bell = &h->doorbell;
	while (!*bell)
		usleep(1000);
	for (unsigned w = 0; w < PRODUCERS; w++)
		spawn(&th[w], producer, w);
	if (!wait_for(&h->stats.full_waits, PRODUCERS)) {
		fprintf(stderr, "the producers never waited for room\n");
		_exit(1);
	}
	uint64_t head = h->head;
	usleep(20000);
	CHECK(h->head == head && h->stats.full_waits == PRODUCERS &&
		      !notify_calls,
	      "everything waits: %llu waits for room, %llu NOTIFY originals",
	      (unsigned long long)h->stats.full_waits,
	      (unsigned long long)notify_calls);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->blocked, 1, __ATOMIC_RELEASE);

	struct timespec deadline;
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += JOIN_S;
	join_by(nt, &deadline, "the NOTIFY");
	uint64_t total = 0;
	for (unsigned w = 0; w < PRODUCERS; w++) {
		join_by(th[w], &deadline, "a producer");
		total += calls[w];
		CHECK(ret_ns[w] - sh->gone_ns < PROMPT_NS,
		      "producer %u returned %.1f ms after the consumer went", w,
		      (ret_ns[w] - sh->gone_ns) / 1e6);
	}
	CHECK(notify_ret_ns - sh->gone_ns < PROMPT_NS && notify_calls == 1,
	      "the NOTIFY returned %.1f ms after the consumer went",
	      (notify_ret_ns - sh->gone_ns) / 1e6);
	CHECK(h->stats.notify_timeouts == 0, "a NOTIFY timed out");
	CHECK(h->consumer == RING_CONSUMER_DIED && !ring_recording(h),
	      "CONSUMER %#x", h->consumer);
	CHECK(h->head == head && malloc_calls == total,
	      "passing through: %llu more bytes reserved, %llu originals "
	      "for %llu calls",
	      (unsigned long long)(h->head - head),
	      (unsigned long long)malloc_calls, (unsigned long long)total);
	CHECK(h->sleepers == 0, "%u sleepers left", h->sleepers);
	uint32_t seq = h->notify_seq;
	notifier(NULL);
	CHECK(notify_calls == 2 && h->notify_seq == seq && h->head == head,
	      "a NOTIFY passes straight through");
	printf("producers back %.2f ms after the consumer went, the NOTIFY "
	       "%.2f ms\n", (ret_ns[0] - sh->gone_ns) / 1e6,
	       (notify_ret_ns - sh->gone_ns) / 1e6);
	fflush(stdout);
	_exit(failures ? 1 : 0);
}

/* ---- The consumer: heaptrace's part ---- */

/* Make the ring (this thread is its consumer from now on), hand it to a
   forked producer, drain nothing, and end as told: SIGKILLed by the
   director, or freeing the ring when END_NOW says. */
static void
consumer_main(void)
{
	failures = 0; /* the director's, counted before the fork */
	int err = env_init(4096, 256, 64);
	if (err) {
		fprintf(stderr, "env_init: %s\n", strerror(-err));
		_exit(EXIT_HARNESS);
	}
	env_fn(IX_MALLOC, HT_FN_MALLOC, fake_malloc, 0, 0);
	env_hook(IX_NOTIFY, RING_CLASS_NOTIFY, fake_debug_state);
	sh->consumer = (uint32_t)gettid();
	pid_t p = fork();
	if (p < 0)
		_exit(EXIT_HARNESS);
	if (p == 0)
		producer_main();
	sh->producer = p;
	while (!__atomic_load_n(&sh->end_now, __ATOMIC_ACQUIRE))
		usleep(1000);
	env_fini();
	_exit(0);
}

/* ---- The director ---- */

/* PID's status by DEADLINE (ns), or kill it and fail. */
static int
reap_by(pid_t pid, uint64_t deadline, const char *what)
{
	int st;
	for (;;) {
		pid_t r = waitpid(pid, &st, WNOHANG);
		if (r == pid)
			return st;
		if (r < 0 || env_now_ns() > deadline) {
			fprintf(stderr, "%s: %s\n", what,
				r < 0 ? strerror(errno) : "stuck, killed");
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		usleep(1000);
	}
}

static void
scenario(bool killed)
{
	const char *how = killed ? "SIGKILL" : "freed";
	memset(sh, 0, sizeof(*sh));
	pid_t c = fork();
	if (c < 0) {
		perror("fork");
		exit(EXIT_HARNESS);
	}
	if (c == 0)
		consumer_main();
	uint64_t deadline = env_now_ns() + STUCK_NS;
	while (!__atomic_load_n(&sh->blocked, __ATOMIC_ACQUIRE)) {
		int st;
		if (waitpid(c, &st, WNOHANG) == c || env_now_ns() > deadline) {
			fprintf(stderr, "%s: the calls never all waited\n", how);
			failures++;
			kill(c, SIGKILL);
			if (sh->producer)
				kill(sh->producer, SIGKILL);
			while (wait(NULL) > 0)
				;
			return;
		}
		usleep(1000);
	}
	sh->gone_ns = env_now_ns();
	if (killed)
		kill(c, SIGKILL);
	else
		__atomic_store_n(&sh->end_now, 1, __ATOMIC_RELEASE);
	int st = reap_by(c, env_now_ns() + STUCK_NS, "the consumer");
	CHECK(killed ? WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL
		     : WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: the consumer ended with status %#x", how, st);
	/* Ours now: the subreaper gets its orphans. */
	if (!sh->producer)
		return;
	st = reap_by(sh->producer, env_now_ns() + STUCK_NS, "the producer");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0,
	      "%s: the producer ended with status %#x", how, st);
}

int
main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
		perror("PR_SET_CHILD_SUBREAPER");
		return EXIT_HARNESS;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("mmap");
		return EXIT_HARNESS;
	}
	scenario(true);
	scenario(false);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
