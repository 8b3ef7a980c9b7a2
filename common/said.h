/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The notes heaptrace has said on this machine: those that would be the
   same on every run (no hardware instruction counter here) are said once,
   then remembered in the cache directory's file "notes-said", one note a
   line. A cache that cannot be read or written only means saying a note
   again. */
#ifndef HT_COMMON_SAID_H
#define HT_COMMON_SAID_H

#include <stdbool.h>

/* Whether TEXT is new to this machine: not a line of notes-said in the
   cache directory (common/cachedir.h), or that file cannot be read; then
   appended to it (silently not, when it cannot be written). */
bool ht_said_first_time(const char *text);

#endif
