/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Symbols of a live process: unwinding a captured stack into code
   addresses with libdw, and describing those addresses as Massif does. One
   session per traced process. */
#ifndef HT_SYMBOLS_SESSION_H
#define HT_SYMBOLS_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "common/symbolizer.h"

struct sym_session;

/* What the tracer captured at an allocator's entry: the registers and a
   copy of the stack from REGS.rsp upwards. */
struct sym_capture {
	struct user_regs_struct regs;
	const uint8_t *stack; /* LEN bytes copied from address STACK_ADDR */
	size_t len;
	uint64_t stack_addr;
	bool running;         /* the thread ran on after the copy was taken:
				 memory outside it is unreadable, so an unwind
				 past the copy stops instead of reading a
				 stack that has changed */
};

/* A session for process PID, whose modules are read from /proc/PID/maps.
   Returns NULL (and sets errno) when the process cannot be read. */
struct sym_session *sym_session_new(pid_t pid);
/* Free SS and everything it owns; NULL is a no-op. */
void sym_session_free(struct sym_session *ss);
/* A session for CHILD, a fork of SS's process: same modules and caches. */
struct sym_session *sym_session_fork(const struct sym_session *ss, pid_t child);
/* Re-read the process's modules (after dlopen, dlclose or exec). Addresses
   already described keep their descriptions. */
void sym_session_refresh(struct sym_session *ss);

/* Unwind CAP into at most MAX code addresses, innermost first: PCS[0] is
   CAP->regs.rip, each further entry a return address minus one (for a frame
   interrupted by a signal, its pc minus one, as Valgrind records it).
   Memory outside the captured bytes is read from the process when it still
   exists. Returns the number of addresses (>= 1). */
unsigned sym_unwind(struct sym_session *ss, const struct sym_capture *cap,
		    uint64_t *pcs, unsigned max);

/* What sym_unwind did in a session. */
struct sym_unwind_stats {
	uint64_t events;    /* sym_unwind calls */
	uint64_t frames;    /* addresses returned */
	uint64_t by_libdw;  /* walks made by libdw's unwinder */
	uint64_t fallbacks; /* of which for frames the cached rules cannot
			       follow (the rest: asked for libdw only) */
	uint64_t rules;     /* rules compiled: one per new lookup pc */
	uint64_t complex;   /* of which only libdw can follow */
};

/* Unwind every event with libdw's unwinder (ONLY), or with per-pc rules
   compiled from the CFI and cached, libdw taking only the events those
   cannot follow (the default). Both give the same addresses; the choice is
   for tests and benchmarks. A fork's session inherits it. */
void sym_session_unwind_with_libdw(struct sym_session *ss, bool only);
/* SS's unwinding counts so far into *OUT. */
void sym_session_unwind_stats(const struct sym_session *ss,
			      struct sym_unwind_stats *out);

/* How sym_unwind steps from a frame to its caller, in terms simple enough
   to be followed inside the target by heaptrace's inline stubs: the CFA is
   rsp or rbp plus an offset, and each of the caller's rsp, rbp and return
   address keeps its value, is unknown, or is the CFA plus an offset or the
   word stored there. Registers other than these never matter to the
   frames above: their CFAs depend on rsp and rbp alone, or they are not
   written so. */
enum sym_stub_how {
	SYM_STUB_UNDEF,  /* unknown in the caller */
	SYM_STUB_SAME,   /* the frame's own value (known when it is) */
	SYM_STUB_CFA,    /* CFA + OFF */
	SYM_STUB_AT_CFA, /* the word at CFA + OFF */
};

struct sym_stub_loc {
	enum sym_stub_how how;
	int32_t off;
};

struct sym_stub_rule {
	bool fp;         /* no CFI: the frame-pointer step (the rest unused) */
	bool cfa_rbp;    /* CFA = rbp + CFA_OFF, else rsp + CFA_OFF */
	int32_t cfa_off;
	struct sym_stub_loc rsp, rbp, ra;
};

/* The step sym_unwind takes from a frame whose lookup pc is LOOKUP_PC (its
   pc for the innermost frame, the return address minus one for the
   others), into *OUT: a walk that follows such rules, ends where the
   return address is unknown or 0, and treats failed reads as sym_unwind
   does, gives exactly sym_unwind's addresses. Returns 0, or -ENOTSUP when
   sym_unwind would step otherwise there (CFI these terms cannot express, a
   signal frame, code in no module, libdw asked for). The modules are
   re-read for a pc in none, as sym_unwind does. */
int sym_stub_rule_get(struct sym_session *ss, uint64_t lookup_pc,
		      struct sym_stub_rule *out);

/* Describe the C library's start functions (__libc_start_main, _start...)
   by their names, as --show-below-main=yes asks, instead of as
   "(below main)". Off at first; a fork's session inherits it. */
void sym_session_show_below_main(struct sym_session *ss, bool show);

/* The symbolizer for SS's addresses (function names for --alloc-fn and
   friends, Massif-style descriptions). Each distinct address is resolved
   once, when first asked, and stays valid after the process is gone. SS
   must outlive the returned value's use. */
struct ht_symbolizer sym_session_symbolizer(struct sym_session *ss);

#endif
