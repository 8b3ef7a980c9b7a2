/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A recorded stack's Python words put in place of the interpreter's
   evaluation frames: each word named from its code object and line, made
   a synthetic frame; each C call of the evaluation loop takes its segment
   of words, inner to outer. */
#include <string.h>

#include "common/synthframe.h"
#include "common/xalloc.h"
#include "tracer/python/pypriv.h"

/* The synthetic frame WORD stands for, 0 when none (its code object
   does not check out, or the frame is still being set up). */
static uint64_t
word_frame(struct py_interp *py, uint64_t word)
{
	struct py_code_cache *c = &py->cache;
	const struct py_code *code = py_code_get(py, py_word_code(word));
	uint64_t index = py_word_index(word);

	if (!code) {
		py->stats.code_invalid++;
		return 0;
	}
	if (!c->words)
		c->words = ht_xcalloc(PY_WORD_CACHE, sizeof(*c->words));
	struct py_word_entry *we =
		&c->words[(word * 0x9e3779b97f4a7c15ull) >> 52];

	if (we->word == word && we->serial == code->serial)
		return we->pc;
	uint64_t pc = 0;

	/* 3.11+: a frame before its first traceable instruction is
	   incomplete (CPython's own tracebacks skip it); one whose pointer
	   is before its code's start just got pushed. */
	if (py->minor < 11 || (index != PY_WORD_INDEX_UNKNOWN &&
			       index >= (uint64_t)code->firsttraceable)) {
		unsigned line = index == PY_WORD_INDEX_UNKNOWN ? 0 :
			py_line_of(py->code.line_format, code->firstlineno,
				   code->table, code->table_len, index);
		pc = synth_frame_intern(code->function, code->file, line);
	}
	*we = (struct py_word_entry){ word, code->serial, pc };
	return pc;
}

struct out {
	uint64_t *pcs;
	unsigned n, max;
};

static void
put(struct out *o, uint64_t pc)
{
	if (o->n < o->max)
		o->pcs[o->n++] = pc;
}

/* Where the segment starting at word *I ends (exclusive): just after its
   first word with the segment-end mark, or at NWORDS. */
static unsigned
segment_end(const uint64_t *words, unsigned nwords, unsigned i)
{
	while (i < nwords && !py_word_segment_end(words[i]))
		i++;
	return i < nwords ? i + 1 : nwords;
}

/* Put the frames of WORDS[*I, end of the segment) into O, *I moved past
   it; returns how many. */
static unsigned
put_segment(struct py_interp *py, const uint64_t *words, unsigned nwords,
	    unsigned *i, struct out *o)
{
	unsigned end = segment_end(words, nwords, *i), put_n = 0;

	for (; *i < end; ++*i) {
		uint64_t pc = word_frame(py, words[*i]);

		if (pc) {
			put(o, pc);
			put_n++;
			py->stats.frames++;
		}
	}
	return put_n;
}

/* Every segment left from *I, counted as leftovers. */
static unsigned
put_rest(struct py_interp *py, const uint64_t *words, unsigned nwords,
	 unsigned *i, struct out *o)
{
	unsigned put_n = 0;

	while (*i < nwords) {
		put_n += put_segment(py, words, nwords, i, o);
		py->stats.leftover++;
	}
	return put_n;
}

static bool
in_object(const struct py_interp *py, uint64_t pc)
{
	return pc >= py->obj_lo && pc < py->obj_hi;
}

unsigned
py_splice(struct py_interp *py, const uint64_t *pcs, unsigned npcs,
	  const uint64_t *words, unsigned nwords, uint64_t *out, unsigned max)
{
	struct out o = { out, 0, max };
	unsigned wi = 0, outermost = npcs;

	if (!nwords) {
		for (unsigned i = 0; i < npcs; i++)
			put(&o, pcs[i]);
		return o.n;
	}
	py->stats.stacks++;
	py_code_cache_tick(&py->cache);
	for (unsigned i = 0; i < npcs; i++)
		if (py_interp_is_eval(py, pcs[i]))
			outermost = i;
	for (unsigned i = 0; i < npcs; i++) {
		bool eval = py_interp_is_eval(py, pcs[i]);

		if (eval && wi < nwords) {
			unsigned k = put_segment(py, words, nwords, &wi, &o);

			if (i == outermost)
				k += put_rest(py, words, nwords, &wi, &o);
			if (!k)
				put(&o, pcs[i]);
			continue;
		}
		put(&o, pcs[i]);
		/* No evaluation frame (its .cold part, say): after the
		   innermost frames of the interpreter's object. */
		if (outermost == npcs && wi < nwords && in_object(py, pcs[i]) &&
		    (i + 1 == npcs || !in_object(py, pcs[i + 1])))
			put_rest(py, words, nwords, &wi, &o);
	}
	put_rest(py, words, nwords, &wi, &o);
	return o.n;
}
