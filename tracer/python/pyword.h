/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How a thread's Python frames are read at an allocation, and the word
   each frame is recorded as. Shared by the stub (tracer/inline/stub.c,
   freestanding: this header needs nothing but stdint) and the tracer's
   own reader (tracer/python/pywalk.c), which must read exactly what the
   stub reads. The tracer fills a struct py_walk_params per interpreter
   (tracer/python/python.h) from the interpreter's version or its debug
   offsets. */
#ifndef HT_TRACER_PYWORD_H
#define HT_TRACER_PYWORD_H

#include <stdint.h>

/* One Python frame, innermost first, after a record's native addresses:
     bit 63       always 1: no native address has it, so a record's
                  addresses split into native ones and Python words
     bit 62       the frame is the outermost of one C call of the
                  evaluation loop (its segment ends here)
     bits 47-61   the frame's instruction index (code units from its
                  code's first instruction), PY_WORD_INDEX_UNKNOWN when
                  not known or too large
     bits 0-46    the address of the frame's code object */
#define PY_WORD_FLAG (1ull << 63)
#define PY_WORD_SEGMENT_END (1ull << 62)
#define PY_WORD_INDEX_SHIFT 47
#define PY_WORD_INDEX_UNKNOWN 0x7fffull
#define PY_WORD_CODE_MASK ((1ull << 47) - 1)

static inline uint64_t
py_word_make(uint64_t code, uint64_t index, int segment_end)
{
	if (index > PY_WORD_INDEX_UNKNOWN)
		index = PY_WORD_INDEX_UNKNOWN;
	return PY_WORD_FLAG | (segment_end ? PY_WORD_SEGMENT_END : 0) |
	       index << PY_WORD_INDEX_SHIFT | (code & PY_WORD_CODE_MASK);
}

static inline int
py_word_is(uint64_t w)
{
	return (w & PY_WORD_FLAG) != 0;
}

static inline uint64_t
py_word_code(uint64_t w)
{
	return w & PY_WORD_CODE_MASK;
}

static inline uint64_t
py_word_index(uint64_t w)
{
	return (w >> PY_WORD_INDEX_SHIFT) & PY_WORD_INDEX_UNKNOWN;
}

static inline int
py_word_segment_end(uint64_t w)
{
	return (w & PY_WORD_SEGMENT_END) != 0;
}

/* How the allocating thread's PyThreadState is found (TSTATE_RULE). The
   candidate is accepted only when its thread id (TS_THREAD_ID: CPython's
   pthread_self()) equals the thread's own thread pointer (fs:0): a thread
   that does not hold the GIL gets no Python frames. */
enum py_tstate_rule {
	PY_TSTATE_OFF,    /* no Python frames */
	PY_TSTATE_DIRECT, /* ts = *ANCHOR (3.8-3.11: _PyRuntime.gilstate.
			     tstate_current) */
	PY_TSTATE_GIL,    /* interp = *ANCHOR (_PyRuntime.interpreters.head),
			     gil = *(interp + GIL), ts = *(gil + HOLDER)
			     (3.12, 3.13: the GIL's last holder) */
};

/* How the innermost frame is found from the thread state (FIRST_RULE). */
enum py_first_rule {
	PY_FIRST_DIRECT,  /* f = *(ts + TS_FRAME) (3.8-3.10, 3.13) */
	PY_FIRST_CFRAME,  /* f = *(*(ts + TS_FRAME) + CFRAME_CURRENT)
			     (3.11, 3.12: ts->cframe->current_frame) */
};

/* What F_INSTR holds (INSTR_RULE). */
enum py_instr_rule {
	PY_INSTR_LASTI_BYTES, /* int f_lasti, in bytes (3.8, 3.9) */
	PY_INSTR_LASTI_UNITS, /* int f_lasti, in code units (3.10) */
	PY_INSTR_POINTER,     /* a pointer into the code object:
				 index = (ptr - (code + CODE_ADAPTIVE)) / 2
				 (3.11+: prev_instr, instr_ptr) */
};

/* Where one C call of the evaluation loop ends (ENTRY_RULE). */
enum py_entry_rule {
	PY_ENTRY_EVERY,   /* every frame is a call of its own (3.8-3.10) */
	PY_ENTRY_FLAG,    /* the byte at F_ENTRY is not 0: the frame is the
			     outermost of its call (3.11's is_entry) */
	PY_ENTRY_CSTACK,  /* the byte at F_ENTRY is PY_OWNED_BY_CSTACK: not a
			     Python frame but the mark the call left; the
			     frame recorded before it is its outermost
			     (3.12+ owner) */
};

#define PY_OWNED_BY_CSTACK 3

/* Most Python frames recorded per stack. */
#define PY_MAX_FRAMES 64

/* What a walk follows. Offsets in bytes; ANCHOR an address in the
   target. MAX_FRAMES 0 (or TSTATE_RULE PY_TSTATE_OFF): no walk. Pointers
   loaded are followed only when 8-byte aligned, at least 4096 and below
   2^47; a walk stops at the first that is not, at MAX_FRAMES, or at a
   NULL previous frame. */
struct py_walk_params {
	uint64_t anchor;
	uint8_t tstate_rule;  /* enum py_tstate_rule */
	uint8_t first_rule;   /* enum py_first_rule */
	uint8_t instr_rule;   /* enum py_instr_rule */
	uint8_t entry_rule;   /* enum py_entry_rule */
	uint32_t max_frames;  /* at most PY_MAX_FRAMES */
	int32_t gil, holder;  /* PY_TSTATE_GIL */
	int32_t ts_thread_id; /* unsigned long thread_id */
	int32_t ts_frame;     /* frame, cframe or current_frame */
	int32_t cframe_current; /* PY_FIRST_CFRAME */
	int32_t f_back;       /* f_back, previous */
	int32_t f_code;       /* f_code, f_executable */
	int32_t f_instr;      /* f_lasti, prev_instr, instr_ptr */
	int32_t f_entry;      /* is_entry, owner (u8) */
	int32_t code_adaptive; /* co_code_adaptive (PY_INSTR_POINTER) */
	uint32_t pad[2];
};

_Static_assert(sizeof(struct py_walk_params) == 64,
	       "one cache line in the ring header");

#endif
