/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The exit-time leak check's tracer side (--leak-check): when it scans
   (leakstop.c) and what it reads of the stopped target (leakroots.h, which
   the sink's scan uses too). Above inline/: a scan first drains the ring,
   and heaptrace's own pages are never roots. */
#ifndef HT_TRACER_LEAK_LEAK_H
#define HT_TRACER_LEAK_LEAK_H

#include <sys/types.h>

#include "common/options.h"
#include "tracer/proc/proc.h"

/* ---- leakstop.c: when the leak check scans ---- */
/* PTRACE_O_TRACEEXIT when OPT asks for a leak check, else 0. */
long leakstop_ptrace_options(const struct ht_options *opt);
/* TC is at its PTRACE_EVENT_EXIT stop: when it is the last thread of its
   process to get there, the sink's leak_check sees the process. Resumes
   TC. */
void leakstop_on_exit_stop(struct tracer *t, struct tracee *tc);
/* P is about to be let go (detach), TID one of its threads, all held:
   the sink's leak_check sees P unless it saw it already. */
void leakstop_on_detach(struct tracer *t, struct tproc *p, pid_t tid);
/* Forget P's leak check state (exec, free). */
void leakstop_reset(struct tproc *p);
/* CHILD was just forked from PARENT: its own leak check state, with the
   exited threads' stacks PARENT had (the same memory). */
void leakstop_fork(struct tproc *child, const struct tproc *parent);

#endif
