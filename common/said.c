/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The file of notes said once per machine (said.h). */
#include "said.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cachedir.h"
#include "xalloc.h"

/* A file larger than this is not heaptrace's: its notes are few and short. */
#define SAID_MAX (64 * 1024)

/* Whether TEXT is a line of the file at PATH. */
static bool
said_before(const char *path, const char *text)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	char *buf = ht_xcalloc(SAID_MAX + 1, 1);
	size_t n = fread(buf, 1, SAID_MAX, f);
	fclose(f);
	bool found = false;
	size_t len = strlen(text);
	for (char *line = buf; !found && line < buf + n;) {
		char *nl = memchr(line, '\n', (size_t)(buf + n - line));
		if (!nl)
			break; /* a line being written, or cut */
		found = (size_t)(nl - line) == len && !memcmp(line, text, len);
		line = nl + 1;
	}
	free(buf);
	return found;
}

/* Append TEXT as a line of the file at PATH, in DIR. */
static void
remember(const char *dir, const char *path, const char *text)
{
	if (strchr(text, '\n') || !ht_make_dirs(dir))
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	/* one write with O_APPEND: runs ending together never mix lines */
	char *line = ht_xasprintf("%s\n", text);
	ssize_t w = write(fd, line, strlen(line));
	(void)w;
	free(line);
	close(fd);
}

bool
ht_said_first_time(const char *text)
{
	char *dir = ht_cache_dir();
	if (!dir)
		return true;
	char *path = ht_xasprintf("%s/notes-said", dir);
	bool first = !said_before(path, text);
	if (first)
		remember(dir, path, text);
	free(path);
	free(dir);
	return first;
}
