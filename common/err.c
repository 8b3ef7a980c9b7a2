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

#include "cachedir.h"
#include "said.h"
#include "xalloc.h"

static int verbose;
static bool quiet;
/* ht_note's and ht_note_once's remarks, in the order given, for the
   session's summary line */
struct note {
	char *text;
	bool once; /* the same on every run: said once per machine */
};
static struct note *notes;
static size_t n_notes;
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
	char text[1024];
	int n = vsnprintf(text, sizeof(text), fmt, ap);
	if (n <= 0)
		return;
	notes = ht_xreallocarray(notes, n_notes + 1, sizeof(*notes));
	notes[n_notes++] = (struct note){ .text = ht_xstrdup(text),
					  .once = once };
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
ht_notes_discard(void)
{
	for (size_t i = 0; i < n_notes; i++)
		free(notes[i].text);
	free(notes);
	notes = NULL;
	n_notes = 0;
}

/* Whether NOTE is to be said now: a note said once per machine is said
   with -v, or when this machine has not heard it (then remembered). */
static bool
note_due(const struct note *note, const char *dir)
{
	if (!note->once)
		return true;
	if (verbose)
		return true;
	if (ht_said_before(dir, note->text))
		return false;
	ht_said_remember(dir, note->text);
	return true;
}

const char *
ht_notes_take(void)
{
	static char *taken;
	free(taken);
	taken = ht_xstrdup("");
	char *dir = quiet ? NULL : ht_cache_dir();
	for (size_t i = 0; i < n_notes && !quiet; i++) {
		if (!note_due(&notes[i], dir))
			continue;
		char *more = ht_xasprintf("%s; %s", taken, notes[i].text);
		free(taken);
		taken = more;
	}
	free(dir);
	ht_notes_discard();
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
