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
#include "common/unwind_rule.h"

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

/* What a session did: unwinding (sym_unwind) and resolving addresses. */
struct sym_unwind_stats {
	uint64_t events;    /* sym_unwind calls */
	uint64_t frames;    /* addresses returned */
	uint64_t by_libdw;  /* walks made by libdw's unwinder */
	uint64_t fallbacks; /* of which for frames the cached rules cannot
			       follow (the rest: asked for libdw only) */
	uint64_t rules;     /* rules compiled: one per new lookup pc */
	uint64_t cached_rules; /* rules read from the cache on disk instead */
	uint64_t complex;   /* of these, those only libdw can follow */
	uint64_t named;     /* addresses resolved (named) */
	uint64_t cached_named; /* of which named from the cache on disk */
	uint64_t described; /* addresses given their printed lines */
	uint64_t cached_described; /* of which from the cache on disk */
};

/* Unwind every event with libdw's unwinder (ONLY), or with per-pc rules
   compiled from the CFI and cached, libdw taking only the events those
   cannot follow (the default). Both give the same addresses; the choice is
   for tests and benchmarks. A fork's session inherits it. */
void sym_session_unwind_with_libdw(struct sym_session *ss, bool only);
/* SS's unwinding counts so far into *OUT. */
void sym_session_unwind_stats(const struct sym_session *ss,
			      struct sym_unwind_stats *out);

/* The step sym_unwind takes from a frame whose lookup pc is LOOKUP_PC (its
   pc for the innermost frame, the return address minus one for the
   others), into *OUT: a walk that follows such rules, ends where the
   return address is unknown or 0, and treats failed reads as sym_unwind
   does, gives exactly sym_unwind's addresses. Returns 0, or -ENOTSUP when
   sym_unwind would step otherwise there (CFI these terms cannot express, a
   signal frame, code in no module, libdw asked for). The modules are
   re-read for a pc in none, as sym_unwind does. */
int sym_stub_rule_get(struct sym_session *ss, uint64_t lookup_pc,
		      struct ht_unwind_rule *out);

/* The lookup pcs in SS's modules whose rules earlier runs left in the
   symbol cache, as a malloc'd array in *OUT (NULL when none); returns
   their number. sym_stub_rule_get answers for them without compiling:
   publishing them before the program runs spares its stubs a question
   per new frame. */
size_t sym_session_cached_rule_pcs(struct sym_session *ss, uint64_t **out);

/* Describe the C library's start functions (__libc_start_main, _start...)
   by their names, as --show-below-main=yes asks, instead of as
   "(below main)". Off at first; a fork's session inherits it. */
void sym_session_show_below_main(struct sym_session *ss, bool show);

/* Keep what modules' addresses resolve to, and their unwinding rules, on
   disk between runs (symbols/cache.c): in DIR (created when missing), or
   when DIR is NULL in $XDG_CACHE_HOME/heaptrace, else ~/.cache/heaptrace;
   ON false turns it off (the default). For modules met from then on, in
   every session. */
void sym_cache_configure(bool on, const char *dir);

/* The symbolizer for SS's addresses (function names for --alloc-fn and
   friends, Massif-style descriptions). Each distinct address is resolved
   once, when first asked, and stays valid after the process is gone. SS
   must outlive the returned value's use. */
struct ht_symbolizer sym_session_symbolizer(struct sym_session *ss);

#endif
