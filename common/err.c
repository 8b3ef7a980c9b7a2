/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The message module: formatting into one buffer so that each message is a
   single write(2) and lines from several processes never interleave. */
#include "err.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int verbose;
static bool quiet;
/* ht_note's remarks, each "; TEXT", for the session's summary line */
static char notes[2048];
static size_t notes_len;
static void (*die_cleanup)(void);

static const char *const messages[] = {
#define HT_ERR_MSG(name, msg) [name - HT_E_BASE - 1] = msg,
	HT_ERRORS(HT_ERR_MSG)
#undef HT_ERR_MSG
};

const char *
ht_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err > HT_E_BASE &&
	    (size_t)(err - HT_E_BASE - 1) < sizeof(messages) / sizeof(*messages))
		return messages[err - HT_E_BASE - 1];
	return strerror(err);
}

static void
emit(const char *prefix, const char *suffix, const char *fmt, va_list ap)
{
	char buf[4096];
	int n = snprintf(buf, sizeof(buf), "heaptrace: %s", prefix);
	if (n < 0)
		return;
	int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	if (suffix) {
		int k = snprintf(buf + len, sizeof(buf) - len, ": %s", suffix);
		if (k > 0)
			len += (size_t)k;
		if (len > sizeof(buf) - 2)
			len = sizeof(buf) - 2;
	}
	buf[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, buf, len);
	(void)w;
}

void
ht_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("", NULL, fmt, ap);
	va_end(ap);
}

void
ht_perror(const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	emit("", strerror(saved), fmt, ap);
	va_end(ap);
}

void
ht_warn(const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("warning: ", NULL, fmt, ap);
	va_end(ap);
}

void
ht_info(const char *fmt, ...)
{
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", NULL, fmt, ap);
	va_end(ap);
}

void
ht_note(const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n <= 0)
		return;
	int k = snprintf(notes + notes_len, sizeof(notes) - notes_len, "; %s",
			 text);
	if (k > 0 && (size_t)k < sizeof(notes) - notes_len)
		notes_len += (size_t)k;
	else
		notes[notes_len] = '\0'; /* no room: left out whole */
}

const char *
ht_notes_take(void)
{
	static char taken[sizeof(notes)];
	memcpy(taken, notes, notes_len + 1);
	notes_len = 0;
	notes[0] = '\0';
	return taken;
}

void
ht_notes_flush(void)
{
	if (notes_len)
		ht_info("%s", ht_notes_take() + 2);
}

void
ht_debug(const char *fmt, ...)
{
	if (!verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	emit("", NULL, fmt, ap);
	va_end(ap);
}

void
ht_die(int status, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("", NULL, fmt, ap);
	va_end(ap);
	if (die_cleanup) {
		void (*cleanup)(void) = die_cleanup;
		die_cleanup = NULL;
		cleanup();
	}
	exit(status);
}

void
ht_set_die_cleanup(void (*cleanup)(void))
{
	die_cleanup = cleanup;
}

void
ht_set_verbose(int v)
{
	verbose = v;
}

void
ht_set_quiet(int q)
{
	quiet = q != 0;
}
