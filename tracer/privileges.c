/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program that gains privileges when it starts (set-user-ID,
   set-group-ID, file capabilities) does not get them when it execs under
   a tracer without CAP_SYS_PTRACE: the kernel runs it with the caller's
   credentials, and it behaves differently (passwd -S, ping). heaptrace
   cannot change that; it says so, once per such exec.

   The test is made after the exec, on what the kernel did: the program's
   file asks for an identity or capabilities the new image does not have.
   So a set-user-ID program of the caller's own user, or one run by root
   (who keeps its privileges: CAP_SYS_PTRACE, CAP_SETUID), gets no line;
   nor one on a nosuid mount, or when heaptrace itself runs under
   no_new_privs, which its program would inherit without heaptrace too.
   (no_new_privs that heaptrace sets for the seccomp filter of `run
   --pages-as-heap=yes` does withhold them: said.) */
#include "tracer/session.h"

#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/err.h"

/* What /proc/PID/status says of the new image's credentials. */
struct creds {
	long euid, egid;
	uint64_t cap_prm;
};

static bool
read_creds(pid_t pid, struct creds *c)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	int found = 0;
	*c = (struct creds){ .euid = -1, .egid = -1 };
	while (fgets(line, sizeof(line), f)) {
		found += sscanf(line, "Uid: %*d %ld", &c->euid) == 1;
		found += sscanf(line, "Gid: %*d %ld", &c->egid) == 1;
		found += sscanf(line, "CapPrm: %" SCNx64, &c->cap_prm) == 1;
	}
	fclose(f);
	return found == 3;
}

/* The permitted set the file's capabilities grant (security.capability,
   struct vfs_cap_data: little-endian words), 0 without any. */
static uint64_t
file_caps(const char *exe)
{
	uint32_t v[5] = { 0 }; /* magic; permitted, inheritable x 2 */
	ssize_t n = getxattr(exe, "security.capability", v, sizeof(v));
	if (n < (ssize_t)(3 * sizeof(uint32_t)))
		return 0;
	uint64_t prm = v[1];
	if ((v[0] & VFS_CAP_REVISION_MASK) != VFS_CAP_REVISION_1 &&
	    n >= (ssize_t)(5 * sizeof(uint32_t)))
		prm |= (uint64_t)v[3] << 32;
	return prm;
}

/* "set-user-ID root", "set-group-ID shadow", "file capabilities", or
   several, in OUT; empty when nothing was withheld. */
static void
withheld(const struct stat *st, const struct creds *c, uint64_t caps,
	 char *out, size_t len)
{
	size_t n = 0;
	out[0] = 0;
	char id[32];
	if ((st->st_mode & S_ISUID) && (long)st->st_uid != c->euid) {
		const struct passwd *pw = getpwuid(st->st_uid);
		snprintf(id, sizeof(id), "uid %ld", (long)st->st_uid);
		n += (size_t)snprintf(out, len, "set-user-ID %s",
				      pw ? pw->pw_name : id);
	}
	/* without group execute, the bit means mandatory locking */
	if (n < len && (st->st_mode & S_ISGID) && (st->st_mode & S_IXGRP) &&
	    (long)st->st_gid != c->egid) {
		const struct group *gr = getgrgid(st->st_gid);
		snprintf(id, sizeof(id), "gid %ld", (long)st->st_gid);
		n += (size_t)snprintf(out + n, len - n, "%sset-group-ID %s",
				      n ? ", " : "", gr ? gr->gr_name : id);
	}
	if (n < len && (caps & ~c->cap_prm))
		snprintf(out + n, len - n, "%sfile capabilities",
			 n ? ", " : "");
}

void
privileges_check_exec(pid_t pid)
{
	char exe[64], path[PATH_MAX], what[160];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	struct stat st;
	struct statvfs vfs;
	struct creds c;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 ||
	    stat(exe, &st) < 0 || !read_creds(pid, &c) ||
	    (statvfs(exe, &vfs) == 0 && (vfs.f_flag & ST_NOSUID)))
		return;
	uint64_t caps = file_caps(exe);
	if (!(st.st_mode & (S_ISUID | S_ISGID)) && !caps)
		return; /* the common case: nothing more read */
	withheld(&st, &c, caps, what, sizeof(what));
	if (!what[0])
		return;
	ssize_t n = readlink(exe, path, sizeof(path) - 1);
	path[n > 0 ? n : 0] = 0;
	ht_warn("process %d: %s (%s) runs without its privileges under "
		"heaptrace: the kernel grants them to a traced program only "
		"when its tracer has CAP_SYS_PTRACE", (int)pid,
		n > 0 ? path : "its program", what);
}
