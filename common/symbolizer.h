/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the snapshot engine and the writer learn what a code address is,
   without depending on where that knowledge comes from (libdw for a live
   process, a table for a replayed test). */
#ifndef HT_COMMON_SYMBOLIZER_H
#define HT_COMMON_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One printed line of a frame: Massif prints an address whose code was
   inlined as a chain, innermost inlined function first, real function last. */
#define HT_MAX_INLINE 32

/* The loaded object a code address lies in, as pprof's Mapping wants it. */
struct ht_mapping {
	uint64_t start, end; /* its addresses in the process, END past them */
	uint64_t offset;     /* the file offset mapped at START */
	const char *file;    /* its path; NULL when not known */
	const uint8_t *build_id; /* its GNU build-id; NULL when none */
	size_t build_id_len;
};

struct ht_symbolizer {
	void *ctx;
	/* Symbol-table name of the function containing PC, demangled
	   ("operator new(unsigned long)", "main"), or NULL when no symbol covers
	   PC. This is the name --alloc-fn, --ignore-fn and the below-main cut
	   test. Never NULL as a member. The string is owned by CTX and stays
	   valid while CTX lives. */
	const char *(*function_name)(void *ctx, uint64_t pc);
	/* Massif's descriptions of PC without the address, one per inline level,
	   innermost first, into LINES (at most MAX): "g (t1.c:3)",
	   "g (in /usr/lib/x.so)", "??? (in /bin/x)", "???". Returns how many
	   (at least 1). Never NULL as a member. The strings are owned by CTX
	   and stay valid while CTX lives. */
	unsigned (*describe)(void *ctx, uint64_t pc, const char **lines,
			     unsigned max);
	/* The object PC lies in, into *OUT: false when not known. NULL as a
	   member when the symbolizer knows no objects. The strings are owned
	   by CTX and stay valid while CTX lives. */
	bool (*mapping)(void *ctx, uint64_t pc, struct ht_mapping *out);
};

/* True for the C library's start-up functions that call main, which
   Valgrind reports as "(below main)" and cuts stacks at. */
bool ht_is_below_main(const char *name);

#endif
