/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The libdw symbol session against real processes. A test program runs
   under ptrace to a raise(SIGSTOP) at the end of a known call chain; the
   driver captures registers and stack as the tracer does, unwinds, and
   checks names and Massif descriptions against the lines the program
   reported through mark(). Usage: test_symbols MODE PROGRAM [ARG]. */
#include "symbols/session.h"

#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PCS 64

/* The "function line" reports of a test program, in the order made. */
struct marks {
	char fn[32][64];
	int line[32];
	int n;
};

static int
mark_line(const struct marks *m, const char *fn)
{
	for (int i = 0; i < m->n; i++)
		if (strcmp(m->fn[i], fn) == 0)
			return m->line[i];
	printf("harness error: the program reported no line for %s\n", fn);
	exit(EXIT_HARNESS);
}

/* Everything written to FD so far; the program wrote its marks before it
   stopped, so nothing more is coming. */
static void
read_marks(int fd, struct marks *m)
{
	char buf[4096], *p, *save = NULL;
	size_t len = 0;
	ssize_t got;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while (len < sizeof(buf) - 1 &&
	       (got = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)got;
	buf[len] = '\0';
	m->n = 0;
	for (p = strtok_r(buf, "\n", &save); p && m->n < 32;
	     p = strtok_r(NULL, "\n", &save)) {
		if (sscanf(p, "%63s %d", m->fn[m->n], &m->line[m->n]) == 2)
			m->n++;
	}
}

static const char *
name_of(struct ht_symbolizer *sym, uint64_t pc)
{
	const char *name = sym->function_name(sym->ctx, pc);

	return name ? name : "(null)";
}

/* The one description line of a frame that has no inlined code. */
static const char *
line_of(struct ht_symbolizer *sym, uint64_t pc)
{
	const char *lines[HT_MAX_INLINE];
	unsigned n = sym->describe(sym->ctx, pc, lines, HT_MAX_INLINE);

	check(n == 1, "%#lx: %u description lines, expected 1",
	      (unsigned long)pc, n);
	return n ? lines[0] : "";
}

static void
dump(struct ht_symbolizer *sym, const uint64_t *pcs, unsigned n)
{
	const char *lines[HT_MAX_INLINE];

	for (unsigned i = 0; i < n; i++) {
		unsigned k = sym->describe(sym->ctx, pcs[i], lines,
					   HT_MAX_INLINE);

		for (unsigned j = 0; j < k; j++)
			printf("  #%-2u %#14lx %s%s\n", i,
			       (unsigned long)pcs[i], j ? "  " : "", lines[j]);
	}
}

static int
find_name(struct ht_symbolizer *sym, const uint64_t *pcs, unsigned n,
	  const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (strcmp(name_of(sym, pcs[i]), name) == 0)
			return (int)i;
	return -1;
}

/* Check that NAMES appear in order on consecutive frames; returns the
   index of the first, or -1. */
static int
check_names(struct ht_symbolizer *sym, const uint64_t *pcs, unsigned n,
	    const char *const *names, unsigned k)
{
	int at = find_name(sym, pcs, n, names[0]);

	check(at >= 0, "no frame named %s", names[0]);
	if (at < 0)
		return -1;
	for (unsigned i = 1; i < k; i++) {
		unsigned f = (unsigned)at + i;
		const char *got = f < n ? name_of(sym, pcs[f]) : "(none)";

		check(strcmp(got, names[i]) == 0,
		      "frame %u: function %s, expected %s", f, got, names[i]);
	}
	return at;
}

/* GOT is WANT ("fn (file:line)"), or WANT with a directory before its
   file name: heaptrace names files as the line table does, and clang's
   DWARF 5 tables hold the path the compiler was given
   ("../tests/symbols/progs/f3.c"), gcc's the bare name. */
static bool
same_frame_text(const char *got, const char *want)
{
	if (strcmp(got, want) == 0)
		return true;
	const char *open = strstr(want, " (");
	if (!open)
		return false;
	size_t head = (size_t)(open - want) + 2, glen = strlen(got),
	       tail = strlen(want) - head;
	return glen > head + tail && strncmp(got, want, head) == 0 &&
	       strcmp(got + glen - tail, want + head) == 0 &&
	       got[glen - tail - 1] == '/';
}

static void
check_line(struct ht_symbolizer *sym, uint64_t pc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
check_line(struct ht_symbolizer *sym, uint64_t pc, const char *fmt, ...)
{
	char want[512];
	const char *got = line_of(sym, pc);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(want, sizeof(want), fmt, ap);
	va_end(ap);
	check(same_frame_text(got, want), "%#lx: \"%s\", expected \"%s\"",
	      (unsigned long)pc, got, want);
}

static bool
starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool
is_below_main(const char *name)
{
	return strcmp(name, "__libc_start_call_main") == 0 ||
	       strcmp(name, "__libc_start_main") == 0 ||
	       starts_with(name, "__libc_start_main.") ||
	       strcmp(name, "_start") == 0;
}

/* The frames from main outwards: the C library's start code, ending in the
   executable's _start. Those named as Valgrind's below-main functions print
   as "(below main)"; with libc's debug symbols, __libc_start_main goes by
   its versioned name ("__libc_start_main@@GLIBC_2.34"), which Valgrind
   does not rename either. */
static void
check_below_main(struct ht_symbolizer *sym, const uint64_t *pcs, unsigned n,
		 unsigned main_at)
{
	const char *caller;

	check(main_at + 2 < n, "only %u frames below main", n - main_at - 1);
	for (unsigned i = main_at + 1; i < n; i++) {
		const char *name = name_of(sym, pcs[i]);
		const char *line = line_of(sym, pcs[i]);

		if (is_below_main(name)) {
			check(starts_with(line, "(below main) ("),
			      "frame %u (%s) prints as \"%s\"", i, name, line);
			continue;
		}
		check(starts_with(name, "__libc_start_main@"),
		      "frame %u below main is %s", i, name);
		check(starts_with(line, name) && line[strlen(name)] == ' ',
		      "frame %u (%s) prints as \"%s\"", i, name, line);
	}
	caller = name_of(sym, pcs[main_at + 1]);
	check(strcmp(caller, "__libc_start_call_main") == 0,
	      "main is called by %s", caller);
	check(strcmp(name_of(sym, pcs[n - 1]), "_start") == 0,
	      "outermost frame is %s, not _start", name_of(sym, pcs[n - 1]));
}

/* A traced program stopped at its raise(SIGSTOP), unwound. */
struct stopped {
	struct child c;
	struct marks marks;
	struct snap snap;
	struct sym_session *ss;
	struct ht_symbolizer sym;
	uint64_t pcs[MAX_PCS];
	unsigned n;
};

static void
stop_and_unwind_arg(struct stopped *t, const char *prog, const char *arg,
		    bool session_at_exec)
{
	launch(prog, arg, 0, &t->c);
	/* At the exec stop only the executable, ld.so and the vdso are
	   mapped: a session made then must find libc when it meets it. */
	if (session_at_exec)
		t->ss = sym_session_new(t->c.pid);
	if (ptrace(PTRACE_CONT, t->c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(t->c.pid);
	read_marks(t->c.out, &t->marks);
	capture(t->c.pid, &t->snap);
	if (!session_at_exec)
		t->ss = sym_session_new(t->c.pid);
	if (!t->ss)
		harness("sym_session_new");
	t->sym = sym_session_symbolizer(t->ss);
	t->n = sym_unwind(t->ss, &t->snap.cap, t->pcs, MAX_PCS);
	check(t->n >= 1 && t->pcs[0] == t->snap.cap.regs.rip,
	      "pcs[0] is not rip");
	dump(&t->sym, t->pcs, t->n);
}

static void
stop_and_unwind(struct stopped *t, const char *prog, bool session_at_exec)
{
	stop_and_unwind_arg(t, prog, NULL, session_at_exec);
}

static void
done(struct stopped *t)
{
	sym_session_free(t->ss);
	close(t->c.out);
}

/* --show-below-main=yes: the start functions by their own names; and
   back. */
static void
check_show_below_main(struct stopped *t, unsigned main_at)
{
	uint64_t start_pc = t->pcs[t->n - 1];
	const char *line;

	sym_session_show_below_main(t->ss, true);
	line = line_of(&t->sym, t->pcs[main_at + 1]);
	check(starts_with(line, "__libc_start_call_main (libc_start_call_main"),
	      "shown below main: \"%s\"", line);
	line = line_of(&t->sym, start_pc);
	check(starts_with(line, "_start (in /"), "shown below main: \"%s\"",
	      line);
	sym_session_show_below_main(t->ss, false);
	line = line_of(&t->sym, start_pc);
	check(starts_with(line, "(below main) (in /"),
	      "hidden below main again: \"%s\"", line);
}

static const char *const chain_names[] = { "f3", "f2", "f1", "f0", "main" };

/* Names, lines and below-main frames of the -O0 chain; then that what was
   resolved survives a refresh and the process's exit. */
static void
test_chain(const char *prog, bool session_at_exec)
{
	static struct stopped t;
	const char *before[MAX_PCS], *names[MAX_PCS];
	const char *lines[HT_MAX_INLINE];
	uint64_t again[MAX_PCS];
	unsigned n2;
	int at;

	stop_and_unwind(&t, prog, session_at_exec);
	/* Described first, before any function_name: a pc seen for the
	   first time by describe resolves too. */
	for (unsigned i = 0; i < t.n; i++)
		before[i] = line_of(&t.sym, t.pcs[i]);
	at = check_names(&t.sym, t.pcs, t.n, chain_names, 5);
	if (at < 0)
		goto out;
	for (unsigned i = 0; i < 4; i++)
		check_line(&t.sym, t.pcs[at + i], "%s (%s.c:%d)",
			   chain_names[i], chain_names[i],
			   mark_line(&t.marks, chain_names[i]));
	check_line(&t.sym, t.pcs[at + 4], "main (chain.c:%d)",
		   mark_line(&t.marks, "main"));
	check_below_main(&t.sym, t.pcs, t.n, (unsigned)at + 4);
	check_show_below_main(&t, (unsigned)at + 4);

	/* A truncated unwind keeps the innermost frames. */
	n2 = sym_unwind(t.ss, &t.snap.cap, again, 3);
	check(n2 == 3 && memcmp(again, t.pcs, sizeof(*again) * 3) == 0,
	      "unwind to 3 frames gave %u", n2);

	/* Nothing is known about an address outside every module. */
	check(t.sym.function_name(t.sym.ctx, 0x10) == NULL,
	      "0x10 has a function name");
	check(t.sym.describe(t.sym.ctx, 0x10, lines, HT_MAX_INLINE) == 1 &&
	      strcmp(lines[0], "???") == 0, "0x10 is not \"???\"");

	sym_session_refresh(t.ss);
	n2 = sym_unwind(t.ss, &t.snap.cap, again, MAX_PCS);
	check(n2 == t.n && memcmp(again, t.pcs, sizeof(*again) * n2) == 0,
	      "unwind after refresh differs");
	for (unsigned i = 0; i < t.n; i++) {
		check(line_of(&t.sym, t.pcs[i]) == before[i],
		      "frame %u re-resolved after refresh", i);
		names[i] = t.sym.function_name(t.sym.ctx, t.pcs[i]);
	}

	finish(t.c.pid);
	for (unsigned i = 0; i < t.n; i++) {
		check(line_of(&t.sym, t.pcs[i]) == before[i],
		      "frame %u: description lost after exit", i);
		check(t.sym.function_name(t.sym.ctx, t.pcs[i]) == names[i],
		      "frame %u: name lost after exit", i);
	}
	/* The copy of the stack still unwinds once the process is gone. */
	n2 = sym_unwind(t.ss, &t.snap.cap, again, MAX_PCS);
	check(n2 == t.n && memcmp(again, t.pcs, sizeof(*again) * n2) == 0,
	      "unwind after exit gave %u frames, %u before", n2, t.n);
out:
	done(&t);
}

/* The chain built without debug information: names, "(in /path)". */
static void
test_nodbg(const char *prog)
{
	static struct stopped t;
	char path[PATH_MAX];
	int at;

	if (!realpath(prog, path))
		harness(prog);
	stop_and_unwind(&t, prog, false);
	at = check_names(&t.sym, t.pcs, t.n, chain_names, 5);
	for (unsigned i = 0; at >= 0 && i < 5; i++)
		check_line(&t.sym, t.pcs[at + i], "%s (in %s)", chain_names[i],
			   path);
	if (at >= 0)
		check_below_main(&t.sym, t.pcs, t.n, (unsigned)at + 4);
	finish(t.c.pid);
	done(&t);
}

/* The chain without symbols: five "??? (in /path)" frames, then libc's
   start code. */
static void
test_stripped(const char *prog)
{
	static struct stopped t;
	char path[PATH_MAX], want[PATH_MAX + 16];
	unsigned i = 0, run = 0;

	if (!realpath(prog, path))
		harness(prog);
	snprintf(want, sizeof(want), "??? (in %s)", path);
	stop_and_unwind(&t, prog, false);
	while (i < t.n && strcmp(line_of(&t.sym, t.pcs[i]), want) != 0)
		i++;
	for (; i + run < t.n; run++) {
		uint64_t pc = t.pcs[i + run];

		if (strcmp(line_of(&t.sym, pc), want) != 0)
			break;
		check(t.sym.function_name(t.sym.ctx, pc) == NULL,
		      "stripped frame %u has name %s", i + run,
		      name_of(&t.sym, pc));
	}
	check(run == 5, "%u frames print as \"%s\", expected 5", run, want);
	check(i + run < t.n && strcmp(name_of(&t.sym, t.pcs[i + run]),
					"__libc_start_call_main") == 0,
	      "no __libc_start_call_main after the stripped frames");
	finish(t.c.pid);
	done(&t);
}

/* -O2: the frame in host() is the inline chain inner, outer, host. */
static void
test_inline(const char *prog)
{
	static struct stopped t;
	static const char *const names[] = { "host", "main" };
	const char *lines[HT_MAX_INLINE];
	char want[3][128];
	unsigned k;
	int at;

	stop_and_unwind(&t, prog, false);
	at = check_names(&t.sym, t.pcs, t.n, names, 2);
	if (at < 0)
		goto out;
	snprintf(want[0], sizeof(want[0]), "inner (inline.c:%d)",
		 mark_line(&t.marks, "inner"));
	snprintf(want[1], sizeof(want[1]), "outer (inline.c:%d)",
		 mark_line(&t.marks, "outer"));
	snprintf(want[2], sizeof(want[2]), "host (inline.c:%d)",
		 mark_line(&t.marks, "host"));
	k = t.sym.describe(t.sym.ctx, t.pcs[at], lines, HT_MAX_INLINE);
#ifdef HT_TEST_PROGS_CLANG
	/* clang writes DWARF 5, whose inline chains heaptrace leaves out as
	   Valgrind 3.19 does (docs/symbols.md, "Inline chains"): the host alone */
	/* (at the line of the innermost inlined code, as Valgrind) */
	snprintf(want[2], sizeof(want[2]), "host (inline.c:%d)",
		 mark_line(&t.marks, "inner"));
	check(k == 1 && same_frame_text(lines[0], want[2]),
	      "host's frame has %u lines, expected 1 (clang): \"%s\"", k,
	      lines[0]);
	goto host_checked;
#endif
	check(k == 3, "host's frame has %u lines, expected 3", k);
	for (unsigned i = 0; i < k && i < 3; i++)
		check(same_frame_text(lines[i], want[i]),
		      "inline line %u: \"%s\", expected \"%s\"", i, lines[i],
		      want[i]);
	/* MAX cuts the chain from the outside. */
	k = t.sym.describe(t.sym.ctx, t.pcs[at], lines, 1);
	check(k == 1 && strcmp(lines[0], want[0]) == 0,
	      "describe with max 1 gave %u lines", k);
#ifdef HT_TEST_PROGS_CLANG
host_checked:
#endif
	check_line(&t.sym, t.pcs[at + 1], "main (inline.c:%d)",
		   mark_line(&t.marks, "main"));
	check_below_main(&t.sym, t.pcs, t.n, (unsigned)at + 1);
out:
	finish(t.c.pid);
	done(&t);
}

/* C++: demangled names with their parameters, in names and lines. */
static void
test_cxx(const char *prog)
{
	static struct stopped t;
	static const char *const names[] = {
		"ns::Widget<int>::make(unsigned long)", "ns::helper(int)",
		"main",
	};
	int at;

	stop_and_unwind(&t, prog, false);
	at = check_names(&t.sym, t.pcs, t.n, names, 3);
	if (at >= 0) {
		check_line(&t.sym, t.pcs[at], "%s (cxx.cc:%d)", names[0],
			   mark_line(&t.marks, "make"));
		check_line(&t.sym, t.pcs[at + 1], "%s (cxx.cc:%d)", names[1],
			   mark_line(&t.marks, "helper"));
		check_line(&t.sym, t.pcs[at + 2], "main (cxx.cc:%d)",
			   mark_line(&t.marks, "main"));
	}
	finish(t.c.pid);
	done(&t);
}

/* A session copied at fork: it knows what the parent resolved, and
   unwinds the child on its own. */
static void
test_fork(const char *prog)
{
	static struct snap parent_snap, child_snap;
	uint64_t ppcs[MAX_PCS], cpcs[MAX_PCS];
	struct sym_session *ps, *cs;
	struct ht_symbolizer psym, csym;
	struct marks marks;
	struct child c;
	unsigned long msg;
	unsigned pn, cn;
	pid_t kid;
	int st, at;

	launch(prog, "fork", PTRACE_O_TRACEFORK, &c);
	if (ptrace(PTRACE_CONT, c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	if (waitpid(c.pid, &st, 0) != c.pid)
		harness("waitpid");
	if (!WIFSTOPPED(st) ||
	    (st >> 8) != (SIGTRAP | (PTRACE_EVENT_FORK << 8))) {
		printf("harness error: status %#x, not a fork event\n", st);
		exit(EXIT_HARNESS);
	}
	if (ptrace(PTRACE_GETEVENTMSG, c.pid, NULL, &msg) != 0)
		harness("PTRACE_GETEVENTMSG");
	kid = (pid_t)msg;

	/* The parent at its fork: resolve its stack, then copy. */
	ps = sym_session_new(c.pid);
	if (!ps)
		harness("sym_session_new");
	psym = sym_session_symbolizer(ps);
	capture(c.pid, &parent_snap);
	pn = sym_unwind(ps, &parent_snap.cap, ppcs, MAX_PCS);
	for (unsigned i = 0; i < pn; i++)
		psym.function_name(psym.ctx, ppcs[i]);
	check(find_name(&psym, ppcs, pn, "main") >= 0, "parent: no main");
	sym_session_show_below_main(ps, true);
	cs = sym_session_fork(ps, kid);
	if (!cs)
		harness("sym_session_fork");
	csym = sym_session_symbolizer(cs);
	check(starts_with(line_of(&csym, ppcs[pn - 1]), "_start ("),
	      "the copy does not show below main as its parent does");

	/* A traced fork's child starts with a SIGSTOP of its own, then runs
	   the chain to the raise. */
	wait_sigstop(kid);
	if (ptrace(PTRACE_CONT, kid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(kid);
	read_marks(c.out, &marks);
	capture(kid, &child_snap);
	cn = sym_unwind(cs, &child_snap.cap, cpcs, MAX_PCS);
	dump(&csym, cpcs, cn);
	at = check_names(&csym, cpcs, cn, chain_names, 5);
	if (at >= 0)
		check_line(&csym, cpcs[at + 4], "main (chain.c:%d)",
			   mark_line(&marks, "main"));
	for (unsigned i = 0; i < pn; i++) {
		const char *a = psym.function_name(psym.ctx, ppcs[i]);
		const char *b = csym.function_name(csym.ctx, ppcs[i]);

		check((!a && !b) || (a && b && strcmp(a, b) == 0 && a != b),
		      "parent frame %u: %s in the parent, %s in the copy", i,
		      a ? a : "(null)", b ? b : "(null)");
	}
	sym_session_free(ps);
	finish(kid);
	finish(c.pid);
	/* The copy outlives the parent's session and both processes. */
	for (unsigned i = 0; i < pn; i++) {
		const char *lines[HT_MAX_INLINE];

		unsigned k = csym.describe(csym.ctx, ppcs[i], lines,
					   HT_MAX_INLINE);

		check(k >= 1, "parent frame %u: no description in the copy", i);
	}
	sym_session_free(cs);
	close(c.out);
}

/* A library loaded after the session was made is found when its code is
   met; unloaded, it is dropped by a re-reading of the modules, and what was
   resolved in it stays. */
static void
test_dlopen(const char *prog, const char *lib)
{
	static const char *const names[] = { "leaf", "dl_entry", "main" };
	static struct snap s;
	uint64_t pcs[MAX_PCS], dl_pc;
	const char *dl_line, *dl_name;
	struct ht_symbolizer sym;
	struct sym_session *ss;
	struct marks marks;
	struct child c;
	unsigned n;
	int at;

	launch(prog, lib, 0, &c);
	ss = sym_session_new(c.pid);
	if (!ss)
		harness("sym_session_new");
	sym = sym_session_symbolizer(ss);
	if (ptrace(PTRACE_CONT, c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(c.pid);
	read_marks(c.out, &marks);
	capture(c.pid, &s);
	n = sym_unwind(ss, &s.cap, pcs, MAX_PCS);
	dump(&sym, pcs, n);
	at = check_names(&sym, pcs, n, names, 3);
	if (at < 0)
		goto out;
	check_line(&sym, pcs[at], "leaf (dlmain.c:%d)",
		   mark_line(&marks, "leaf"));
	check_line(&sym, pcs[at + 1], "dl_entry (dlib.c:%d)",
		   mark_line(&marks, "dl_entry"));
	dl_pc = pcs[at + 1];
	dl_line = line_of(&sym, dl_pc);
	dl_name = sym.function_name(sym.ctx, dl_pc);

	if (ptrace(PTRACE_CONT, c.pid, NULL, NULL) != 0)
		harness("PTRACE_CONT");
	wait_sigstop(c.pid);
	read_marks(c.out, &marks);
	capture(c.pid, &s);
	sym_session_refresh(ss);
	n = sym_unwind(ss, &s.cap, pcs, MAX_PCS);
	dump(&sym, pcs, n);
	at = find_name(&sym, pcs, n, "main");
	check(at >= 0, "no main after dlclose");
	if (at >= 0)
		check_line(&sym, pcs[at], "main (dlmain.c:%d)",
			   mark_line(&marks, "main"));
	check(line_of(&sym, dl_pc) == dl_line &&
	      sym.function_name(sym.ctx, dl_pc) == dl_name,
	      "the unloaded library's frame was resolved again");
out:
	finish(c.pid);
	sym_session_free(ss);
	close(c.out);
}

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* The cost of one event's unwind by SS, over ROUNDS walks of CAP once
   warm (the first walk, made before, into *FIRST), in microseconds. */
static double
unwind_cost(struct sym_session *ss, const struct sym_capture *cap,
	    unsigned rounds, uint64_t *pcs, unsigned *n, double *first)
{
	double t0 = now_us(), t1;

	*n = sym_unwind(ss, cap, pcs, MAX_PCS);
	t1 = now_us();
	*first = t1 - t0;
	for (unsigned i = 0; i < rounds; i++)
		*n = sym_unwind(ss, cap, pcs, MAX_PCS);
	return (now_us() - t1) / rounds;
}

/* Costs, printed only: session setup; the first and the warm unwind of
   the program's stack by the cached rules and by libdw alone, each in a
   session of its own (so that neither warms the other's caches); and
   resolving each distinct pc once. The two walks must agree. */
static void
bench(const char *prog, const char *arg)
{
	static struct stopped t;
	uint64_t pcs[MAX_PCS], slow[MAX_PCS];
	struct sym_session *ss, *ls;
	struct ht_symbolizer sym;
	const char *lines[HT_MAX_INLINE];
	double t0, t1, fast, libdw, fast_first, libdw_first;
	unsigned n = 0, ns = 0, rounds = 20000;

	stop_and_unwind_arg(&t, prog, arg, false);
	t0 = now_us();
	ss = sym_session_new(t.c.pid);
	t1 = now_us();
	ls = sym_session_new(t.c.pid);
	if (!ss || !ls)
		harness("sym_session_new");
	sym_session_unwind_with_libdw(ls, true);
	fast = unwind_cost(ss, &t.snap.cap, rounds, pcs, &n, &fast_first);
	libdw = unwind_cost(ls, &t.snap.cap, rounds / 10, slow, &ns,
			    &libdw_first);
	check(n == ns && memcmp(pcs, slow, n * sizeof(*pcs)) == 0,
	      "the cached rules and libdw walk differently");
	printf("session %.0f us; %u frames, %zu stack bytes\n", t1 - t0, n,
	       t.snap.cap.len);
	printf("unwind per event, warm: cached rules %.3f us (%.1f ns a "
	       "frame), libdw %.2f us (%.0fx)\n", fast, fast * 1000 / n,
	       libdw, libdw / fast);
	printf("unwind per event, first: cached rules %.0f us, libdw %.0f us"
	       "\n", fast_first, libdw_first);
	sym_session_free(ls);
	sym = sym_session_symbolizer(ss);
	for (unsigned i = 0; i < n; i++) {
		t0 = now_us();
		sym.describe(sym.ctx, pcs[i], lines, HT_MAX_INLINE);
		t1 = now_us();
		printf("  resolve #%-2u %8.1f us  %s\n", i, t1 - t0, lines[0]);
	}
	t0 = now_us();
	for (unsigned i = 0; i < rounds; i++)
		for (unsigned j = 0; j < n; j++)
			sym.function_name(sym.ctx, pcs[j]);
	t1 = now_us();
	printf("cached lookup %.3f us per pc\n", (t1 - t0) / rounds / n);
	sym_session_free(ss);
	finish(t.c.pid);
	done(&t);
}

int
main(int argc, char **argv)
{
	const char *mode, *prog;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s MODE PROGRAM [ARG]\n", argv[0]);
		return EXIT_HARNESS;
	}
	mode = argv[1];
	prog = argv[2];
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "chain") == 0)
		test_chain(prog, false);
	else if (strcmp(mode, "late") == 0)
		test_chain(prog, true);
	else if (strcmp(mode, "nodbg") == 0)
		test_nodbg(prog);
	else if (strcmp(mode, "stripped") == 0)
		test_stripped(prog);
	else if (strcmp(mode, "inline") == 0)
		test_inline(prog);
	else if (strcmp(mode, "cxx") == 0)
		test_cxx(prog);
	else if (strcmp(mode, "fork") == 0)
		test_fork(prog);
	else if (strcmp(mode, "dlopen") == 0 && argc == 4)
		test_dlopen(prog, argv[3]);
	else if (strcmp(mode, "bench") == 0)
		bench(prog, argc == 4 ? argv[3] : NULL);
	else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return EXIT_HARNESS;
	}
	printf("%s: %d failure(s)\n", mode, failures);
	return failures ? 1 : 0;
}
