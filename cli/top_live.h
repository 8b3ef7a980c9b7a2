/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace top`'s full-screen view over a watch: called at each of the
   tracer's short ticks, it reads the keys, makes a table when the
   interval is over (or a key asks for one) and draws (top_draw.c). */
#ifndef HT_CLI_TOP_LIVE_H
#define HT_CLI_TOP_LIVE_H

#include <stdbool.h>
#include <sys/types.h>

#include "profile.h"
#include "top_table.h"

struct top_live;

/* The view up on the terminal, tables every INTERVAL_MS, ITERATIONS of
   them (0: no end), profiles written through PROF (borrowed); NULL when
   the terminal cannot show it (the caller prints tables instead).
   heaptrace's standard error is held back until top_live_close. */
struct top_live *top_live_open(unsigned interval_ms,
			       unsigned long iterations,
			       struct profiler *prof);
/* One tick for process PID (engine ENG, frames by SYM, header HDR) at
   NOW_NS, its tables from H. Returns false when the watch is to end (q,
   Ctrl-C, or the last of the iterations shown for an interval), true to
   go on. */
bool top_live_tick(struct top_live *l, struct top_history *h, pid_t pid,
		   const struct snap_engine *eng,
		   const struct ht_symbolizer *sym,
		   const struct out_header *hdr, uint64_t now_ns);
/* The terminal given back as it was, what heaptrace wrote to its
   standard error meanwhile written there, L freed (NULL: nothing). */
void top_live_close(struct top_live *l);

#endif
