/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program that SIGTERM, SIGHUP and SIGINT are sent to (signals.sh).
   argv[1] says what it does with them:
     die      the default: it dies of the first
     ignore   SIG_IGN
     handle   a handler prints "caught SIGNAME" (SA_RESTART)
   It mallocs 1000 bytes and keeps them, prints "ready PID", then reads
   stdin line by line: "alloc" mallocs 500 bytes more, kept, and prints
   "allocated"; at end of file it prints "bye" and exits 7. No stdio
   buffers: those are the only blocks. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static const int stop_signals[] = { SIGTERM, SIGHUP, SIGINT };

static void say(const char *text)
{
	size_t n = strlen(text);

	if (write(1, text, n) != (ssize_t)n)
		_exit(3);
}

static void on_signal(int sig)
{
	say(sig == SIGTERM ? "caught SIGTERM\n"
	    : sig == SIGHUP ? "caught SIGHUP\n" : "caught SIGINT\n");
}

/* One line of stdin into LINE (its newline dropped); false at its end. */
static bool read_line(char *line, size_t size)
{
	size_t n = 0;
	char c;

	for (;;) {
		ssize_t r = read(0, &c, 1);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return n > 0 && (line[n] = 0, true);
		if (c == '\n')
			break;
		if (n + 1 < size)
			line[n++] = c;
	}
	line[n] = 0;
	return true;
}

static void set_mode(const char *mode)
{
	struct sigaction sa = { .sa_flags = SA_RESTART };

	if (!strcmp(mode, "ignore"))
		sa.sa_handler = SIG_IGN;
	else if (!strcmp(mode, "handle"))
		sa.sa_handler = on_signal;
	else
		return;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(stop_signals) / sizeof(*stop_signals); i++)
		sigaction(stop_signals[i], &sa, NULL);
}

NOINLINE static char *keep(size_t n)
{
	char *p = malloc(n);

	if (p)
		memset(p, 1, n);
	return p;
}

int main(int argc, char **argv)
{
	char line[64];

	set_mode(argc > 1 ? argv[1] : "die");
	if (!keep(1000))
		return 1;
	snprintf(line, sizeof(line), "ready %d\n", (int)getpid());
	say(line);
	while (read_line(line, sizeof(line))) {
		if (strcmp(line, "alloc"))
			continue;
		if (!keep(500))
			return 1;
		say("allocated\n");
	}
	say("bye\n");
	return 7;
}
