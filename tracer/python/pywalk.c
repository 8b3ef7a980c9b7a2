/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The walk of pyword.h done from outside, on a stopped thread: what the
   stub loads, read through the target's memory (a frame, or the page it
   is on, at a time), giving the same words. The ptrace backend records with it; tests check the stub's
   words against it. */
#include <string.h>

#include "tracer/python/pypriv.h"
#include "tracer/target/target.h"

/* Whether P may be followed (pyword.h: aligned, past the first page,
   below 2^47). */
static bool
followable(uint64_t p)
{
	return !(p & 7) && p >= 4096 && p < (1ull << 47);
}

/* *(BASE + OFF) into *OUT, BASE followable. */
static bool
load(pid_t tid, uint64_t base, int32_t off, uint64_t *out)
{
	if (!followable(base))
		return false;
	return mem_read(tid, base + (uint64_t)(int64_t)off, out, 8) == 8;
}

/* The thread state of the thread whose thread pointer is TCB, or 0. */
static uint64_t
thread_state(const struct py_walk_params *w, pid_t tid, uint64_t tcb)
{
	uint64_t ts = 0, interp, gil, id;

	if (w->tstate_rule == PY_TSTATE_DIRECT) {
		if (!load(tid, w->anchor, 0, &ts))
			return 0;
	} else if (w->tstate_rule == PY_TSTATE_GIL) {
		if (!load(tid, w->anchor, 0, &interp) ||
		    !load(tid, interp, w->gil, &gil) ||
		    !load(tid, gil, w->holder, &ts))
			return 0;
	} else {
		return 0;
	}
	if (!load(tid, ts, w->ts_thread_id, &id) || id != tcb)
		return 0;
	return ts;
}

static uint64_t
first_frame(const struct py_walk_params *w, pid_t tid, uint64_t ts)
{
	uint64_t f = 0, cf;

	if (w->first_rule == PY_FIRST_CFRAME) {
		if (!load(tid, ts, w->ts_frame, &cf) ||
		    !load(tid, cf, w->cframe_current, &f))
			return 0;
		return f;
	}
	return load(tid, ts, w->ts_frame, &f) ? f : 0;
}

/* One frame's fields, read at once (one system call a frame: the
   stub's loads, made from outside, cost a call each). */
struct frame {
	uint64_t back, code, instr; /* INSTR: a pointer, or f_lasti */
	uint8_t entry;
};

/* The span [*LO, *HI) of a frame's fields, relative to the frame. */
static void
frame_span(const struct py_walk_params *w, int32_t *lo, int32_t *hi)
{
	int32_t offs[4] = { w->f_back, w->f_code, w->f_instr, w->f_entry };
	int32_t ends[4] = { w->f_back + 8, w->f_code + 8,
			    w->f_instr + (w->instr_rule == PY_INSTR_POINTER
					  ? 8 : 4),
			    w->f_entry + 1 };
	int n = w->entry_rule == PY_ENTRY_EVERY ? 3 : 4;

	*lo = offs[0], *hi = ends[0];
	for (int i = 1; i < n; i++) {
		if (offs[i] < *lo)
			*lo = offs[i];
		if (ends[i] > *hi)
			*hi = ends[i];
	}
}

/* The last page of the target a walk read: 3.11+ frames sit next to
   each other in their thread's data stack, so most are read from it. */
struct page {
	uint64_t base; /* 0: none */
	uint8_t bytes[4096];
};

/* LEN bytes at ADDR into BUF, through PG. */
static bool
read_through(struct page *pg, pid_t tid, uint64_t addr, void *buf, size_t len)
{
	uint64_t base = addr & ~(uint64_t)(sizeof(pg->bytes) - 1);

	if (addr + len > base + sizeof(pg->bytes))
		return mem_read(tid, addr, buf, len) == (ssize_t)len;
	if (pg->base != base) {
		if (mem_read(tid, base, pg->bytes, sizeof(pg->bytes)) !=
		    (ssize_t)sizeof(pg->bytes)) {
			pg->base = 0;
			return mem_read(tid, addr, buf, len) == (ssize_t)len;
		}
		pg->base = base;
	}
	memcpy(buf, pg->bytes + (addr - base), len);
	return true;
}

static bool
read_frame(const struct py_walk_params *w, pid_t tid, struct page *pg,
	   uint64_t f, struct frame *out)
{
	uint8_t buf[512];
	int32_t lo, hi;
	int32_t lasti;

	frame_span(w, &lo, &hi);
	if (!followable(f) || lo < 0 || hi - lo > (int32_t)sizeof(buf) ||
	    !read_through(pg, tid, f + (uint64_t)lo, buf, (size_t)(hi - lo)))
		return false;
	memcpy(&out->back, buf + w->f_back - lo, 8);
	memcpy(&out->code, buf + w->f_code - lo, 8);
	if (w->instr_rule == PY_INSTR_POINTER) {
		memcpy(&out->instr, buf + w->f_instr - lo, 8);
	} else {
		memcpy(&lasti, buf + w->f_instr - lo, 4);
		out->instr = (uint64_t)(int64_t)lasti;
	}
	out->entry = w->entry_rule == PY_ENTRY_EVERY ? 1
						      : buf[w->f_entry - lo];
	return true;
}

/* Frame FR's instruction index (code units from its code's first). */
static uint64_t
instr_index(const struct py_walk_params *w, const struct frame *fr)
{
	int64_t lasti = (int64_t)fr->instr;
	uint64_t base = fr->code + (uint64_t)w->code_adaptive;

	if (w->instr_rule == PY_INSTR_POINTER)
		return fr->instr < base ? PY_WORD_INDEX_UNKNOWN
					: (fr->instr - base) / 2;
	if (lasti < 0)
		return PY_WORD_INDEX_UNKNOWN;
	return w->instr_rule == PY_INSTR_LASTI_BYTES ? (uint64_t)lasti / 2
						     : (uint64_t)lasti;
}

unsigned
py_walk_remote(const struct py_interp *py, pid_t tid, uint64_t tcb,
	       uint64_t *words, unsigned max)
{
	const struct py_walk_params *w = &py->params;
	unsigned n = 0, bound = w->max_frames < max ? w->max_frames : max;
	uint64_t ts, f;
	struct frame fr = { 0 };
	struct page pg;

	pg.base = 0;

	if (!bound || w->tstate_rule == PY_TSTATE_OFF)
		return 0;
	ts = thread_state(w, tid, tcb);
	if (!ts)
		return 0;
	/* CSTACK marks are stepped over, not recorded: bounded too. */
	f = first_frame(w, tid, ts);
	for (unsigned steps = 0; n < bound && steps < 2 * bound + 1 &&
	     followable(f); steps++, f = fr.back) {
		if (!read_frame(w, tid, &pg, f, &fr))
			break;
		if (w->entry_rule == PY_ENTRY_CSTACK &&
		    fr.entry == PY_OWNED_BY_CSTACK) {
			if (n)
				words[n - 1] |= PY_WORD_SEGMENT_END;
			continue;
		}
		if (!followable(fr.code))
			break;
		words[n++] = py_word_make(fr.code, instr_index(w, &fr),
					  w->entry_rule == PY_ENTRY_CSTACK
					  ? 0 : fr.entry != 0);
	}
	return n;
}
