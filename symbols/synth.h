/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the symbolizers name a synthetic frame (common/synthframe.h): a
   Python function at a line of its file, which no object or line table
   knows. Nothing outside symbols/ includes this. */
#ifndef HT_SYMBOLS_SYNTH_H
#define HT_SYMBOLS_SYNTH_H

#include <stdint.h>

/* The function a synthetic PC stands for ("mod.func", "K.method",
   "<module>"), NULL when no frame was interned at PC. Valid until
   synth_frame_reset. */
const char *sym_synth_name(uint64_t pc);
/* PC's Massif description, newly allocated: "mod.func (file.py:12)", as a
   native frame's "fn (file.c:12)" (line 0: not known); "???" when no
   frame was interned at PC. */
char *sym_synth_describe(uint64_t pc);

#endif
