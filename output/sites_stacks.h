/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The frames and stacks of a .sites file (version 2,
   docs/sites-format.md), each numbered once, when first met: a frame is
   an address, a stack a frame called from a shorter stack, so that the
   stacks sites share (their outer frames) are written once. */
#ifndef HT_OUTPUT_SITES_STACKS_H
#define HT_OUTPUT_SITES_STACKS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/u64map.h"

/* The numbers given so far; 0 is no frame and the empty stack. */
struct sites_stacks {
	struct u64map frames; /* address -> its number */
	struct u64map nodes;  /* caller stack << 32 | frame -> its number */
	uint32_t n_frames, n_nodes;
};

/* Make S empty. */
void sites_stacks_init(struct sites_stacks *s);
/* Free what S holds. */
void sites_stacks_fini(struct sites_stacks *s);
/* The number of the frame at PC, *FRESH true when it was given now. */
uint32_t sites_stacks_frame(struct sites_stacks *s, uint64_t pc, bool *fresh);
/* The number of the stack FRAME called from CALLER (0: from nothing),
   *FRESH true when it was given now. */
uint32_t sites_stacks_node(struct sites_stacks *s, uint32_t caller,
			   uint32_t frame, bool *fresh);

#endif
