/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A memfd rather than a pipe: a pipe holds 64 KiB, after which a warning
   would block heaptrace's only thread, and with it the traced process.
   The file grows instead; warnings are few. */
#include "top_capture.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"

struct top_capture {
	int saved;   /* the real standard error */
	int held;    /* the memfd now on descriptor 2 */
	off_t seen;  /* the bytes already looked at */
};

struct top_capture *
top_capture_start(void)
{
	int held = memfd_create("heaptrace-top-stderr", MFD_CLOEXEC);
	if (held < 0)
		return NULL;
	fflush(stderr);
	int saved = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (saved < 0 || dup2(held, 2) < 0) {
		int e = errno;
		if (saved >= 0)
			close(saved);
		close(held);
		errno = e;
		return NULL;
	}
	struct top_capture *c = ht_xcalloc(1, sizeof(*c));
	c->saved = saved;
	c->held = held;
	return c;
}

bool
top_capture_latest(struct top_capture *c, char *buf, size_t len)
{
	struct stat st;
	if (fstat(c->held, &st) || st.st_size <= c->seen || len < 2)
		return false;
	/* the last line is near the end: read the tail only */
	char tail[512];
	off_t from = st.st_size - (off_t)sizeof(tail) > c->seen
		     ? st.st_size - (off_t)sizeof(tail) : c->seen;
	ssize_t n = pread(c->held, tail, (size_t)(st.st_size - from), from);
	c->seen = st.st_size;
	if (n <= 0)
		return false;
	while (n > 0 && tail[n - 1] == '\n')
		n--;
	ssize_t start = n;
	while (start > 0 && tail[start - 1] != '\n')
		start--;
	size_t m = (size_t)(n - start) < len - 1 ? (size_t)(n - start)
						 : len - 1;
	memcpy(buf, tail + start, m);
	buf[m] = '\0';
	return true;
}

/* All of FROM's content written to TO. */
static void
copy_all(int from, int to)
{
	char buf[4096];
	off_t at = 0;
	ssize_t n;
	while ((n = pread(from, buf, sizeof(buf), at)) > 0) {
		at += n;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(to, buf + done, (size_t)(n - done));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return;
			done += w;
		}
	}
}

void
top_capture_stop(struct top_capture *c)
{
	if (!c)
		return;
	fflush(stderr);
	dup2(c->saved, 2);
	close(c->saved);
	copy_all(c->held, 2);
	close(c->held);
	free(c);
}
