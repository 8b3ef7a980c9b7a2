/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Naming a synthetic frame: the tracer interned its function, file and
   line, so nothing is looked up; the file is printed as the interpreter
   recorded it, as a native frame's file is printed as its line table
   records it; an unknown line is 0, as a line table's line 0, so that
   every reader of "fn (file:line)" reads it. */
#include "synth.h"

#include "common/synthframe.h"
#include "common/xalloc.h"

const char *
sym_synth_name(uint64_t pc)
{
	const struct synth_frame *f = synth_frame_get(pc);

	return f ? f->function : NULL;
}

char *
sym_synth_describe(uint64_t pc)
{
	const struct synth_frame *f = synth_frame_get(pc);

	if (!f)
		return ht_xstrdup("???");
	return ht_xasprintf("%s (%s:%u)", f->function, f->file, f->line);
}
