/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ms_print 3.19's rendering of a massif.out file, byte for byte: the
   header, the ASCII graph, the snapshot table and the allocation trees
   cut at a significance threshold (massif-semantics §8). */
#ifndef HT_OUTPUT_MSPRINT_H
#define HT_OUTPUT_MSPRINT_H

#include <stdio.h>

#include "massif_read.h"

/* What ms_print was asked for. */
struct msprint_opts {
	double threshold;       /* percent, 0..100; ms_print's default is 1 */
	unsigned x, y;          /* graph columns and rows, 4..1000 each */
	char *const *argv;      /* the arguments as typed, for the header */
	size_t argc;
};

/* Writes ms_print's rendering of F with O to OUT. Returns 0, or -1 with
   a one-line reason in ERR when F cannot be rendered (no snapshot, a
   total past 2^64, a tree line above its snapshot's total), in which
   case nothing is written. Write errors are left in OUT's error flag. */
int msprint_render(FILE *out, const struct mf_file *f,
		   const struct msprint_opts *o, char *err, size_t errlen);

#endif
