/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The terminal of `heaptrace top`'s full-screen view: ncurses opened on
   standard output with the keys from /dev/tty, its size followed, and
   the terminal given back as it was. */
#ifndef HT_CLI_TOP_SCREEN_H
#define HT_CLI_TOP_SCREEN_H

#include <stdbool.h>

struct top_screen;

/* The screen up, or NULL when the terminal cannot have one (unknown
   TERM, no terminal), nothing changed then. */
struct top_screen *top_screen_open(void);
/* The next key pressed (wgetch's code), or -1 when there is none; never
   waits. */
int top_screen_key(struct top_screen *s);
/* Whether the terminal's size changed since the last call (ncurses told
   of the new one). */
bool top_screen_resized(struct top_screen *s);
/* The terminal as it was before top_screen_open; S freed (NULL:
   nothing). */
void top_screen_close(struct top_screen *s);

#endif
