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
/* ht_note's and ht_note_once's remarks, in the order given, for the
   session's summary line; one that does not fit is left out whole */
#define NOTES_MAX 16
struct note {
	char text[1024];
	bool once; /* the same on every run: said once per machine */
};
static struct note notes[NOTES_MAX];
static size_t n_notes;
static bool (*first_time)(const char *text);
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

static void
note_add(bool once, const char *fmt, va_list ap)
{
	if (n_notes == NOTES_MAX)
		return;
	struct note *note = &notes[n_notes];
	int n = vsnprintf(note->text, sizeof(note->text), fmt, ap);
	if (n <= 0 || (size_t)n >= sizeof(note->text))
		return;
	note->once = once;
	n_notes++;
}

void
ht_note(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_add(false, fmt, ap);
	va_end(ap);
}

void
ht_note_once(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	note_add(true, fmt, ap);
	va_end(ap);
}

void
ht_set_note_first_time(bool (*is_first)(const char *text))
{
	first_time = is_first;
}

void
ht_notes_discard(void)
{
	n_notes = 0;
}

/* Whether NOTE is to be said now: one said once per machine is said with
   -v, or when the machine has not heard it. */
static bool
note_due(const struct note *note)
{
	return !note->once || verbose || !first_time || first_time(note->text);
}

const char *
ht_notes_take(void)
{
	static char taken[NOTES_MAX * (sizeof(notes[0].text) + 2) + 1];
	size_t len = 0;
	taken[0] = '\0';
	for (size_t i = 0; i < n_notes && !quiet; i++) {
		if (!note_due(&notes[i]))
			continue;
		int k = snprintf(taken + len, sizeof(taken) - len, "; %s",
				 notes[i].text);
		if (k > 0)
			len += (size_t)k;
	}
	n_notes = 0;
	return taken;
}

void
ht_notes_flush(void)
{
	const char *taken = ht_notes_take();
	if (*taken)
		ht_info("%s", taken + 2);
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
