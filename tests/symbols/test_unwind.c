/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The fast unwinder against libdw's: both must give the same addresses for
   every stack. "step" single-steps every thread of a program from its exec
   to its exit and compares the two walks at every instruction: prologues,
   epilogues, the dynamic linker, the allocator's insides, signal
   trampolines, thread starts; the tracer's module re-reading after mmap and
   munmap is imitated. "swap" checks that the rules of an unloaded library
   are forgotten when another is loaded at its address. Usage:
   test_unwind step PROGRAM [ARG] | swap PROGRAM LIB1 LIB2. */
#include "symbols/session.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace.h"

#define MAX_PCS 64
/* As much stack as the tracer copies at an allocator's entry; deeper
   frames are read from the process, as they are there. */
#define STEP_COPY (16 * 1024)
#define MAX_THREADS 16
#define MAX_REPORTS 5

/* One walk with each unwinder over S; a failure, with both stacks, when
   they differ. MAX bounds the frames. Returns the frames found. */
static unsigned
compare(struct sym_session *ss, const struct snap *s, unsigned max,
	unsigned long step)
{
	static unsigned reports;
	uint64_t fast[MAX_PCS], slow[MAX_PCS];
	unsigned nf, ns;
	bool same;

	sym_session_unwind_with_libdw(ss, false);
	nf = sym_unwind(ss, &s->cap, fast, max);
	sym_session_unwind_with_libdw(ss, true);
	ns = sym_unwind(ss, &s->cap, slow, max);
	sym_session_unwind_with_libdw(ss, false);
	same = nf == ns && memcmp(fast, slow, nf * sizeof(*fast)) == 0;
	check(same, "step %lu, pc %#llx: the walks differ (%u and %u frames)",
	      step, (unsigned long long)s->cap.regs.rip, nf, ns);
	if (!same && reports++ < MAX_REPORTS) {
		for (unsigned i = 0; i < nf || i < ns; i++)
			printf("  #%-2u fast %#14llx  libdw %#14llx\n", i,
			       i < nf ? (unsigned long long)fast[i] : 0ULL,
			       i < ns ? (unsigned long long)slow[i] : 0ULL);
	}
	return nf;
}

/* Whether the instruction at PC is a syscall, which a single step runs
   to its end. */
static bool
is_syscall_insn(pid_t pid, uint64_t pc)
{
	uint8_t insn[2];
	struct iovec local = { insn, sizeof(insn) };
	struct iovec remote = { (void *)(uintptr_t)pc, sizeof(insn) };

	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 2 &&
	       insn[0] == 0x0f && insn[1] == 0x05;
}

/* Whether the system call number NR can map or unmap code. */
static bool
maps_code(uint64_t nr)
{
	return nr == SYS_mmap || nr == SYS_munmap || nr == SYS_mprotect ||
	       nr == SYS_mremap;
}

/* A traced thread and where it was at its previous step. */
struct thread {
	pid_t tid;
	uint64_t prev_pc, prev_nr;
};

struct stepping {
	struct thread th[MAX_THREADS];
	unsigned n_threads;
	unsigned long steps, frames, deepest;
};

static struct thread *
thread_of(struct stepping *st, pid_t tid)
{
	for (unsigned i = 0; i < st->n_threads; i++)
		if (st->th[i].tid == tid)
			return &st->th[i];
	if (st->n_threads == MAX_THREADS) {
		errno = EAGAIN;
		harness("too many threads");
	}
	st->th[st->n_threads] = (struct thread){ .tid = tid };
	return &st->th[st->n_threads++];
}

static void
thread_gone(struct stepping *st, pid_t tid)
{
	for (unsigned i = 0; i < st->n_threads; i++)
		if (st->th[i].tid == tid)
			st->th[i] = st->th[--st->n_threads];
}

/* A single-step stop of thread T: re-read the modules when the step ran a
   system call that maps or unmaps (the tracer does so after such calls),
   then compare the walks, now and then also with a small MAX. */
static void
step_stop(struct sym_session *ss, struct stepping *st, struct thread *t)
{
	static struct snap s;
	unsigned n;

	capture_upto(t->tid, &s, STEP_COPY);
	if (maps_code(t->prev_nr) && is_syscall_insn(t->tid, t->prev_pc))
		sym_session_refresh(ss);
	t->prev_pc = s.cap.regs.rip;
	t->prev_nr = s.cap.regs.rax;
	n = compare(ss, &s, MAX_PCS, st->steps);
	if (st->steps % 97 == 0)
		compare(ss, &s, 2, st->steps);
	st->steps++;
	st->frames += n;
	if (n > st->deepest)
		st->deepest = n;
}

/* Single-step every thread of PROG from its exec to its exit. */
static void
test_step(const char *prog, const char *arg)
{
	struct stepping st = { .n_threads = 0 };
	struct sym_unwind_stats us;
	struct sym_session *ss;
	struct child c;
	pid_t tid;
	int status;

	launch(prog, arg, PTRACE_O_TRACECLONE, &c);
	ss = sym_session_new(c.pid);
	if (!ss)
		harness("sym_session_new");
	thread_of(&st, c.pid);
	if (ptrace(PTRACE_SINGLESTEP, c.pid, NULL, NULL) != 0)
		harness("PTRACE_SINGLESTEP");
	while ((tid = waitpid(-1, &status, __WALL)) > 0) {
		int sig = 0;

		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			thread_gone(&st, tid);
			continue;
		}
		if (!WIFSTOPPED(status))
			continue;
		/* A signal for the program is passed on, except the stops
		   the test programs give themselves and a new thread's
		   first stop. */
		if (WSTOPSIG(status) == SIGTRAP)
			step_stop(ss, &st, thread_of(&st, tid));
		else if (WSTOPSIG(status) != SIGSTOP)
			sig = WSTOPSIG(status);
		else
			thread_of(&st, tid);
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL,
			   (void *)(long)sig) != 0 && errno != ESRCH)
			harness("PTRACE_SINGLESTEP");
	}
	sym_session_unwind_stats(ss, &us);
	printf("%lu stops compared, %.1f frames on average, %lu at most\n",
	       st.steps, st.steps ? (double)st.frames / st.steps : 0.0,
	       st.deepest);
	printf("fast walks: %llu of %llu events redone by libdw; %llu rules "
	       "compiled, %llu of them for libdw\n",
	       (unsigned long long)us.fallbacks,
	       (unsigned long long)(us.events - us.by_libdw + us.fallbacks),
	       (unsigned long long)us.rules,
	       (unsigned long long)us.complex);
	check(st.steps > 1000, "only %lu stops", st.steps);
	sym_session_free(ss);
	close(c.out);
}

/* Whether a mapping of PID whose path contains NAME covers ADDR. */
static bool
mapped_at(pid_t pid, const char *name, uint64_t addr)
{
	char path[64], line[4096];
	unsigned long long lo, hi;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		harness(path);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%llx-%llx", &lo, &hi) == 2 &&
			addr >= lo && addr < hi && strstr(line, name);
	fclose(f);
	return found;
}

/* PROG loads LIB1, stops, unloads it, loads LIB2 at the same address, and
   stops again. The first stop's stack, walked again after the modules are
   re-read, must walk as libdw walks it now, by LIB2's CFI where LIB1's
   was: the rules compiled for LIB1's pcs are gone. */
static void
test_swap(const char *prog, const char *lib1, const char *lib2)
{
	static struct snap first, second;
	struct sym_unwind_stats before, after;
	char arg[2 * 4096 + 2];
	uint64_t pcs[MAX_PCS];
	struct sym_session *ss;
	struct child c;
	unsigned n;
	int in_lib = -1;

	snprintf(arg, sizeof(arg), "%s:%s", lib1, lib2);
	launch(prog, arg, 0, &c);
	ss = sym_session_new(c.pid);
	if (!ss)
		harness("sym_session_new");
	if (ptrace(PTRACE_CONT, c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(c.pid);
	capture(c.pid, &first);
	n = compare(ss, &first, MAX_PCS, 0);
	sym_unwind(ss, &first.cap, pcs, MAX_PCS);
	for (unsigned i = 1; i < n && in_lib < 0; i++)
		if (mapped_at(c.pid, strrchr(lib1, '/') ? strrchr(lib1, '/')
				     : lib1, pcs[i]))
			in_lib = (int)i;
	check(in_lib > 0, "no frame in %s at the first stop", lib1);

	if (ptrace(PTRACE_CONT, c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(c.pid);
	sym_session_refresh(ss);
	capture(c.pid, &second);
	compare(ss, &second, MAX_PCS, 1);
	if (in_lib > 0 && !mapped_at(c.pid, strrchr(lib2, '/') ?
				     strrchr(lib2, '/') : lib2, pcs[in_lib])) {
		printf("SKIP: %s was not loaded where %s was\n", lib2, lib1);
		exit(EXIT_SKIP);
	}
	sym_session_unwind_stats(ss, &before);
	compare(ss, &first, MAX_PCS, 2);
	sym_session_unwind_stats(ss, &after);
	printf("the first stack walked again after the swap: %llu rules "
	       "compiled\n",
	       (unsigned long long)(after.rules - before.rules));
	check(after.rules > before.rules,
	      "the first stack, walked again, compiled no rule: %s's rules "
	      "were kept for %s", lib1, lib2);
	finish(c.pid);
	sym_session_free(ss);
	close(c.out);
}

int
main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && argc <= 4 && strcmp(argv[1], "step") == 0)
		test_step(argv[2], argc == 4 ? argv[3] : NULL);
	else if (argc == 5 && strcmp(argv[1], "swap") == 0)
		test_swap(argv[2], argv[3], argv[4]);
	else {
		fprintf(stderr, "usage: %s step PROGRAM [ARG] | "
			"swap PROGRAM LIB1 LIB2\n", argv[0]);
		return EXIT_HARNESS;
	}
	printf("%s: %d failure(s)\n", argv[1], failures);
	return failures ? 1 : 0;
}
