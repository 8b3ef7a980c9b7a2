/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heaptrace's own standard error held back while top's screen is up:
   written there, a warning would garble the view. The view shows the
   latest line; all of it goes to the real standard error at the end. */
#ifndef HT_CLI_TOP_CAPTURE_H
#define HT_CLI_TOP_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>

struct top_capture;

/* Start holding back file descriptor 2. Returns NULL, with errno set,
   when it cannot be (standard error is then left as it was). */
struct top_capture *top_capture_start(void);
/* Whether a line came since the last call; its text (without its line
   break, at most LEN - 1 bytes) into BUF then. */
bool top_capture_latest(struct top_capture *c, char *buf, size_t len);
/* Give file descriptor 2 back, write what was held back to it, and free
   C (NULL: nothing). */
void top_capture_stop(struct top_capture *c);

#endif
