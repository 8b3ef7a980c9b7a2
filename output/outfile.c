/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where a profile goes and how it gets there: --massif-out-file's %
   expansion, and writing a file so that a reader never sees half of it
   (temporary file and rename) without ever replacing a device or a pipe. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"

/* A growing string. */
struct sbuf {
	char *s;
	size_t len, cap;
};

static void
sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	ht_xgrow((void **)&b->s, &b->cap, b->len + n + 1, 1);
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static int
expand_fail(struct sbuf *b, char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int
expand_fail(struct sbuf *b, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(err, errlen, "--massif-out-file: ");

	if (n > 0 && (size_t)n < errlen) {
		va_start(ap, fmt);
		vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	free(b->s);
	return -HT_E_BADOPT;
}

/* %q{VAR} at P (just past "%q"): append VAR's value, return the length of
   "{VAR}", or 0 when malformed or unset (ERR says which). */
static size_t
env_expand(struct sbuf *b, const char *p, char *err, size_t errlen)
{
	const char *close = p[0] == '{' ? strchr(p, '}') : NULL;

	if (!close || close == p + 1) {
		expand_fail(b, err, errlen,
			    "%%q must be followed by {VARIABLE}");
		return 0;
	}

	char *name = ht_xasprintf("%.*s", (int)(close - p - 1), p + 1);
	const char *val = getenv(name);
	if (!val) {
		expand_fail(b, err, errlen,
			    "environment variable %s (in %%q{%s}) is not set",
			    name, name);
		free(name);
		return 0;
	}
	free(name);
	sbuf_add(b, val, strlen(val));
	return (size_t)(close - p) + 1;
}

int
out_filename_expand(const char *pattern, long pid, const char *cwd,
		    char **out, char *err, size_t errlen)
{
	struct sbuf b = { 0 };
	char num[32];

	if (!*pattern)
		return expand_fail(&b, err, errlen, "the file name is empty");
	if (pattern[0] == '~')
		return expand_fail(&b, err, errlen,
				   "'~' is not expanded in '%s' (%%q{HOME} "
				   "is)", pattern);
	for (const char *p = pattern; *p;) {
		size_t plain = strcspn(p, "%");

		sbuf_add(&b, p, plain);
		p += plain;
		if (!*p)
			break;
		switch (p[1]) {
		case '%':
			sbuf_add(&b, "%", 1);
			p += 2;
			break;
		case 'p':
			snprintf(num, sizeof(num), "%ld", pid);
			sbuf_add(&b, num, strlen(num));
			p += 2;
			break;
		case 'n':
			sbuf_add(&b, "1", 1);
			p += 2;
			break;
		case 'q': {
			size_t used = env_expand(&b, p + 2, err, errlen);
			if (!used)
				return -HT_E_BADOPT;
			p += 2 + used;
			break;
		}
		case '\0':
			return expand_fail(&b, err, errlen,
					   "'%s' ends with a lone %%", pattern);
		default:
			return expand_fail(&b, err, errlen,
					   "unknown %%%c in '%s' (use %%p, %%n, "
					   "%%q{VAR} or %%%%)", p[1], pattern);
		}
	}
	if (!b.len)
		return expand_fail(&b, err, errlen,
				   "'%s' expands to an empty name", pattern);
	/* Only the result tells whether the name is relative:
	   "%q{HOME}/x" is not. */
	if (b.s[0] != '/' && cwd) {
		size_t n = strlen(cwd);
		bool slash = n && cwd[n - 1] == '/';
		*out = ht_xasprintf("%s%s%s", cwd, slash ? "" : "/", b.s);
		free(b.s);
	} else {
		*out = b.s;
	}
	return 0;
}

/* -errno, never 0 even when a failing call forgot to set errno. */
static int
errno_neg(void)
{
	int e = errno;

	return e > 0 ? -e : -EIO;
}

/* Fill the open descriptor FD and close it, whatever happens. */
static int
fd_fill(int fd, out_fill_fn fill, void *arg)
{
	FILE *f = fdopen(fd, "w");

	if (!f) {
		int rc = errno_neg();
		close(fd);
		return rc;
	}
	int rc = fill(f, arg);
	errno = 0;
	if (fclose(f) && !rc)
		rc = errno_neg();
	return rc;
}

/* Create a fresh file in TARGET's directory, mode 0644 less the umask
   (mkstemp would force 0600). Its name does not grow with TARGET's, so a
   long TARGET cannot make it too long. Returns its descriptor and its
   malloc'd name in *TMP, or -errno. */
static int
temp_create(const char *target, char **tmp)
{
	const char *slash = strrchr(target, '/');
	int dirlen = slash ? (int)(slash - target + 1) : 0;
	struct timespec ts;

	for (unsigned tries = 0; tries < 100; tries++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		*tmp = ht_xasprintf("%.*s.heaptrace.%ld.%lx.tmp", dirlen,
				    target, (long)getpid(),
				    (unsigned long)ts.tv_nsec + tries);
		int fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      0644);
		if (fd >= 0)
			return fd;
		int rc = errno_neg();
		free(*tmp);
		*tmp = NULL;
		if (rc != -EEXIST)
			return rc;
	}
	return -EEXIST;
}

/* Fill FD, the temporary file TMP, and rename it over TARGET. OLD is
   TARGET's status when it exists, else NULL. */
static int
file_replace(int fd, const char *tmp, const char *target,
	     const struct stat *old, out_fill_fn fill, void *arg)
{
	int rc = 0;

	if (old && fchmod(fd, old->st_mode & 0777))
		rc = errno_neg();
	if (!rc)
		rc = fd_fill(fd, fill, arg);
	else
		close(fd);
	if (!rc && rename(tmp, target))
		rc = errno_neg();
	if (rc)
		unlink(tmp);
	return rc;
}

/* Write PATH in place: a device, a pipe, or a file we may not replace. */
static int
file_rewrite(const char *path, int flags, out_fill_fn fill, void *arg)
{
	int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC | flags, 0644);

	if (fd < 0)
		return -errno;
	return fd_fill(fd, fill, arg);
}

/* TARGET is a regular file with status OLD, or none (OLD NULL). */
static int
regular_write(const char *target, const struct stat *old, out_fill_fn fill,
	      void *arg)
{
	char *tmp;
	int fd = temp_create(target, &tmp);

	/* A writable file in a directory we cannot add to: rewriting it is
	   what Massif would do, and better than no profile. */
	if (old && (fd == -EACCES || fd == -EPERM))
		return file_rewrite(target, O_TRUNC, fill, arg);
	if (fd < 0)
		return fd;
	int rc = file_replace(fd, tmp, target, old, fill, arg);
	free(tmp);
	return rc;
}

int
out_file_write(const char *path, out_fill_fn fill, void *arg)
{
	struct stat st, lst;

	if (stat(path, &st)) {
		if (errno != ENOENT)
			return -errno;
		/* A dangling symlink: create its target, as open would. */
		if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
			return file_rewrite(path, O_CREAT | O_TRUNC, fill,
					    arg);
		return regular_write(path, NULL, fill, arg);
	}
	if (!S_ISREG(st.st_mode))
		return file_rewrite(path, 0, fill, arg);

	/* Replace what a symlink points to, not the symlink. */
	char *real = realpath(path, NULL);
	if (!real)
		return -errno;
	int rc = regular_write(real, &st, fill, arg);
	free(real);
	return rc;
}
