/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Inlined frames (always_inline works at -O0): Massif prints one return
   address as a chain, innermost inlined function first. --alloc-fn matches
   only the real function containing the address, never an inlined one.
   Allocation sequence: see inline.events. */
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define INLINE static inline __attribute__((always_inline))

INLINE void *inner(size_t n) { return malloc(n); }
INLINE void *outer(size_t n) { return inner(n); }
NOINLINE void *wrap(size_t n) { return outer(n); }

int main(void)
{
	void *a = outer(100);
	void *b = wrap(200);
	void *c = inner(300);
	void *d = wrap(400);

	free(a);
	free(b);
	free(c);
	free(d);
	return 0;
}
