/* SPDX-License-Identifier: GPL-2.0-or-later */
/* heaptrace's per-user cache directory, shared by the symbol cache and the
   notes said once per machine. */
#ifndef HT_COMMON_CACHEDIR_H
#define HT_COMMON_CACHEDIR_H

#include <stdbool.h>

/* $XDG_CACHE_HOME/heaptrace, else $HOME/.cache/heaptrace (malloc'd), or
   NULL when neither variable holds an absolute path. Not created. */
char *ht_cache_dir(void);
/* Create DIR and its missing parents, private to the user (0700); true
   when DIR exists as a directory afterwards. */
bool ht_make_dirs(const char *dir);

#endif
