/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The whole screen is drawn again from the table at each change: a few
   hundred cells, and nothing to keep in step. Every line is cut at the
   screen's width by ncurses' n-functions; a site's name is fitted
   (top_name_fit) to the columns left, shortened in the middle. */
#include "top_draw.h"

#include <curses.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/site_name.h"
#include "top_cells.h"
#include "top_name.h"

#define HEADER_LINES 6 /* the column titles included */
#define CELL 32

static const char *const titles[TOP_N_COLS] = {
	"LIVE", "HEAP%", "GROWTH", "ALLOC/S", "CALLS/S", "TEMP%", "SITE",
};

/* The site's column is at least this wide (a C++ function's last
   component, "(...)" and its file:line): narrower, the columns least
   needed are left out (HIDE_ORDER) to make room. At 80 columns, in
   KiB/MiB, only HEAP% is left out (LIVE says nearly as much). */
#define SITE_MIN_WIDTH 36

/* Which columns a narrow screen leaves out first. */
static const enum top_col hide_order[] = {
	TOP_COL_HEAP, TOP_COL_TEMP, TOP_COL_CALLS, TOP_COL_GROWTH,
	TOP_COL_ALLOC,
};

/* The cells' widths and where each starts on a screen COLS wide; a
   width 0 is a column left out (never the one sorted by). */
struct layout {
	int width[TOP_N_COLS];
	int x[TOP_N_COLS];
};

static struct layout
layout_of(const struct top_ui *ui)
{
	static const int human[TOP_N_COLS] = { 8, 5, 9, 8, 7, 5, 0 };
	static const int full[TOP_N_COLS] = { 10, 5, 10, 10, 7, 5, 0 };
	struct layout l;
	memcpy(l.width, ui->exact ? full : human, sizeof(l.width));
	for (size_t h = 0;; h++) {
		int x = 0;
		for (int c = 0; c < TOP_N_COLS; c++) {
			l.x[c] = x;
			x += l.width[c] ? l.width[c] + 1 : 0;
		}
		l.x[TOP_COL_SITE] = x + 1;
		if (COLS - l.x[TOP_COL_SITE] >= SITE_MIN_WIDTH ||
		    h == sizeof(hide_order) / sizeof(*hide_order))
			return l;
		if (hide_order[h] != ui->sort)
			l.width[hide_order[h]] = 0;
	}
}

size_t
top_draw_page(void)
{
	return LINES > HEADER_LINES + 1 ? (size_t)(LINES - HEADER_LINES) : 1;
}

/* TEXT on line Y from column 0, cut at the screen's width. */
static void
line_at(int y, const char *text)
{
	mvaddnstr(y, 0, text, COLS);
}

static void
draw_header(const struct top_table *t, const struct top_ui *ui,
	    const struct top_draw_info *info)
{
	char buf[512], heap[CELL], peak[CELL], rate[CELL], calls[CELL];
	snprintf(buf, sizeof(buf), "heaptrace top - pid %ld - elapsed %.1f s,"
		 " a table every %g s - %s", t->pid, t->elapsed,
		 info->interval_ms / 1000.0, t->command);
	line_at(0, buf);
	top_cells_bytes(heap, sizeof(heap), (double)t->heap, ui->exact, false);
	top_cells_bytes(peak, sizeof(peak), (double)t->peak, ui->exact, false);
	top_cells_bytes(rate, sizeof(rate), t->alloc_rate, ui->exact, false);
	top_cells_count(calls, sizeof(calls), t->call_rate);
	snprintf(buf, sizeof(buf), "heap now %s, peak %s, allocating %s/s in "
		 "%s calls/s", heap, peak, rate, calls);
	line_at(1, buf);
	if (t->sampling_interval) {
		top_cells_bytes(rate, sizeof(rate),
				(double)t->sampling_interval, false, false);
		snprintf(buf, sizeof(buf), "sampled every %s: figures are "
			 "estimates", rate);
	} else {
		snprintf(buf, sizeof(buf), "exact: every call counted");
	}
	line_at(2, buf);
	snprintf(buf, sizeof(buf), "%s%s sorted by %s, bytes %s - "
		 "? keys, q quit", ui->frozen ? "FROZEN" : "live",
		 ui->frozen ? " (f: go on)," : ",", titles[ui->sort],
		 ui->exact ? "in full" : "in KiB/MiB (b: in full)");
	if (ui->frozen)
		attron(A_BOLD);
	line_at(3, buf);
	attroff(A_BOLD);
	line_at(4, info->status);
}

/* The column titles, the sort column's marked with '*' and underlined. */
static void
draw_titles(const struct top_ui *ui, const struct layout *l)
{
	char cell[CELL], padded[CELL + 8];
	attron(A_REVERSE);
	mvhline(HEADER_LINES - 1, 0, ' ', COLS);
	for (int c = 0; c < TOP_N_COLS; c++) {
		bool sorted = (enum top_col)c == ui->sort;
		if (c != TOP_COL_SITE && !l->width[c])
			continue;
		snprintf(cell, sizeof(cell), "%s%s", titles[c],
			 sorted ? "*" : "");
		snprintf(padded, sizeof(padded), "%*s", l->width[c], cell);
		if (sorted)
			attron(A_UNDERLINE);
		if (l->x[c] < COLS)
			mvaddnstr(HEADER_LINES - 1, l->x[c], padded,
				  COLS - l->x[c]);
		attroff(A_UNDERLINE);
	}
	attroff(A_REVERSE);
}

/* Row R's cell of column COL into BUF. */
static void
cell_text(char *buf, size_t len, enum top_col col, const struct top_table *t,
	  const struct top_row *r, bool exact)
{
	switch (col) {
	case TOP_COL_LIVE:
		return top_cells_bytes(buf, len, (double)r->live, exact,
				       false);
	case TOP_COL_HEAP: {
		double share = t->heap ? 100.0 * (double)r->live
				       / (double)t->heap : 0.0;
		/* a decimal only where it matters, in 4 columns */
		snprintf(buf, len, share < 9.95 ? "%.1f%%" : "%.0f%%", share);
		return;
	}
	case TOP_COL_GROWTH:
		return top_cells_bytes(buf, len, (double)r->growth, exact,
				       true);
	case TOP_COL_ALLOC:
		return top_cells_bytes(buf, len, r->alloc_rate, exact, false);
	case TOP_COL_CALLS:
		return top_cells_count(buf, len, r->call_rate);
	case TOP_COL_TEMP:
		snprintf(buf, len, "%.0f%%", top_row_temporary_share(r));
		return;
	case TOP_COL_SITE:
	case TOP_N_COLS:
		break;
	}
	buf[0] = '\0';
}

/* Row R's cells, its name fitted to the columns left. */
static void
draw_row(int y, const struct top_table *t, const struct top_row *r,
	 const struct top_ui *ui, const struct layout *l)
{
	char cell[CELL], padded[CELL + 8];
	for (int c = 0; c < TOP_COL_SITE; c++) {
		if (!l->width[c] || l->x[c] >= COLS)
			continue;
		cell_text(cell, sizeof(cell), c, t, r, ui->exact);
		snprintf(padded, sizeof(padded), "%*s", l->width[c], cell);
		mvaddnstr(y, l->x[c], padded, COLS - l->x[c]);
	}
	int x = l->x[TOP_COL_SITE];
	if (x < COLS) {
		char *name = top_name_fit(r->name, (size_t)(COLS - x));
		mvaddnstr(y, x, name, COLS - x);
		free(name);
	}
}

static void
draw_rows(const struct top_table *t, const struct top_ui *ui)
{
	struct layout l = layout_of(ui);
	draw_titles(ui, &l);
	if (!t->n_rows) {
		line_at(HEADER_LINES, "(no allocation seen yet)");
		return;
	}
	size_t page = top_draw_page();
	for (size_t i = 0; i < page && ui->first + i < t->n_rows; i++) {
		size_t k = ui->first + i;
		int y = HEADER_LINES + (int)i;
		if (k == ui->selected) {
			attron(A_REVERSE);
			mvhline(y, 0, ' ', COLS);
		}
		draw_row(y, t, &t->rows[k], ui, &l);
		attroff(A_REVERSE);
	}
}

/* TEXT on line Y after INDENT columns, fitted to the rest. */
static void
fitted_at(int y, int indent, const char *text)
{
	if (indent >= COLS)
		return;
	char *s = top_name_fit(text, (size_t)(COLS - indent));
	mvaddnstr(y, indent, s, COLS - indent);
	free(s);
}

/* The selected row's exact figures and its heaviest site's stack,
   innermost first. */
static void
draw_stack(const struct top_table *t, const struct top_ui *ui)
{
	if (!t->n_rows)
		return draw_rows(t, ui);
	const struct top_row *r = &t->rows[ui->selected];
	char buf[512];
	int y = HEADER_LINES - 1;
	attron(A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	line_at(y, "STACK (Enter, e or Esc: back)");
	attroff(A_REVERSE);
	fitted_at(++y, 0, r->name);
	snprintf(buf, sizeof(buf), "  live %" PRIu64 " B (%.1f%% of the heap),"
		 " growth %+" PRId64 " B, temporary %.0f%%", r->live,
		 t->heap ? 100.0 * (double)r->live / (double)t->heap : 0.0,
		 r->growth, top_row_temporary_share(r));
	line_at(++y, buf);
	snprintf(buf, sizeof(buf), "  %.0f B/s in %.0f calls/s; %" PRIu64
		 " calls since the start", r->alloc_rate, r->call_rate,
		 r->calls);
	line_at(++y, buf);
	const struct sites_site *s = r->heaviest;
	line_at(++y, "  the stack of its heaviest site, innermost first:");
	size_t n = s ? s->n_frames : 0, i;
	/* the last line says how many frames did not fit */
	for (i = 0; i < n && (y + 2 < LINES || (i + 1 == n && y + 1 < LINES));
	     i++) {
		char *text = site_frame_text(&s->frames[i]);
		snprintf(buf, sizeof(buf), "  #%-3zu", i);
		line_at(++y, buf);
		fitted_at(y, 7, text);
		free(text);
	}
	if (i < n) {
		snprintf(buf, sizeof(buf), "  (%zu more frames: a taller "
			 "terminal shows them)", n - i);
		line_at(++y, buf);
	}
}

static void
draw_help(void)
{
	for (int i = 0; top_keys_help[i] && i < LINES; i++)
		line_at(i, top_keys_help[i]);
}

void
top_draw(const struct top_table *t, const struct top_ui *ui,
	 const struct top_draw_info *info)
{
	erase();
	if (ui->help) {
		draw_help();
	} else if (!t) {
		line_at(0, "heaptrace top - waiting for the first table");
		line_at(4, info->status);
	} else {
		draw_header(t, ui, info);
		if (ui->expanded)
			draw_stack(t, ui);
		else
			draw_rows(t, ui);
	}
	refresh();
}
