/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The screen is in raw mode, so that Ctrl-C comes as a key (3) and ends
   the watch as q does, leaving the process as it was, rather than as a
   SIGINT that `top -- PROG` would first hand to the program. */
#include "top_keys.h"

#include <curses.h>
#include <stdio.h>

#define KEY_CTRL_C 3
#define KEY_ESCAPE 27

const char *const top_keys_help[] = {
	"Keys of heaptrace top",
	"",
	"  l %  g  a  c  t  n   sort by LIVE, HEAP%, GROWTH, ALLOC/S, CALLS/S,",
	"                       TEMP% or SITE (the largest first, names A-Z)",
	"  < >                  sort by the column to the left or right",
	"  Up Down j k          select a row; PgUp PgDn Home End scroll",
	"  Enter e              the selected row's stack and exact figures",
	"                       (Enter, e or Esc: back)",
	"  f Space              freeze the view (no new tables) or go on",
	"  r                    count growth from now",
	"  w                    write a profile now, as heaptrace snapshot",
	"  b                    bytes in full, or in KiB, MiB, GiB",
	"  ? h                  this help (any key: back)",
	"  q Ctrl-C             detach and exit, the process left as it was",
	NULL,
};

void
top_ui_init(struct top_ui *ui)
{
	*ui = (struct top_ui){ .sort = TOP_COL_LIVE };
}

void
top_ui_clamp(struct top_ui *ui, size_t n_rows, size_t page)
{
	if (!page)
		page = 1;
	if (ui->selected >= n_rows)
		ui->selected = n_rows ? n_rows - 1 : 0;
	if (ui->selected < ui->first)
		ui->first = ui->selected;
	if (ui->selected >= ui->first + page)
		ui->first = ui->selected - page + 1;
	if (n_rows <= page)
		ui->first = 0;
	else if (ui->first > n_rows - page)
		ui->first = n_rows - page;
}

/* The sort key KEY names, or TOP_N_COLS. */
static enum top_col
sort_key(int key)
{
	switch (key) {
	case 'l':
		return TOP_COL_LIVE;
	case '%':
		return TOP_COL_HEAP;
	case 'g':
		return TOP_COL_GROWTH;
	case 'a':
		return TOP_COL_ALLOC;
	case 'c':
		return TOP_COL_CALLS;
	case 't':
		return TOP_COL_TEMP;
	case 'n':
		return TOP_COL_SITE;
	default:
		return TOP_N_COLS;
	}
}

static enum top_action
sort_by(struct top_ui *ui, enum top_col col)
{
	ui->sort = col;
	snprintf(ui->message, sizeof(ui->message), "%s", "");
	return TOP_ACT_SORT;
}

/* Moving the selection: arrows, j k, pages, ends. */
static enum top_action
move_selection(struct top_ui *ui, int key, size_t n_rows, size_t page)
{
	size_t last = n_rows ? n_rows - 1 : 0;
	switch (key) {
	case KEY_UP:
	case 'k':
		ui->selected -= ui->selected > 0;
		break;
	case KEY_DOWN:
	case 'j':
		ui->selected += ui->selected < last;
		break;
	case KEY_PPAGE:
		ui->selected = ui->selected > page ? ui->selected - page : 0;
		break;
	case KEY_NPAGE:
		ui->selected = ui->selected + page < last
			       ? ui->selected + page : last;
		break;
	case KEY_HOME:
		ui->selected = 0;
		break;
	case KEY_END:
		ui->selected = last;
		break;
	default:
		return TOP_ACT_NONE;
	}
	ui->chosen = true;
	top_ui_clamp(ui, n_rows, page);
	return TOP_ACT_DRAW;
}

/* Keys that change what is shown without a new table. */
static enum top_action
presentation_key(struct top_ui *ui, int key)
{
	switch (key) {
	case '\n':
	case '\r':
	case KEY_ENTER:
	case 'e':
		ui->expanded = !ui->expanded;
		return TOP_ACT_DRAW;
	case KEY_ESCAPE:
		ui->expanded = false;
		return TOP_ACT_DRAW;
	case 'b':
		ui->exact = !ui->exact;
		return TOP_ACT_DRAW;
	case '?':
	case 'h':
		ui->help = true;
		return TOP_ACT_DRAW;
	case '<':
		return sort_by(ui, ui->sort ? ui->sort - 1 : TOP_N_COLS - 1);
	case '>':
		return sort_by(ui, ui->sort + 1 < TOP_N_COLS ? ui->sort + 1
							      : 0);
	default:
		return TOP_ACT_NONE;
	}
}

enum top_action
top_keys_apply(struct top_ui *ui, int key, size_t n_rows, size_t page)
{
	if (key == 'q' || key == 'Q' || key == KEY_CTRL_C)
		return TOP_ACT_QUIT;
	if (ui->help) {
		ui->help = false;
		return TOP_ACT_DRAW;
	}
	enum top_col col = sort_key(key);
	if (col != TOP_N_COLS)
		return sort_by(ui, col);
	switch (key) {
	case 'f':
	case ' ':
		ui->frozen = !ui->frozen;
		/* going on: a table of now at once */
		return ui->frozen ? TOP_ACT_DRAW : TOP_ACT_TABLE;
	case 'r':
		return TOP_ACT_RESET;
	case 'w':
		return TOP_ACT_WRITE;
	default:
		break;
	}
	enum top_action a = presentation_key(ui, key);
	return a != TOP_ACT_NONE ? a : move_selection(ui, key, n_rows, page);
}
