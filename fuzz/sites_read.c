/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a .sites file from anyone, read as `heaptrace report` and
   `diff` read it (output/sites_read.c), then looked up as they look it
   up: each frame's mapping, the sampling line, the wrappers found in its
   stacks and each site's name. */
#include "fuzz/fuzz.h"
#include "output/site_wrappers.h"
#include "output/sites_read.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sites_file f;
	struct sites_sampling s;
	char err[512], text[256];
	int e;

	if (sites_read(fuzz_file(data, size), &f, &e, err, sizeof(err)) != 0)
		return 0;
	for (size_t i = 0; i < f.n_sites; i++)
		for (size_t j = 0; j < f.sites[i].n_frames; j++) {
			const struct sites_frame *fr = &f.sites[i].frames[j];

			(void)sites_mapping_of(&f, fr->addr);
			(void)sites_is_alloc_function(fr->function);
		}
	if (sites_sampling_of(&f, NULL, &s))
		sites_sampling_text(&s, text, sizeof(text));
	struct site_naming nm;
	site_naming_init(&nm, &f, NULL, NULL, 0, true);
	for (size_t i = 0; i < f.n_sites; i++)
		(void)site_name_frame(&nm, &f.sites[i]);
	site_naming_free(&nm);
	sites_free(&f);
	return 0;
}
