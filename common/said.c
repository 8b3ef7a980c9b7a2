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

static char *
said_path(const char *dir)
{
	return ht_xasprintf("%s/notes-said", dir);
}

bool
ht_said_before(const char *dir, const char *text)
{
	if (!dir)
		return false;
	char *path = said_path(dir);
	FILE *f = fopen(path, "re");
	free(path);
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

void
ht_said_remember(const char *dir, const char *text)
{
	if (!dir || strchr(text, '\n') || !ht_make_dirs(dir))
		return;
	char *path = said_path(dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	free(path);
	if (fd < 0)
		return;
	/* one write with O_APPEND: runs ending together never mix lines */
	char *line = ht_xasprintf("%s\n", text);
	ssize_t w = write(fd, line, strlen(line));
	(void)w;
	free(line);
	close(fd);
}
