/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The view's keys (cli/top_keys.c), orders (cli/top_sort.c) and cells
   (cli/top_cells.c) on hand-made rows: what each key does to the view and
   asks of the watch, each column's order, the units. */
#include <curses.h>
#include <string.h>

#include "cli/top_cells.h"
#include "cli/top_keys.h"
#include "cli/top_sort.h"
#include "tests/check.h"

static void
check_actions(void)
{
	struct top_ui ui;
	top_ui_init(&ui);
	CHECK(ui.sort == TOP_COL_LIVE && !ui.exact && !ui.frozen, "defaults");
	CHECK(top_keys_apply(&ui, 'q', 5, 3) == TOP_ACT_QUIT, "q");
	CHECK(top_keys_apply(&ui, 3, 5, 3) == TOP_ACT_QUIT, "Ctrl-C");
	CHECK(top_keys_apply(&ui, 'c', 5, 3) == TOP_ACT_SORT &&
	      ui.sort == TOP_COL_CALLS, "c sorts by calls/s");
	CHECK(top_keys_apply(&ui, '>', 5, 3) == TOP_ACT_SORT &&
	      ui.sort == TOP_COL_TEMP, "> moves right");
	top_keys_apply(&ui, '>', 5, 3);
	top_keys_apply(&ui, '>', 5, 3);
	CHECK(ui.sort == TOP_COL_LIVE, "> wraps from SITE to LIVE: %d",
	      (int)ui.sort);
	CHECK(top_keys_apply(&ui, '<', 5, 3) == TOP_ACT_SORT &&
	      ui.sort == TOP_COL_SITE, "< wraps from LIVE to SITE");
	CHECK(top_keys_apply(&ui, 'f', 5, 3) == TOP_ACT_DRAW && ui.frozen,
	      "f freezes without a table");
	CHECK(top_keys_apply(&ui, ' ', 5, 3) == TOP_ACT_TABLE && !ui.frozen,
	      "space goes on with a table");
	CHECK(top_keys_apply(&ui, 'r', 5, 3) == TOP_ACT_RESET, "r");
	CHECK(top_keys_apply(&ui, 'w', 5, 3) == TOP_ACT_WRITE, "w");
	CHECK(top_keys_apply(&ui, 'b', 5, 3) == TOP_ACT_DRAW && ui.exact,
	      "b");
	CHECK(top_keys_apply(&ui, '\n', 5, 3) == TOP_ACT_DRAW && ui.expanded,
	      "Enter expands");
	CHECK(top_keys_apply(&ui, 27, 5, 3) == TOP_ACT_DRAW && !ui.expanded,
	      "Esc goes back");
	CHECK(top_keys_apply(&ui, '?', 5, 3) == TOP_ACT_DRAW && ui.help, "?");
	CHECK(top_keys_apply(&ui, 'w', 5, 3) == TOP_ACT_DRAW && !ui.help,
	      "any key leaves the help, and does nothing else");
	CHECK(top_keys_apply(&ui, 'Z', 5, 3) == TOP_ACT_NONE, "Z is no key");
}

static void
check_moves(void)
{
	struct top_ui ui;
	top_ui_init(&ui);
	CHECK(top_keys_apply(&ui, KEY_UP, 10, 4) == TOP_ACT_DRAW &&
	      ui.selected == 0, "up at the top");
	CHECK(!ui.chosen || ui.selected == 0, "up");
	top_keys_apply(&ui, 'j', 10, 4);
	top_keys_apply(&ui, KEY_DOWN, 10, 4);
	CHECK(ui.selected == 2 && ui.first == 0 && ui.chosen, "two down: %zu",
	      ui.selected);
	top_keys_apply(&ui, KEY_NPAGE, 10, 4);
	CHECK(ui.selected == 6 && ui.first == 3, "page down: %zu, first %zu",
	      ui.selected, ui.first);
	top_keys_apply(&ui, KEY_END, 10, 4);
	CHECK(ui.selected == 9 && ui.first == 6, "end: %zu, first %zu",
	      ui.selected, ui.first);
	top_keys_apply(&ui, 'j', 10, 4);
	CHECK(ui.selected == 9, "down at the end: %zu", ui.selected);
	top_keys_apply(&ui, KEY_HOME, 10, 4);
	CHECK(ui.selected == 0 && ui.first == 0, "home");
	ui.selected = 8;
	top_ui_clamp(&ui, 3, 4);
	CHECK(ui.selected == 2 && ui.first == 0, "fewer rows: %zu",
	      ui.selected);
}

static struct top_row
row(const char *name, uint64_t live, int64_t growth, double alloc,
    double calls, uint64_t n_calls, uint64_t temporary)
{
	return (struct top_row){ .name = (char *)name, .live = live,
				 .growth = growth, .alloc_rate = alloc,
				 .call_rate = calls, .calls = n_calls,
				 .temporary = temporary };
}

static void
expect_order(struct top_table *t, enum top_col col, const char *want)
{
	top_sort_rows(t, col);
	char got[64] = "";
	for (size_t i = 0; i < t->n_rows; i++)
		strncat(got, t->rows[i].name, sizeof(got) - strlen(got) - 1);
	CHECK(!strcmp(got, want), "column %d: %s, want %s", (int)col, got,
	      want);
}

static void
check_orders(void)
{
	struct top_row rows[] = {
		row("a", 100, -5, 10, 1, 10, 0),
		row("b", 300, 0, 5, 9, 100, 50),
		row("c", 200, 40, 70, 3, 4, 4),
		row("d", 0, 7, 0, 0, 0, 0),
	};
	struct top_table t = { .rows = rows, .n_rows = 4 };
	expect_order(&t, TOP_COL_LIVE, "bcad");
	expect_order(&t, TOP_COL_HEAP, "bcad");
	expect_order(&t, TOP_COL_GROWTH, "cdba");
	expect_order(&t, TOP_COL_ALLOC, "cabd");
	expect_order(&t, TOP_COL_CALLS, "bcad");
	expect_order(&t, TOP_COL_TEMP, "cbad"); /* 100%, 50%, 0% by live */
	expect_order(&t, TOP_COL_SITE, "abcd");
}

static void
expect_bytes(double v, bool exact, bool sign, const char *want)
{
	char buf[32];
	top_cells_bytes(buf, sizeof(buf), v, exact, sign);
	CHECK(!strcmp(buf, want), "%.0f: %s, want %s", v, buf, want);
}

static void
check_cells(void)
{
	expect_bytes(3000000, true, false, "3000000");
	expect_bytes(3000000, false, false, "2.9MiB");
	expect_bytes(1000, false, false, "1000B");
	expect_bytes(1024, false, true, "+1.0KiB");
	expect_bytes(-2048, false, true, "-2.0KiB");
	expect_bytes(0, false, true, "0B");
	expect_bytes(5 * 1073741824.0, false, false, "5.0GiB");
	char buf[16];
	top_cells_count(buf, sizeof(buf), 12345);
	CHECK(!strcmp(buf, "12345"), "%s", buf);
	top_cells_count(buf, sizeof(buf), 2500000);
	CHECK(!strcmp(buf, "2.5M"), "%s", buf);
}

int
main(void)
{
	check_actions();
	check_moves();
	check_orders();
	check_cells();
	return failures ? 1 : 0;
}
