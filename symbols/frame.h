/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The record one code address resolves to (frame.c): made by resolve.c,
   kept per pc by the session and per module offset by the cache on disk.
   Nothing outside symbols/ includes this. */
#ifndef HT_SYMBOLS_FRAME_H
#define HT_SYMBOLS_FRAME_H

/* What one pc resolves to. Made once, never changed or moved, so the
   strings handed out stay valid until the session is freed. */
struct sym_frame {
	char *name;       /* demangled symbol-table name; NULL: no symbol */
	char **lines;     /* Massif descriptions, innermost inlined first;
			     NULL until first asked for (the name alone
			     decides --alloc-fn and the like, and most
			     addresses are never printed) */
	unsigned n_lines; /* 1..HT_MAX_INLINE once LINES is set */
	/* The last line as "(below main) ..." when the function is one of the
	   C library's start functions, printed so unless --show-below-main;
	   NULL for other functions. */
	char *below_main;
};

/* Give F (no lines yet) copies of FROM's lines and below-main line. */
void sym_frame_copy_lines(struct sym_frame *f, const struct sym_frame *from);
/* An independent copy of F. */
struct sym_frame *sym_frame_copy(const struct sym_frame *f);
/* Free F and its strings; NULL is a no-op. */
void sym_frame_free(struct sym_frame *f);

#endif
