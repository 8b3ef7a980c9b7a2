/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Copying and freeing the record of one code address (frame.h): shared by
   the session's table and the cache on disk, which each own their
   records. */
#include "frame.h"

#include <stdlib.h>

#include "common/xalloc.h"

void
sym_frame_copy_lines(struct sym_frame *f, const struct sym_frame *from)
{
	f->n_lines = from->n_lines;
	f->lines = ht_xcalloc(from->n_lines, sizeof(*f->lines));
	for (unsigned i = 0; i < from->n_lines; i++)
		f->lines[i] = ht_xstrdup(from->lines[i]);
	f->below_main = from->below_main ? ht_xstrdup(from->below_main) : NULL;
}

struct sym_frame *
sym_frame_copy(const struct sym_frame *f)
{
	struct sym_frame *c = ht_xcalloc(1, sizeof(*c));

	c->name = f->name ? ht_xstrdup(f->name) : NULL;
	if (f->lines)
		sym_frame_copy_lines(c, f);
	return c;
}

void
sym_frame_free(struct sym_frame *f)
{
	if (!f)
		return;
	free(f->name);
	free(f->below_main);
	for (unsigned i = 0; f->lines && i < f->n_lines; i++)
		free(f->lines[i]);
	free(f->lines);
	free(f);
}
