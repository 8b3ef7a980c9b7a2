/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace snapshot PID`: finds the heaptrace that traces PID (the
   TracerPid of /proc/PID/status, recognised by its executable or its
   name), sends it SIGUSR1, and waits for its acknowledgement
   (snapshot_ack.c) to print the file written. */
#include "snapshot_cmd.h"

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "snapshot_ack.h"

#define EXIT_USAGE 2
#define ANSWER_WAIT_MS 5000 /* writing a profile takes milliseconds */
#define POLL_MS 10

/* What /proc/PID/status says about the process. */
struct proc_status {
	pid_t tgid, tracer;
	uid_t euid;
	char name[64];
};

static int
status_read(pid_t pid, struct proc_status *st)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	memset(st, 0, sizeof(*st));
	unsigned ruid, euid;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Name:\t%63[^\n]", st->name) == 1)
			continue;
		if (sscanf(line, "Tgid:\t%d", &st->tgid) == 1)
			continue;
		if (sscanf(line, "TracerPid:\t%d", &st->tracer) == 1)
			continue;
		if (sscanf(line, "Uid:\t%u\t%u", &ruid, &euid) == 2)
			st->euid = euid;
	}
	fclose(f);
	return 0;
}

/* True when /proc/PID/exe is the very file this program runs from. */
static bool
same_executable(pid_t pid)
{
	char path[64];
	struct stat mine, theirs;
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	return stat("/proc/self/exe", &mine) == 0 && stat(path, &theirs) == 0 &&
	       mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino;
}

/* The same binary, or another build of it (its name is heaptrace's: the
   executable of another user's process cannot be read). */
static bool
is_heaptrace(pid_t pid, const struct proc_status *st)
{
	return same_executable(pid) || strcmp(st->name, "heaptrace") == 0;
}

static int
parse_pid(int argc, char **argv, pid_t *pid)
{
	if (argc != 2) {
		ht_error(argc < 2 ? "snapshot: missing the PID of the profiled "
				    "program (heaptrace snapshot PID)"
				  : "snapshot: one PID only (heaptrace "
				    "snapshot PID)");
		return -1;
	}
	char *end;
	errno = 0;
	long v = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || v <= 0 || v > INT32_MAX) {
		ht_error("snapshot: PID must be a positive decimal integer, "
			 "not '%s'", argv[1]);
		return -1;
	}
	*pid = (pid_t)v;
	return 0;
}

/* The heaptrace profiling PID into *TRACER (its status too), or an error
   message and -1. */
static int
find_tracer(pid_t pid, struct proc_status *target, struct proc_status *tracer)
{
	int rc = status_read(pid, target);
	if (rc) {
		ht_error("snapshot: %s process %d", rc == -ENOENT ?
			 "no" : "cannot read", (int)pid);
		return -1;
	}
	if (!target->tracer) {
		if (strcmp(target->name, "heaptrace") == 0)
			ht_error("snapshot: process %d is heaptrace itself: give "
				 "the pid of the program it profiles (or send "
				 "it SIGUSR1)", (int)pid);
		else
			ht_error("snapshot: process %d is not traced (not "
				 "profiled by heaptrace)", (int)pid);
		return -1;
	}
	if (status_read(target->tracer, tracer)) {
		ht_error("snapshot: process %d is traced by process %d, which "
			 "is gone", (int)pid, (int)target->tracer);
		return -1;
	}
	if (!is_heaptrace(target->tracer, tracer)) {
		ht_error("snapshot: process %d is traced by process %d (%s), "
			 "not by heaptrace", (int)pid, (int)target->tracer,
			 tracer->name);
		return -1;
	}
	return 0;
}

static void
sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/* Wait for an acknowledgement numbered above LAST; print it. */
static int
await_answer(pid_t tracer, pid_t tgid, uid_t owner, unsigned last)
{
	char text[4096];
	for (long waited = 0; waited < ANSWER_WAIT_MS; waited += POLL_MS) {
		unsigned n;
		bool ok;
		int rc = snapshot_ack_read(tracer, tgid, owner, &n, &ok, text,
					   sizeof(text));
		if (rc == 0 && n > last) {
			if (!ok) {
				ht_error("%s", text);
				return EXIT_FAILURE;
			}
			printf("%s\n", text);
			return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
		}
		if (kill(tracer, 0) && errno == ESRCH)
			break;
		sleep_ms(POLL_MS);
	}
	ht_error("snapshot: heaptrace (process %d) did not report a snapshot "
		 "of process %d within %d s", (int)tracer, (int)tgid,
		 ANSWER_WAIT_MS / 1000);
	return EXIT_FAILURE;
}

int
snapshot_cmd(int argc, char **argv)
{
	pid_t pid;
	struct proc_status target, tracer;
	if (argc == 2 && (!strcmp(argv[1], "-h") ||
			  !strcmp(argv[1], "--help"))) {
		fputs("usage: heaptrace snapshot PID\n", stdout);
		snapshot_cmd_usage(stdout);
		return EXIT_SUCCESS;
	}
	if (parse_pid(argc, argv, &pid) || find_tracer(pid, &target, &tracer))
		return EXIT_USAGE;
	pid_t tgid = target.tgid ? target.tgid : pid;
	unsigned last = 0;
	bool ok;
	char text[16];
	snapshot_ack_read(target.tracer, tgid, tracer.euid, &last, &ok, text,
			  sizeof(text));
	if (kill(target.tracer, SIGUSR1)) {
		if (errno == EPERM)
			ht_error("snapshot: permission denied: heaptrace "
				 "(process %d) profiling process %d is another "
				 "user's", (int)target.tracer, (int)pid);
		else
			ht_error("snapshot: cannot signal heaptrace (process "
				 "%d): %s", (int)target.tracer,
				 strerror(errno));
		return EXIT_USAGE;
	}
	return await_answer(target.tracer, tgid, tracer.euid, last);
}

void
snapshot_cmd_usage(FILE *out)
{
	fputs("\n"
	      "Snapshots on demand:\n"
	      "  While heaptrace runs, `heaptrace snapshot PID` (PID: the "
	      "profiled program's)\n"
	      "  or `kill -USR1 HEAPTRACE_PID` writes, for every process being "
	      "profiled, its\n"
	      "  profile so far as a complete massif.out: the snapshots so far "
	      "and a detailed\n"
	      "  one of now, without disturbing the session (the final profile "
	      "is the same).\n"
	      "  The file is the profile's name with .snapshot-N appended, N "
	      "counting from 1\n"
	      "  in each process (massif.out.1234.snapshot-1). heaptrace "
	      "prints one line per\n"
	      "  file (unless -q); `heaptrace snapshot` prints the file's name "
	      "on stdout once\n"
	      "  it is written (exit 0), or why not (exit 1: not written, 2: "
	      "no such process,\n"
	      "  not profiled by heaptrace, permission denied).\n",
	      out);
}
