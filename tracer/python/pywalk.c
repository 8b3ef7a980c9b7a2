/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The walk of pyword.h done from outside, on a stopped thread: the same
   loads as the stub's, through the target's memory, giving the same
   words. The ptrace backend records with it; tests check the stub's
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

static bool
load_u8(pid_t tid, uint64_t base, int32_t off, uint8_t *out)
{
	if (!followable(base))
		return false;
	return mem_read(tid, base + (uint64_t)(int64_t)off, out, 1) == 1;
}

static bool
load_i32(pid_t tid, uint64_t base, int32_t off, int32_t *out)
{
	if (!followable(base))
		return false;
	return mem_read(tid, base + (uint64_t)(int64_t)off, out, 4) == 4;
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

/* Frame F's instruction index (code units from CODE's first). */
static uint64_t
instr_index(const struct py_walk_params *w, pid_t tid, uint64_t f,
	    uint64_t code)
{
	int32_t lasti;
	uint64_t p;

	if (w->instr_rule == PY_INSTR_POINTER) {
		if (!load(tid, f, w->f_instr, &p) ||
		    p < code + (uint64_t)w->code_adaptive)
			return PY_WORD_INDEX_UNKNOWN;
		return (p - code - (uint64_t)w->code_adaptive) / 2;
	}
	if (!load_i32(tid, f, w->f_instr, &lasti) || lasti < 0)
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
	uint64_t ts, f, code;
	uint8_t entry;

	if (!bound || w->tstate_rule == PY_TSTATE_OFF)
		return 0;
	ts = thread_state(w, tid, tcb);
	if (!ts)
		return 0;
	for (f = first_frame(w, tid, ts); n < bound && followable(f);) {
		if (w->entry_rule == PY_ENTRY_CSTACK) {
			if (!load_u8(tid, f, w->f_entry, &entry))
				break;
			if (entry == PY_OWNED_BY_CSTACK) {
				if (n)
					words[n - 1] |= PY_WORD_SEGMENT_END;
				if (!load(tid, f, w->f_back, &f))
					break;
				continue;
			}
		}
		if (!load(tid, f, w->f_code, &code))
			break;
		int end = w->entry_rule == PY_ENTRY_EVERY;

		if (w->entry_rule == PY_ENTRY_FLAG) {
			if (!load_u8(tid, f, w->f_entry, &entry))
				break;
			end = entry != 0;
		}
		words[n++] = py_word_make(code, instr_index(w, tid, f, code),
					  end);
		if (!load(tid, f, w->f_back, &f))
			break;
	}
	return n;
}
