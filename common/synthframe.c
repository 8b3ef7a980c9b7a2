/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "common/synthframe.h"

#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "common/xalloc.h"

/* The frames in the order they were made: a frame's number is its index.
   BY_KEY maps a hash of the three to the index plus one; two triples
   with one hash take the next key along (a probe over the map's keys),
   so a lookup compares the strings before it trusts a key. */
static struct synth_frame *frames;
static size_t n_frames, cap_frames;
static struct u64map by_key;
static bool by_key_ready;

static uint64_t
mix(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return (h ^ 0xff) * 0x100000001b3ull; /* "ab","c" != "a","bc" */
}

static uint64_t
frame_hash(const char *function, const char *file, unsigned line)
{
	uint64_t h = mix(mix(0xcbf29ce484222325ull, function), file);
	return (h ^ line) * 0x9e3779b97f4a7c15ull;
}

static bool
frame_equal(const struct synth_frame *f, const char *function,
	    const char *file, unsigned line)
{
	return f->line == line && strcmp(f->function, function) == 0 &&
	       strcmp(f->file, file) == 0;
}

uint64_t
synth_frame_intern(const char *function, const char *file, unsigned line)
{
	if (!by_key_ready) {
		u64map_init(&by_key);
		by_key_ready = true;
	}
	uint64_t key = frame_hash(function, file, line);
	for (;; key += 0x9e3779b97f4a7c15ull) {
		bool fresh;
		uint64_t *slot = u64map_slot(&by_key, key, &fresh);
		if (!fresh) {
			if (frame_equal(&frames[*slot - 1], function, file,
					line))
				return SYNTH_FRAME_BASE | (*slot - 1);
			continue;
		}
		if (n_frames == cap_frames) {
			cap_frames = cap_frames ? cap_frames * 2 : 64;
			frames = ht_xreallocarray(frames, cap_frames,
						  sizeof(*frames));
		}
		frames[n_frames] = (struct synth_frame){
			.function = ht_xstrdup(function),
			.file = ht_xstrdup(file),
			.line = line,
		};
		*slot = ++n_frames;
		return SYNTH_FRAME_BASE | (n_frames - 1);
	}
}

const struct synth_frame *
synth_frame_get(uint64_t pc)
{
	if (!synth_frame_is(pc))
		return NULL;
	uint64_t index = pc & ~SYNTH_FRAME_MASK;
	return index < n_frames ? &frames[index] : NULL;
}

void
synth_frame_reset(void)
{
	for (size_t i = 0; i < n_frames; i++) {
		free((void *)frames[i].function);
		free((void *)frames[i].file);
	}
	free(frames);
	frames = NULL;
	n_frames = cap_frames = 0;
	if (by_key_ready)
		u64map_fini(&by_key);
	by_key_ready = false;
}
