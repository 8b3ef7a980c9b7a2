/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a /proc/PID/maps text (a target can name its mappings,
   prctl(PR_SET_VMA_ANON_NAME), and its files, whatever their names), read
   as the tracer reads it: line by line as maps_foreach does
   (tracer/target/maps.c, maps_parse_line), looked up as maps_snap_find
   does, and turned into the leak check's roots
   (tracer/leak/leakroots.c, leakroots_from_maps) with stack pointers and
   heap blocks taken from the mappings themselves. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "tracer/leak/leakroots.h"
#include "tracer/target/target.h"

/* At most this many stack pointers and blocks, as a few threads and a
   few live blocks would give. */
#define MAX_PICKS 8

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[PATH_MAX + 128], *text;
	struct maps_range r[256];
	uint64_t sps[MAX_PICKS];
	struct leak_block blocks[MAX_PICKS];
	struct leakroots_range exclude[1] = { { 0x1000, 0x3000 } };
	struct maps_snap snap = { .r = r, .cap = 256 };
	struct leak_root *roots = NULL;
	size_t nroots = 0, nsps = 0, nblocks = 0;
	FILE *f = fmemopen((void *)data, size, "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		struct mapping m;

		if (!maps_parse_line(line, &m))
			continue;
		if (snap.n < snap.cap)
			r[snap.n++] = (struct maps_range){
				.lo = m.lo, .hi = m.hi,
				.main_stack = strcmp(m.path, "[stack]") == 0,
			};
		if (nsps < MAX_PICKS && m.hi > m.lo)
			sps[nsps++] = m.lo + (m.hi - m.lo) / 2;
		if (nblocks < MAX_PICKS && m.hi > m.lo)
			blocks[nblocks++] = (struct leak_block){
				.addr = m.lo, .size = (m.hi - m.lo) / 3,
			};
	}
	fclose(f);
	for (size_t i = 0; i < snap.n; i++) {
		(void)maps_snap_find(&snap, r[i].lo);
		(void)maps_snap_find(&snap, r[i].hi - 1);
	}
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (leakroots_from_maps(text, exclude, 1, sps, nsps, blocks, nblocks,
				&roots, &nroots) == 0)
		free(roots);
	free(text);
	return 0;
}
