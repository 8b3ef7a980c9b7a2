/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A profile as pprof's profile.proto, gzip'd, as Go writes heap profiles
   (alloc_objects, alloc_space, inuse_objects, inuse_space; period_type
   space/bytes), for go tool pprof, Pyroscope and Parca. */
#ifndef HT_OUTPUT_PPROF_H
#define HT_OUTPUT_PPROF_H

#include <stddef.h>

#define PPROF_AT_PEAK (-1L)
#define PPROF_AT_END (-2L)

/* Write the profile MASSIF_PATH (with its .sites beside it when there is
   one) to OUT_PATH as a gzip'd pprof profile.proto, inuse figures of AT
   (PPROF_AT_PEAK, PPROF_AT_END or a snapshot number). 0 on success, else
   -1 with a one-line reason in ERR. */
int pprof_write_file(const char *massif_path, const char *out_path, long at,
		     char *err, size_t errlen);

#endif
