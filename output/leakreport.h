/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The report of the leak check (issue 14) in memcheck's words: the text
   Valgrind 3.19's memcheck prints at exit, from the blank line before
   "HEAP SUMMARY:" to the blank line after "LEAK SUMMARY:" (or after "All
   heap blocks were freed -- no leaks are possible"), every line prefixed
   "==PID== ". The ERROR SUMMARY lines that follow in memcheck are not
   part of it. Pure formatting: the blocks come classified by leak_classify
   (snapshot/leak.h), the stacks from the caller. */
#ifndef HT_OUTPUT_LEAKREPORT_H
#define HT_OUTPUT_LEAKREPORT_H

#include <stdint.h>
#include <stdio.h>

#include "snapshot/leak.h"

/* --leak-check=no|summary|full (no: the HEAP SUMMARY and a hint only). */
enum leakreport_mode {
	LEAKREPORT_NO,
	LEAKREPORT_SUMMARY,
	LEAKREPORT_FULL,
};

/* A set of kinds shown (--show-leak-kinds), bits of enum leak_kind. */
#define LEAKREPORT_KIND_BIT(k) (1u << (k))
/* memcheck's default: definite,possible. */
#define LEAKREPORT_SHOW_DEFAULT                                            \
	(LEAKREPORT_KIND_BIT(LEAK_DEFINITE) | LEAKREPORT_KIND_BIT(LEAK_POSSIBLE))
#define LEAKREPORT_SHOW_ALL ((1u << LEAK_N_KINDS) - 1)

/* One frame of an allocation stack, as memcheck prints it:
   "   at 0xADDR: DESC" for the first, "   by 0xADDR: DESC" for the
   others. DESC is e.g. "main (prog.c:6)", "malloc (in /lib/x.so)", or
   "???" when nothing is known. */
struct leakreport_frame {
	uint64_t addr;
	const char *desc;
};

/* The caller's allocation stacks, reached through each block's id. */
struct leakreport_stacks {
	/* The stack of block ID as a key: blocks with equal keys (and equal
	   kinds) make one loss record. */
	uint64_t (*key)(void *ctx, void *id);
	/* The frames of block ID's stack, innermost first: sets *FRAMES
	   (owned by the caller, read before the next call) and returns
	   their number. */
	size_t (*frames)(void *ctx, void *id,
			 const struct leakreport_frame **frames);
	void *ctx;
};

struct leakreport_opts {
	long pid;                  /* each line starts "==PID== " */
	enum leakreport_mode mode; /* --leak-check */
	unsigned show_kinds;       /* --show-leak-kinds, LEAKREPORT_KIND_BIT */
	/* "total heap usage: ALLOCS allocs, FREES frees, BYTES bytes
	   allocated" */
	uint64_t allocs;
	uint64_t frees;
	uint64_t bytes_allocated;
};

/* Writes the report to OUT: BLOCKS (N of them, classified by
   leak_classify; the parent field is not used), TOTALS as leak_classify
   wrote them ("in use at exit" is their sum over the kinds). In full
   mode the loss records are sorted as memcheck sorts them: by total size
   (direct + indirect bytes), then by kind (still reachable, possibly,
   indirectly, definitely lost), then by number of blocks, then by the
   first appearance of their stack in BLOCKS (memcheck: the age of the
   stack) - pass the blocks in allocation order to come closest. Returns 0,
   or -1 when OUT reported an error. */
/* The number of loss records (as leakreport_write groups BLOCKS) whose
   kind is in KINDS (LEAKREPORT_KIND_BIT): memcheck's count of leak
   errors for --errors-for-leak-kinds. */
uint64_t leakreport_count_records(const struct leak_block *blocks, size_t n,
				  const struct leakreport_stacks *stacks,
				  unsigned kinds);

int leakreport_write(FILE *out, const struct leak_block *blocks, size_t n,
		     const struct leak_totals *totals,
		     const struct leakreport_stacks *stacks,
		     const struct leakreport_opts *opts);

#endif
