/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The numbered frames and stacks of a version-2 .sites file
   (docs/sites-format.md), as its reader meets their lines, and the
   expansion of a stack number into a site's frames. Each function checks
   what it is given against what was defined above it and says what is
   wrong; the strings of the frames are the caller's. */
#ifndef HT_OUTPUT_SITES_TABLE_H
#define HT_OUTPUT_SITES_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "output/sites_read.h"

/* The frame lines of a stack, at most: deeper is a malformed file (the
   writer cuts stacks at 256 addresses of up to 32 inlined functions). */
#define SITES_MAX_STACK_LINES 8192

struct sites_table {
	struct sites_frame *lines; /* every frame: line, in the file's order */
	size_t n_lines, cap_lines;
	size_t *first;             /* frame N's first line: first[N - 1] */
	size_t n_frames, cap_frames;
	struct sites_table_stack {
		uint32_t frame;
		uint32_t caller; /* 0: none */
		uint32_t depth;  /* its frame lines, its callers' included */
	} *stacks;                 /* stack N: stacks[N - 1] */
	size_t n_stacks, cap_stacks;
};

/* Make T empty. */
void sites_table_init(struct sites_table *t);
/* Free what T holds (not the frames' strings). */
void sites_table_fini(struct sites_table *t);
/* Add LINE as a line of frame ID: a new frame (ID the next number) or
   one more function inlined at the last frame's address (ID the last
   number, SAME_FRAME true: no other line came between). NULL, or what is
   wrong. */
const char *sites_table_frame(struct sites_table *t, uint64_t id,
			      bool same_frame, const struct sites_frame *line);
/* Add stack number ID (the next number): frame FRAME called from stack
   CALLER. NULL, or what is wrong. */
const char *sites_table_stack(struct sites_table *t, uint64_t id,
			      uint64_t caller, uint64_t frame);
/* The frames of stack ID, innermost first, into *OUT (malloc'd, NULL for
   stack 0) and *N. NULL, or what is wrong. */
const char *sites_table_expand(const struct sites_table *t, uint64_t id,
			       struct sites_frame **out, size_t *n);

#endif
