/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The notes heaptrace has said on this machine: those that would be the
   same on every run (no hardware instruction counter here) are said once,
   then remembered in the cache directory's file "notes-said", one note a
   line. A cache that cannot be read or written only means saying a note
   again. */
#ifndef HT_COMMON_SAID_H
#define HT_COMMON_SAID_H

#include <stdbool.h>

/* Whether TEXT is a line of DIR/notes-said (false when DIR is NULL or the
   file cannot be read). */
bool ht_said_before(const char *dir, const char *text);
/* Append TEXT to DIR/notes-said, creating DIR; silently nothing when DIR
   is NULL or cannot be written. */
void ht_said_remember(const char *dir, const char *text);

#endif
