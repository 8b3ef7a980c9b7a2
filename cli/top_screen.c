/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The size is polled (TIOCGWINSZ at each key poll) rather than taken
   from ncurses' SIGWINCH handler: that handler is installed without
   SA_RESTART, and the tracer's loop, which has the only thread, would
   see its waits interrupted. A handler of our own that does nothing,
   with SA_RESTART, keeps ncurses from installing its own. */
#include "top_screen.h"

#include <curses.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <term.h>
#include <unistd.h>

#include "common/xalloc.h"

#define ESCAPE_DELAY_MS 25

struct top_screen {
	SCREEN *scr;
	FILE *keys;     /* /dev/tty, or NULL: standard input */
	struct sigaction old_winch;
	int rows, cols;
};

static void
on_winch(int sig)
{
	(void)sig;
}

static void
catch_winch(struct sigaction *old)
{
	struct sigaction sa = { .sa_handler = on_winch,
				.sa_flags = SA_RESTART };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGWINCH, &sa, old);
}

/* Raw: Ctrl-C and Ctrl-Z are keys (top_keys.c); no echo; keys never
   waited for; no cursor. */
static void
set_modes(void)
{
	raw();
	noecho();
	keypad(stdscr, TRUE);
	wtimeout(stdscr, 0);
	set_escdelay(ESCAPE_DELAY_MS);
	curs_set(0);
}

struct top_screen *
top_screen_open(void)
{
	struct top_screen *s = ht_xcalloc(1, sizeof(*s));
	s->keys = fopen("/dev/tty", "re");
	catch_winch(&s->old_winch);
	fflush(stdout);
	s->scr = newterm(NULL, stdout, s->keys ? s->keys : stdin);
	if (!s->scr) {
		top_screen_close(s);
		return NULL;
	}
	set_term(s->scr);
	set_modes();
	getmaxyx(stdscr, s->rows, s->cols);
	return s;
}

int
top_screen_key(struct top_screen *s)
{
	(void)s;
	int k = wgetch(stdscr);
	return k == ERR ? -1 : k;
}

bool
top_screen_resized(struct top_screen *s)
{
	struct winsize ws;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_row ||
	    !ws.ws_col)
		return false;
	if (ws.ws_row == s->rows && ws.ws_col == s->cols)
		return false;
	s->rows = ws.ws_row;
	s->cols = ws.ws_col;
	resize_term(s->rows, s->cols);
	return true;
}

void
top_screen_close(struct top_screen *s)
{
	if (!s)
		return;
	if (s->scr) {
		endwin();
		delscreen(s->scr);
	}
	fflush(stdout);
	sigaction(SIGWINCH, &s->old_winch, NULL);
	if (s->keys)
		fclose(s->keys);
	free(s);
}
