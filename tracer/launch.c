/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Starting the target: checking that the program can be run at all (so a
   typo gets a clear error, not a profile of nothing), then forking a child
   that waits until the tracer has seized it before it execs. */
#include "tracer_priv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

/* Resolve NAME through PATH as execvp would, into OUT. */
static int
find_in_path(const char *name, char *out, size_t len)
{
	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, F_OK) ? -errno : 0;
	}
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	int rc = -ENOENT;
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(out, len, "%.*s%s%s", (int)n, path, n ? "/" : "", name);
		if (access(out, X_OK) == 0)
			return 0;
		if (errno == EACCES)
			rc = -EACCES;
		path += n;
		if (*path == ':')
			path++;
	}
	return rc;
}

int
tracer_check_program(char *const argv[], char *err, size_t errlen)
{
	char path[PATH_MAX];
	int rc = find_in_path(argv[0], path, sizeof(path));
	if (rc) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 rc == -ENOENT ? "no such program" : ht_strerror(rc));
		return rc;
	}
	struct stat st;
	if (stat(path, &st) < 0) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0],
			 strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "cannot run '%s': not a regular file",
			 argv[0]);
		return -EACCES;
	}
	if (access(path, X_OK) < 0) {
		snprintf(err, errlen, "cannot run '%s': not executable",
			 argv[0]);
		return -EACCES;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	unsigned char magic[4] = { 0 };
	ssize_t n = fd >= 0 ? read(fd, magic, sizeof(magic)) : -1;
	if (fd >= 0)
		close(fd);
	if (n < 0) {
		snprintf(err, errlen, "cannot read '%s': %s", argv[0],
			 strerror(errno));
		return -EACCES;
	}
	bool elf = n == 4 && memcmp(magic, "\177ELF", 4) == 0;
	bool script = n >= 2 && magic[0] == '#' && magic[1] == '!';
	if (!elf && !script) {
		snprintf(err, errlen,
			 "cannot run '%s': not an ELF executable or a #! script",
			 argv[0]);
		return -HT_E_FORMAT;
	}
	return 0;
}
