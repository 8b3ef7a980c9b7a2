/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frames that are not machine code: a Python function at a line of its
   file. Each distinct (function, file, line) gets a number, and stacks
   carry it as an address no code can have (a non-canonical one, with
   SYNTH_FRAME_BASE's bits set), so that every layer that keeps, compares
   and names stacks of code addresses keeps, compares and names these too.
   The tracer makes them (tracer/python/); the symbolizers describe them. */
#ifndef HT_COMMON_SYNTHFRAME_H
#define HT_COMMON_SYNTHFRAME_H

#include <stdbool.h>
#include <stdint.h>

/* Every synthetic address has these bits set; no user-space code address
   on x86-64 has bit 63 set. The low 32 bits are the frame's number. */
#define SYNTH_FRAME_BASE 0xfff5000000000000ull
#define SYNTH_FRAME_MASK 0xffff000000000000ull

struct synth_frame {
	const char *function; /* "module.function", "Class.method",
				 "<module>": as the language prints it */
	const char *file;     /* "/srv/app/views.py", "<string>" */
	unsigned line;        /* 0: not known */
};

/* True when PC is a synthetic frame's address (made by synth_frame_intern
   or not: any address with SYNTH_FRAME_BASE's bits). */
static inline bool
synth_frame_is(uint64_t pc)
{
	return (pc & SYNTH_FRAME_MASK) == SYNTH_FRAME_BASE;
}

/* The address standing for FUNCTION at FILE:LINE, the same one for the
   same three every time in this heaptrace (the strings are copied). */
uint64_t synth_frame_intern(const char *function, const char *file,
			    unsigned line);

/* The frame PC stands for, or NULL when PC is no address
   synth_frame_intern gave. Valid until synth_frame_reset. */
const struct synth_frame *synth_frame_get(uint64_t pc);

/* Forget every frame (tests; the table otherwise lives as long as
   heaptrace). */
void synth_frame_reset(void);

#endif
