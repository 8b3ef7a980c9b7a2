/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Numbering of frames and stacks for the .sites writer: two hash maps,
   since a run's sites share most of their frames (a Python interpreter's
   sites differ in a few inner frames under tens of shared ones). */
#include "output/sites_stacks.h"

void
sites_stacks_init(struct sites_stacks *s)
{
	u64map_init(&s->frames);
	u64map_init(&s->nodes);
	s->n_frames = s->n_nodes = 0;
}

void
sites_stacks_fini(struct sites_stacks *s)
{
	u64map_fini(&s->frames);
	u64map_fini(&s->nodes);
}

/* KEY's number in M, the next of *COUNT when KEY is new. */
static uint32_t
number_of(struct u64map *m, uint64_t key, uint32_t *count, bool *fresh)
{
	uint64_t *slot = u64map_slot(m, key, fresh);
	if (*fresh)
		*slot = ++*count;
	return (uint32_t)*slot;
}

uint32_t
sites_stacks_frame(struct sites_stacks *s, uint64_t pc, bool *fresh)
{
	return number_of(&s->frames, pc, &s->n_frames, fresh);
}

uint32_t
sites_stacks_node(struct sites_stacks *s, uint32_t caller, uint32_t frame,
		  bool *fresh)
{
	return number_of(&s->nodes, (uint64_t)caller << 32 | frame,
			 &s->n_nodes, fresh);
}
