/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The acknowledgement of a snapshot taken on demand (snapshot_ack.h).

   Why a file: the signal that asks for a snapshot carries nothing back,
   and the requesting command cannot compute the name itself (it would
   have to re-parse the tracer's command line, environment and working
   directory). The tracer knows the name, so it publishes it where the
   command can find it from the two pids it has anyway (the target's, and
   the tracer's from /proc/TARGET/status): /tmp/heaptrace-snapshot.TRACER.
   TARGET. /tmp, not $XDG_RUNTIME_DIR, because both sides must agree on the
   place without sharing an environment (sudo, another shell). In a shared
   sticky /tmp the file is made with O_EXCL under a fresh name and renamed
   into place, so a planted symlink is replaced, never followed; the reader
   accepts only a regular file owned by the tracer's user. The content is
   one line, "N ok PATH" or "N error REASON": N, the per-process snapshot
   number, tells a new acknowledgement from an old one. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "snapshot_ack.h"

#define ACK_DIR "/tmp"

char *
snapshot_ack_path(pid_t tracer, pid_t target)
{
	return ht_xasprintf(ACK_DIR "/heaptrace-snapshot.%d.%d", (int)tracer,
			    (int)target);
}

/* Write LINE to a new file beside FINAL and rename it over FINAL. */
static int
replace_file(const char *final, const char *line)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char *tmp = ht_xasprintf("%s.%lx.tmp", final, (unsigned long)ts.tv_nsec);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		      0644);
	int rc = 0;
	if (fd < 0) {
		rc = -errno;
		free(tmp);
		return rc;
	}
	size_t len = strlen(line);
	if (write(fd, line, len) != (ssize_t)len)
		rc = errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, final))
		rc = -errno;
	if (rc)
		unlink(tmp);
	free(tmp);
	return rc;
}

int
snapshot_ack_publish(pid_t target, unsigned n, bool ok, const char *path)
{
	char *final = snapshot_ack_path(getpid(), target);
	char *line = ht_xasprintf("%u %s %s\n", n, ok ? "ok" : "error", path);
	int rc = replace_file(final, line);
	free(line);
	free(final);
	return rc;
}

void
snapshot_ack_remove(pid_t target)
{
	char *final = snapshot_ack_path(getpid(), target);
	unlink(final);
	free(final);
}

/* Parse "N ok|error TEXT\n". */
static int
ack_parse(char *buf, unsigned *n, bool *ok, char *text, size_t len)
{
	char *nl = strchr(buf, '\n');
	if (!nl)
		return -EAGAIN; /* cannot be: the file is renamed whole */
	*nl = '\0';
	char *word = NULL;
	unsigned long num = strtoul(buf, &word, 10);
	if (word == buf || *word != ' ')
		return -EINVAL;
	word++;
	if (!strncmp(word, "ok ", 3))
		*ok = true;
	else if (!strncmp(word, "error ", 6))
		*ok = false;
	else
		return -EINVAL;
	*n = (unsigned)num;
	snprintf(text, len, "%s", strchr(word, ' ') + 1);
	return 0;
}

int
snapshot_ack_read(pid_t tracer, pid_t target, uid_t owner, unsigned *n,
		  bool *ok, char *text, size_t len)
{
	char *path = snapshot_ack_path(tracer, target);
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	free(path);
	if (fd < 0)
		return errno == ELOOP ? -EPERM : -errno;
	struct stat st;
	char buf[4200];
	ssize_t got = -1;
	int rc = 0;
	if (fstat(fd, &st))
		rc = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != owner)
		rc = -EPERM; /* not the tracer's: someone else's file */
	else if ((got = read(fd, buf, sizeof(buf) - 1)) < 0)
		rc = -errno;
	close(fd);
	if (rc)
		return rc;
	buf[got] = '\0';
	return ack_parse(buf, n, ok, text, len);
}
