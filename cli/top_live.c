/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Everything runs in the tracer's thread, the only one ptrace allows:
   the tracer calls at a short tick (TOP_LIVE_TICK_MS, top.c) so that
   keys are answered at once, and a table, which costs a pass over every
   site, is made only once an interval or when a key needs fresh figures.
   Keys that only change the presentation redraw from the last table.
   The screen is drawn again in full (clearok) at each table: `top --
   PROG`'s own output shares the terminal and must not stay over it. */
#include "top_live.h"

#include <curses.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/xalloc.h"
#include "top_capture.h"
#include "top_draw.h"
#include "top_keys.h"
#include "top_screen.h"
#include "top_sort.h"

struct top_live {
	struct top_screen *screen;
	struct top_capture *capture;
	struct profiler *prof;
	unsigned interval_ms;
	unsigned long iterations; /* 0: no end */
	unsigned long made;      /* tables made at the interval */
	struct top_ui ui;
	struct top_table table;
	bool have_table;
	uint64_t table_ns;  /* when the table was made */
	char status[256];
};

/* The view open, for an exit that bypasses top_live_close. */
static struct top_live *open_live;

static void
close_at_exit(void)
{
	top_live_close(open_live);
}

struct top_live *
top_live_open(unsigned interval_ms, unsigned long iterations,
	      struct profiler *prof)
{
	struct top_screen *screen = top_screen_open();
	if (!screen)
		return NULL;
	struct top_live *l = ht_xcalloc(1, sizeof(*l));
	l->screen = screen;
	l->capture = top_capture_start();
	l->prof = prof;
	l->interval_ms = interval_ms;
	l->iterations = iterations;
	top_ui_init(&l->ui);
	static bool registered;
	if (!registered)
		registered = !atexit(close_at_exit);
	open_live = l;
	return l;
}

void
top_live_close(struct top_live *l)
{
	if (!l)
		return;
	top_screen_close(l->screen);
	top_capture_stop(l->capture);
	top_table_fini(&l->table);
	if (open_live == l)
		open_live = NULL;
	free(l);
}

/* The index of the row named NAME in T, or T's row count. */
static size_t
row_named(const struct top_table *t, const char *name)
{
	for (size_t i = 0; name && i < t->n_rows; i++)
		if (!strcmp(t->rows[i].name, name))
			return i;
	return t->n_rows;
}

/* Rows sorted by the UI's column, the row the user chose kept selected
   (else the first). */
static void
sort_keeping_selection(struct top_live *l, const char *selected)
{
	top_sort_rows(&l->table, l->ui.sort);
	size_t i = row_named(&l->table, selected);
	if (!l->ui.chosen)
		l->ui.selected = 0;
	else if (i < l->table.n_rows)
		l->ui.selected = i;
	top_ui_clamp(&l->ui, l->table.n_rows, top_draw_page());
}

static char *
selected_name(const struct top_live *l)
{
	if (!l->have_table || l->ui.selected >= l->table.n_rows)
		return NULL;
	return ht_xstrdup(l->table.rows[l->ui.selected].name);
}

static void
new_table(struct top_live *l, struct top_history *h, pid_t pid,
	  const struct snap_engine *eng, const struct ht_symbolizer *sym,
	  const struct out_header *hdr, uint64_t now_ns)
{
	struct top_table t;
	int rc = top_table_make(h, pid, eng, sym, hdr, now_ns, &t);
	l->table_ns = now_ns;
	if (rc) {
		snprintf(l->status, sizeof(l->status), "cannot gather the "
			 "statistics of process %d: %s", (int)pid,
			 ht_strerror(rc));
		return;
	}
	char *selected = selected_name(l);
	top_table_fini(&l->table);
	l->table = t;
	l->have_table = true;
	sort_keeping_selection(l, selected);
	free(selected);
	clearok(curscr, TRUE);
}

/* Whether a new table is due at NOW_NS: the interval over, less half a
   tick so that the ticks' jitter does not skip one. */
static bool
table_due(const struct top_live *l, uint64_t now_ns)
{
	if (!l->have_table)
		return true;
	uint64_t interval = (uint64_t)l->interval_ms * 1000000ULL;
	return !l->ui.frozen && now_ns - l->table_ns + interval / 20 >= interval;
}

/* A key's action done but for a new table: whether one is needed. */
static bool
act(struct top_live *l, enum top_action a, struct top_history *h, pid_t pid)
{
	switch (a) {
	case TOP_ACT_SORT: {
		char *selected = selected_name(l);
		sort_keeping_selection(l, selected);
		free(selected);
		return false;
	}
	case TOP_ACT_RESET:
		top_history_reset_growth(h);
		snprintf(l->status, sizeof(l->status), "growth counted from "
			 "now");
		/* frozen means no new table, whatever the key */
		return !l->ui.frozen;
	case TOP_ACT_WRITE:
		profiler_view_write_next(l->prof, pid);
		snprintf(l->status, sizeof(l->status), "writing a profile...");
		return false;
	case TOP_ACT_TABLE:
		return true;
	default:
		return false;
	}
}

/* The status line for SAID, what came of `w` ("written to PATH", or why
   not): PATH relative when it is in the current directory, the line
   being short. */
static void
say_written(struct top_live *l, const char *said)
{
	char cwd[PATH_MAX];
	const char *prefix = "written to ";
	if (strncmp(said, prefix, strlen(prefix))) {
		snprintf(l->status, sizeof(l->status), "%s", said);
		return;
	}
	const char *path = said + strlen(prefix);
	size_t n = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;
	if (n && !strncmp(path, cwd, n) && path[n] == '/')
		path += n + 1;
	snprintf(l->status, sizeof(l->status), "profile written to %s", path);
}

/* What came since the last tick for the status line: a profile written,
   or heaptrace's latest warning. */
static void
take_status(struct top_live *l)
{
	char line[256];
	if (l->capture && top_capture_latest(l->capture, line, sizeof(line)))
		snprintf(l->status, sizeof(l->status), "%s", line);
	/* the answer to `w` rather than heaptrace's line saying the same */
	char *said = profiler_view_said(l->prof);
	if (said)
		say_written(l, said);
	free(said);
}

bool
top_live_tick(struct top_live *l, struct top_history *h, pid_t pid,
	      const struct snap_engine *eng, const struct ht_symbolizer *sym,
	      const struct out_header *hdr, uint64_t now_ns)
{
	bool draw = top_screen_resized(l->screen);
	bool table = table_due(l, now_ns);
	/* the last table stays up for its interval, as top -n does */
	if (table && l->iterations && l->made >= l->iterations)
		return false;
	l->made += table;
	int key;
	while ((key = top_screen_key(l->screen)) >= 0) {
		size_t n = l->have_table ? l->table.n_rows : 0;
		enum top_action a = top_keys_apply(&l->ui, key, n,
						   top_draw_page());
		if (a == TOP_ACT_QUIT)
			return false;
		table = act(l, a, h, pid) || table;
		draw = draw || a != TOP_ACT_NONE;
	}
	char before[sizeof(l->status)];
	memcpy(before, l->status, sizeof(before));
	take_status(l);
	draw = draw || strcmp(before, l->status);
	if (table)
		new_table(l, h, pid, eng, sym, hdr, now_ns);
	if (draw || table) {
		struct top_draw_info info = { .interval_ms = l->interval_ms,
					      .status = l->status };
		top_draw(l->have_table ? &l->table : NULL, &l->ui, &info);
	}
	return true;
}
