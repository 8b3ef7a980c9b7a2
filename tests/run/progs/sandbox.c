/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A program that sandboxes itself, as servers do before serving
   (tests/run/sandbox.sh): it installs a seccomp filter of its own (plain
   BPF, with no_new_privs), then forks CHILDREN children, each of which
   allocates and frees blocks and exits with status 10 + its number.
   The parent and each child check that the filter holds (an openat
   denied as expected; never tried where it would kill), prints each child's
   status in order, and exits 7. With a third argument "wait" it says
   "ready" after the filter is in and waits for a line on stdin before
   the openat and the forks (for heaptrace attach); with "exec" it execs
   itself once the filter is in (as "execd": the filter inherited), and
   the new image does the rest.

   FILTER:
   none          no filter
   errno-openat  openat (and open) fail with EPERM
   kill-openat   openat (and open) kill the process (SECCOMP_RET_KILL_PROCESS)
   kill-memfd    openat and memfd_create kill the process
   two           errno-openat, then a second filter killing memfd_create:
                 the first one's denial must still be EPERM
   memfd         memfd_create kills the process (and nothing else: a
                 program that execs needs openat)

   "sandbox --contain PROG ARGS..." runs PROG under a filter of its own
   that denies only acct(2), as a container's would deny a few calls:
   PROG (heaptrace) and all it runs inherit it.
   nobody        no filter: it drops root for user and group nobody
                 (65534), as a daemon does before serving */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define LOAD_ARCH BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			   offsetof(struct seccomp_data, arch))
#define LOAD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, \
			 offsetof(struct seccomp_data, nr))
static int
install(struct sock_filter *code, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = code };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

/* Install a filter that returns ACTION for each of the N calls NRS (at
   most 4) and allows every other call. */
static int
install_for(const unsigned *nrs, unsigned n, unsigned action)
{
	struct sock_filter code[4 + 2 * 4] = {
		LOAD_ARCH,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		LOAD_NR,
	};
	unsigned short len = 4;
	for (unsigned i = 0; i < n && i < 4; i++) {
		code[len++] = (struct sock_filter)
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nrs[i], 0, 1);
		code[len++] = (struct sock_filter)
			BPF_STMT(BPF_RET | BPF_K, action);
	}
	code[len++] = (struct sock_filter)
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	return install(code, len);
}

#define INSTALL(action, ...) \
	install_for((const unsigned[]){ __VA_ARGS__ }, \
		    sizeof((const unsigned[]){ __VA_ARGS__ }) / sizeof(unsigned), \
		    (action))

#define DENY (SECCOMP_RET_ERRNO | EPERM)

/* The filter FILTER; whether openat is denied (not killed) after it. */
static int
sandbox(const char *filter, int *openat_denied)
{
	*openat_denied = 0;
	if (strcmp(filter, "none") == 0)
		return 0;
	if (strcmp(filter, "nobody") == 0)
		return setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
		       setresuid(65534, 65534, 65534) ? -1 : 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	if (strcmp(filter, "errno-openat") == 0) {
		*openat_denied = 1;
		return INSTALL(DENY, SYS_openat, SYS_open);
	}
	if (strcmp(filter, "kill-openat") == 0)
		return INSTALL(SECCOMP_RET_KILL_PROCESS, SYS_openat, SYS_open);
	if (strcmp(filter, "kill-memfd") == 0)
		return INSTALL(SECCOMP_RET_KILL_PROCESS, SYS_openat, SYS_open,
			       SYS_memfd_create);
	if (strcmp(filter, "memfd") == 0)
		return INSTALL(SECCOMP_RET_KILL_PROCESS, SYS_memfd_create);
	if (strcmp(filter, "two") == 0) {
		*openat_denied = 1;
		if (INSTALL(DENY, SYS_openat, SYS_open))
			return -1;
		return INSTALL(SECCOMP_RET_KILL_PROCESS, SYS_memfd_create);
	}
	errno = EINVAL;
	return -1;
}

static void
try_open(const char *who)
{
	int fd = open("/dev/null", O_RDONLY);
	printf("%s: open: %s\n", who, fd < 0 ? strerror(errno) : "allowed");
	if (fd >= 0)
		close(fd);
}

static unsigned long
work(int n)
{
	unsigned long sum = 0;
	for (int i = 0; i < 200; i++) {
		char *p = malloc(100 + (size_t)(i * n));
		if (!p)
			return 0;
		memset(p, i, 100);
		sum += (unsigned char)p[99];
		free(p);
	}
	char *keep = malloc(1000 * (size_t)(n + 1)); /* held at the peak */
	if (keep)
		memset(keep, 1, 1000 * (size_t)(n + 1));
	return sum + (keep ? 1 : 0);
}

int
main(int argc, char **argv)
{
	if (argc > 2 && strcmp(argv[1], "--contain") == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    INSTALL(DENY, SYS_acct)) {
			perror("seccomp");
			return 2;
		}
		execv(argv[2], argv + 2);
		perror("execv");
		return 2;
	}
	const char *mode = argc == 4 ? argv[3] : "";
	if (argc != 3 && !(argc == 4 && (strcmp(mode, "wait") == 0 ||
					 strcmp(mode, "exec") == 0 ||
					 strcmp(mode, "execd") == 0))) {
		fprintf(stderr, "usage: sandbox FILTER CHILDREN "
				"[wait|exec]\n");
		return 2;
	}
	int children = atoi(argv[2]);
	int denied;
	if (strcmp(mode, "execd") == 0) /* the filter is inherited */
		denied = strcmp(argv[1], "errno-openat") == 0 ||
			 strcmp(argv[1], "two") == 0;
	else if (sandbox(argv[1], &denied)) {
		perror("seccomp");
		return 2;
	}
	if (strcmp(mode, "exec") == 0) {
		char *again[] = { argv[0], argv[1], argv[2], "execd", NULL };
		execv("/proc/self/exe", again);
		perror("execv");
		return 2;
	}
	if (strcmp(mode, "wait") == 0) {
		char line[16];
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 3;
	}
	if (denied) /* after the wait: an attach must not change it */
		try_open("parent");
	fflush(stdout);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 2;
		}
		if (pid == 0) {
			if (denied) /* heaptrace gave it a ring meanwhile */
				try_open("child");
			printf("child %d: %lu\n", i, work(i + 1));
			fflush(stdout);
			_exit(10 + i);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid) {
			perror("waitpid");
			return 2;
		}
		if (WIFEXITED(status))
			printf("child %d: exit %d\n", i, WEXITSTATUS(status));
		else
			printf("child %d: signal %d\n", i, WTERMSIG(status));
		fflush(stdout);
	}
	printf("parent: %lu\n", work(0));
	return 7;
}
