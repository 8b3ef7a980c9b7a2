/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the symbols tests share to drive a real traced program: failure
   counting, harness errors, starting a program under ptrace, waiting for
   its stops, and capturing registers and stack as the tracer does. */
#ifndef HT_TESTS_SYMBOLS_TRACE_H
#define HT_TESTS_SYMBOLS_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "symbols/session.h"

#define EXIT_SKIP 77
#define EXIT_HARNESS 99
#define STACK_COPY (32 * 1024)

/* Failed checks so far. */
extern int failures;

/* Count a failure and print FMT when OK is false. */
void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Report a harness error about WHAT (with errno) and exit 99. */
void harness(const char *what) __attribute__((noreturn));

struct child {
	pid_t pid;
	int out; /* read end of the program's stdout */
};

/* Start PROG ARG under ptrace, stopped after its exec, with OPTIONS. The
   tracee dies with the driver (PTRACE_O_EXITKILL). Exits 77 when ptrace is
   not permitted. */
void launch(const char *prog, const char *arg, long options,
	    struct child *c);
/* Wait for PID's next stop, which must be by SIGSTOP. */
void wait_sigstop(pid_t pid);
/* Let PID run until it exits. */
void finish(pid_t pid);

/* What the tracer captures at a stop: registers and up to STACK_COPY bytes
   of stack. */
struct snap {
	struct sym_capture cap;
	uint8_t bytes[STACK_COPY];
};

/* PID's registers and stack into S, the stack up to LIMIT bytes (at most
   STACK_COPY), page by page, so that a shorter stack is no error. */
void capture_upto(pid_t pid, struct snap *s, size_t limit);
/* capture_upto with STACK_COPY. */
void capture(pid_t pid, struct snap *s);

#endif
