/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The stacks py_splice (tracer/python/python.h) made lately, by what they
   were made from. A loop that allocates records the same native
   addresses and the same Python words again and again, and a splice
   costs a code-object lookup and a line lookup per Python word: the
   drain looks here first. Forgotten at every drain, so that what is
   remembered was made from records drained together (milliseconds
   apart): a code object freed and its address reused by another in
   between would have to be read again by the splice, which checks it. */
#ifndef HT_TRACER_INLINE_PYMEMO_H
#define HT_TRACER_INLINE_PYMEMO_H

#include <stdint.h>

struct py_memo;

/* A memo for keys of at most MAX_PCS native addresses and PY_MAX_FRAMES
   Python words, and stacks of at most MAX_PCS frames. */
struct py_memo *py_memo_new(unsigned max_pcs);

/* Free M; NULL is a no-op. */
void py_memo_free(struct py_memo *m);

/* Forget every stack (O(1)). */
void py_memo_clear(struct py_memo *m);

/* The stack remembered for the native lookup pcs PCS (NPCS) and the
   Python words WORDS (NWORDS), its length into *N; NULL when none. Valid
   until the next py_memo_put or py_memo_clear. */
const uint64_t *py_memo_get(struct py_memo *m, const uint64_t *pcs,
			    unsigned npcs, const uint64_t *words,
			    unsigned nwords, unsigned *n);

/* Remember OUT (N frames) as the stack of PCS and WORDS; keys or stacks
   longer than M takes are not remembered. */
void py_memo_put(struct py_memo *m, const uint64_t *pcs, unsigned npcs,
		 const uint64_t *words, unsigned nwords, const uint64_t *out,
		 unsigned n);

#endif
