/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The message module: formatting into one buffer so that each message is a
   single write(2) and lines from several processes never interleave. */
#include "err.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int verbose;
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
	va_list ap;
	va_start(ap, fmt);
	emit("warning: ", NULL, fmt, ap);
	va_end(ap);
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
