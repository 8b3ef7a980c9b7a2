/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A .sites file's frames and stacks by number (sites_table.h). Numbers
   must come in a row and name only what is above them, so that a stack
   cannot loop and every expansion ends. */
#include "output/sites_table.h"

#include <stdlib.h>

#include "common/xalloc.h"

void
sites_table_init(struct sites_table *t)
{
	*t = (struct sites_table){ 0 };
}

void
sites_table_fini(struct sites_table *t)
{
	free(t->lines);
	free(t->first);
	free(t->stacks);
	*t = (struct sites_table){ 0 };
}

/* How many lines frame number ID (1..n_frames) has. */
static size_t
frame_lines(const struct sites_table *t, size_t id)
{
	size_t end = id < t->n_frames ? t->first[id] : t->n_lines;
	return end - t->first[id - 1];
}

const char *
sites_table_frame(struct sites_table *t, uint64_t id, bool same_frame,
		  const struct sites_frame *line)
{
	if (id == t->n_frames && id && same_frame) {
		const struct sites_frame *last = &t->lines[t->n_lines - 1];
		if (last->addr != line->addr)
			return "frame: a second line of a frame with another "
			       "address";
		if (frame_lines(t, id) >= SITES_MAX_STACK_LINES)
			return "frame: too many inlined functions";
	} else if (id == t->n_frames + 1 && id <= UINT32_MAX) {
		ht_xgrow((void **)&t->first, &t->cap_frames, t->n_frames + 1,
			 sizeof(*t->first));
		t->first[t->n_frames++] = t->n_lines;
	} else {
		return "frame: number out of order (frames are numbered 1, "
		       "2, ... as they come; a frame's lines follow each "
		       "other)";
	}
	ht_xgrow((void **)&t->lines, &t->cap_lines, t->n_lines + 1,
		 sizeof(*t->lines));
	t->lines[t->n_lines++] = *line;
	return NULL;
}

const char *
sites_table_stack(struct sites_table *t, uint64_t id, uint64_t caller,
		  uint64_t frame)
{
	if (id != t->n_stacks + 1 || id > UINT32_MAX)
		return "stack: number out of order (stacks are numbered 1, "
		       "2, ... as they come)";
	if (caller > t->n_stacks)
		return "stack: caller not defined above";
	if (frame == 0 || frame > t->n_frames)
		return "stack: frame not defined above";
	size_t depth = frame_lines(t, (size_t)frame) +
		       (caller ? t->stacks[caller - 1].depth : 0);
	if (depth > SITES_MAX_STACK_LINES)
		return "stack: deeper than 8192 frame lines";
	ht_xgrow((void **)&t->stacks, &t->cap_stacks, t->n_stacks + 1,
		 sizeof(*t->stacks));
	t->stacks[t->n_stacks++] = (struct sites_table_stack){
		.frame = (uint32_t)frame,
		.caller = (uint32_t)caller,
		.depth = (uint32_t)depth,
	};
	return NULL;
}

const char *
sites_table_expand(const struct sites_table *t, uint64_t id,
		   struct sites_frame **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (id > t->n_stacks)
		return "site: stack not defined above";
	if (id == 0)
		return NULL;
	struct sites_frame *v = ht_xcalloc(t->stacks[id - 1].depth,
					   sizeof(*v));
	size_t k = 0;
	for (uint64_t s = id; s; s = t->stacks[s - 1].caller) {
		size_t fr = t->stacks[s - 1].frame, first = t->first[fr - 1];
		for (size_t l = 0; l < frame_lines(t, fr); l++)
			v[k++] = t->lines[first + l];
	}
	*out = v;
	*n = k;
	return NULL;
}
