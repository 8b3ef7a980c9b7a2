/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The session's own state, shared by session.c, which owns it, and
   stub_rule.c, which sits above it. The files below the session see none
   of it: they are handed what they need. Nothing outside symbols/ includes
   this. */
#ifndef HT_SYMBOLS_SESSION_PRIV_H
#define HT_SYMBOLS_SESSION_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

#include "common/u64map.h"
#include "session.h"
#include "unwind.h"

struct sym_session {
	pid_t pid;
	unsigned long long start_time; /* from /proc/PID/stat: tells reuse */
	bool gone;                     /* the process no longer exists */
	bool show_below_main;          /* describe by real names only */
	Dwfl *dwfl;
	struct u64map frames;          /* pc -> struct sym_frame * (owned) */
	struct u64map refreshed;       /* pcs in no module that got a refresh */
	struct sym_unwinder unwinder;  /* its rules are the fast walk's */
	struct sym_unwind_stats stats;
};

/* The module of SS's process containing PC. When none does, re-read the
   modules once per such PC (a library dlopen'ed since the last reading) and
   look again. NULL when still none. */
Dwfl_Module *sym_session_module(struct sym_session *ss, uint64_t pc);

#endif
