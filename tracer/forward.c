/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SIGTERM, SIGHUP and SIGINT to `heaptrace run`. Without heaptrace the
   program would have had the signal: the first one goes to the program,
   exactly once, and the session goes on (the profile is written when the
   program ends, by that signal or later); the second makes heaptrace
   detach, leaving the program to run on untraced, and write the profile
   at once.

   Exactly once: a signal sent to the whole process group (a terminal's
   Ctrl-C or hang-up, `timeout` without --foreground) reached the program
   too, and must not be sent again. A ptraced program's copy is visible:
   pending in /proc/PID/status (ShdPnd, SigPnd) until a thread takes it,
   then a signal-delivery stop, waitable from the moment it is taken (both
   under the program's signal lock), that the loop reports here
   (forward_delivered). The kernel queues a group's signal to each member
   in turn, the newest first (the program, forked after heaptrace joined
   the group), so the program's copy is queued before heaptrace's handler
   runs. So: not pending now, and no delivery stop once every stop
   waiting has been reaped (forward_idle), means the program had no copy:
   it is sent one (kill, as `kill PID` would have). Meanwhile the loop
   polls rather than blocks (forward_deciding).

   Signals caught within SAME_REQUEST_NS of the first are handled as the
   first (each given to the program unless it had its own copy): they are
   one request, as `timeout`'s signal to heaptrace and then to its group.

   Under --pages-as-heap=yes the program cannot be detached from (the
   seccomp filter stays, and its page calls would fail untraced): every
   signal is then handled as the first. When the program itself has
   exited and only its children are traced, the first signal detaches. */
#include "tracer/session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/monotonic.h"

#define OWN_COPY_BEFORE_NS 100000000ULL /* a delivery this much before
					   heaptrace's handler ran is the
					   same signal's */
/* Signals caught this close to the first are the same request:
   `timeout` sends its signal to heaptrace, then at once to the process
   group, heaptrace included. */
#define SAME_REQUEST_NS 200000000ULL
#define CAUGHT_MAX 8

static const int stop_signals[FORWARD_SIGNALS] = { SIGTERM, SIGHUP, SIGINT };
static const char *const stop_names[FORWARD_SIGNALS] = { "SIGTERM", "SIGHUP",
							 "SIGINT" };

/* Written by the handler only, read by the loop. */
static volatile int n_caught;
static volatile sig_atomic_t caught_sig[CAUGHT_MAX];
static volatile uint64_t caught_ns[CAUGHT_MAX];

/* The loop's side. */
static volatile sig_atomic_t detach_asked; /* the loop's stop_flag */
static bool active;
static int n_served;
static bool first_done;   /* a signal was handled as the first */
static uint64_t first_at; /* when it was caught */
static int deciding_sig;  /* 0, or the signal being decided */
static uint64_t deciding_since;
static uint64_t delivered_ns[FORWARD_SIGNALS]; /* the program's last copy */


static int
signal_index(int sig)
{
	for (int i = 0; i < FORWARD_SIGNALS; i++)
		if (stop_signals[i] == sig)
			return i;
	return -1;
}

static const char *
name_of(int sig)
{
	return stop_names[signal_index(sig)];
}

static void
on_stop_signal(int sig)
{
	int saved = errno;
	/* heaptrace has one thread: a handler that interrupts this one
	   (SA_NODEFER) runs to its end before this one goes on. */
	int n = __atomic_fetch_add(&n_caught, 1, __ATOMIC_RELAXED);
	caught_sig[n % CAUGHT_MAX] = sig;
	caught_ns[n % CAUGHT_MAX] = ht_monotonic_ns();
	ondemand_wake();
	errno = saved;
}

void
forward_install(struct tracer *t, struct forward_saved *old)
{
	/* SA_NODEFER: the handler may leave by ondemand_wake's jump. */
	struct sigaction sa = { .sa_handler = on_stop_signal,
				.sa_flags = SA_RESTART | SA_NODEFER };
	sigemptyset(&sa.sa_mask);
	n_caught = 0;
	detach_asked = 0;
	active = true;
	n_served = 0;
	first_done = false;
	deciding_sig = 0;
	memset(delivered_ns, 0, sizeof(delivered_ns));
	for (int i = 0; i < FORWARD_SIGNALS; i++) {
		sigaction(stop_signals[i], NULL, &old->act[i]);
		/* Ignored on entry (nohup, a background job's SIGINT): the
		   program inherited that too. */
		if (old->act[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
	t->stop_flag = &detach_asked;
}

void
forward_after_detach(void)
{
	/* heaptrace only waits for the program now, as a shell waits for
	   its job: the terminal's interrupt is the program's, and another
	   SIGTERM or SIGHUP ends heaptrace, the program running on. */
	struct sigaction ign = { .sa_handler = SIG_IGN };
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	for (int i = 0; i < FORWARD_SIGNALS; i++) {
		struct sigaction now;
		sigaction(stop_signals[i], NULL, &now);
		if (now.sa_handler != SIG_IGN)
			sigaction(stop_signals[i],
				  stop_signals[i] == SIGINT ? &ign : &dfl, NULL);
	}
	active = false;
}

void
forward_restore(const struct forward_saved *old)
{
	for (int i = 0; i < FORWARD_SIGNALS; i++)
		sigaction(stop_signals[i], &old->act[i], NULL);
	active = false;
}

bool
forward_deciding(void)
{
	return deciding_sig != 0;
}

bool
forward_detach_asked(void)
{
	return detach_asked;
}

void
forward_delivered(struct tracer *t, struct tracee *tc, int sig)
{
	int i = signal_index(sig);
	if (i >= 0 && active && tc->proc && tc->proc->pid == t->target)
		delivered_ns[i] = ht_monotonic_ns();
}

/* Whether SIG is pending in PID, for the process or its main thread
   (/proc/PID/status's ShdPnd and SigPnd, hexadecimal masks). */
static bool
pending_in(pid_t pid, int sig)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool found = false;
	unsigned long long bit = 1ULL << (sig - 1);
	while (!found && fgets(line, sizeof(line), f))
		if (!strncmp(line, "ShdPnd:", 7) || !strncmp(line, "SigPnd:", 7))
			found = strtoull(line + 7, NULL, 16) & bit;
	fclose(f);
	return found;
}

/* The program had its own copy of SIG, caught by heaptrace at SINCE. */
static bool
program_got(struct tracer *t, int sig, uint64_t since)
{
	uint64_t at = delivered_ns[signal_index(sig)];
	if (at && at + OWN_COPY_BEFORE_NS >= since)
		return true;
	return pending_in(t->target, sig);
}

/* Give the signal being decided to the program unless it had its own. */
static void
decide(struct tracer *t)
{
	int sig = deciding_sig;
	deciding_sig = 0;
	if (program_got(t, sig, deciding_since)) {
		ht_debug("%s: process %d had its own", name_of(sig),
			 (int)t->target);
		return;
	}
	if (kill(t->target, sig) == 0)
		ht_note("%s forwarded to process %d", name_of(sig),
			(int)t->target);
}

static void
serve_one(struct tracer *t, int sig, uint64_t at)
{
	bool can_detach = !t->opt->pages_as_heap;
	bool second = first_done && at - first_at >= SAME_REQUEST_NS;
	if (t->target_done || (second && can_detach)) {
		if (t->target_done)
			ht_note("detached from the processes left at %s",
				name_of(sig));
		else
			ht_note("detached from process %d at a second %s: it "
				"runs on", (int)t->target, name_of(sig));
		detach_asked = 1;
		return;
	}
	if (!first_done) {
		first_done = true;
		first_at = at;
	}
	deciding_since = at;
	if (program_got(t, sig, at))
		return;
	/* Not pending: a copy the program took is a stop waiting to be
	   reaped; forward_idle decides once none is left. */
	deciding_sig = sig;
}

void
forward_serve(struct tracer *t)
{
	if (!active || detach_asked)
		return;
	int n = n_caught;
	if (n - n_served > CAUGHT_MAX)
		n_served = n - CAUGHT_MAX; /* only the last ones are kept */
	while (n_served < n && !detach_asked && !deciding_sig) {
		serve_one(t, caught_sig[n_served % CAUGHT_MAX],
			  caught_ns[n_served % CAUGHT_MAX]);
		n_served++;
	}
}

void
forward_idle(struct tracer *t)
{
	if (!deciding_sig)
		return;
	decide(t);
	forward_serve(t);
}
