/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the snapshot engine and the writer learn what a code address is,
   without depending on where that knowledge comes from (libdw for a live
   process, a table for a replayed test). */
#ifndef HT_COMMON_SYMBOLIZER_H
#define HT_COMMON_SYMBOLIZER_H

#include <stdbool.h>
#include <stdint.h>

/* One printed line of a frame: Massif prints an address whose code was
   inlined as a chain, innermost inlined function first, real function last. */
#define HT_MAX_INLINE 32

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
};

/* True for the C library's start-up functions that call main, which
   Valgrind reports as "(below main)" and cuts stacks at. */
bool ht_is_below_main(const char *name);

#endif
