/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Each CPython version's layout: the offsets of what the walk follows and
   of what a code object's name and lines are read from. 3.8 to 3.12 from
   tables (measured with gdb on each version's debug info; Debian's 3.11.2
   has 3.11.7's layout), 3.13 from the _Py_DebugOffsets the interpreter
   carries at the start of _PyRuntime. */
#include <stdio.h>
#include <string.h>

#include "tracer/python/pypriv.h"
#include "tracer/target/target.h"

/* Per version: the walk, then the code object. */
struct py_table {
	uint8_t minor;
	struct py_walk_params walk; /* ANCHOR: an offset into _PyRuntime */
	struct py_code_layout code;
};

static const struct py_table tables[] = {
	{ 8, { .anchor = 1368, .tstate_rule = PY_TSTATE_DIRECT,
	       .first_rule = PY_FIRST_DIRECT, .instr_rule = PY_INSTR_LASTI_BYTES,
	       .entry_rule = PY_ENTRY_EVERY, .ts_thread_id = 176, .ts_frame = 24,
	       .f_back = 24, .f_code = 32, .f_instr = 104 },
	  { 8, PY_LINES_LNOTAB, 48, 72, 104, 112, 0, 40, 120, 0, 128 } },
	{ 9, { .anchor = 568, .tstate_rule = PY_TSTATE_DIRECT,
	       .first_rule = PY_FIRST_DIRECT, .instr_rule = PY_INSTR_LASTI_BYTES,
	       .entry_rule = PY_ENTRY_EVERY, .ts_thread_id = 176, .ts_frame = 24,
	       .f_back = 24, .f_code = 32, .f_instr = 104 },
	  { 9, PY_LINES_LNOTAB, 48, 72, 104, 112, 0, 40, 120, 0, 128 } },
	{ 10, { .anchor = 568, .tstate_rule = PY_TSTATE_DIRECT,
		.first_rule = PY_FIRST_DIRECT, .instr_rule = PY_INSTR_LASTI_UNITS,
		.entry_rule = PY_ENTRY_EVERY, .ts_thread_id = 176, .ts_frame = 24,
		.f_back = 24, .f_code = 32, .f_instr = 96 },
	  { 10, PY_LINES_LINETABLE, 48, 72, 104, 112, 0, 40, 120, 0, 128 } },
	{ 11, { .anchor = 576, .tstate_rule = PY_TSTATE_DIRECT,
		.first_rule = PY_FIRST_CFRAME, .instr_rule = PY_INSTR_POINTER,
		.entry_rule = PY_ENTRY_FLAG, .ts_thread_id = 152, .ts_frame = 56,
		.cframe_current = 8, .f_back = 48, .f_code = 32, .f_instr = 56,
		.f_entry = 68, .code_adaptive = 184 },
	  { 11, PY_LINES_LOCATIONS, 48, 72, 112, 120, 128, 72, 136, 168, 176 } },
	{ 12, { .anchor = 40, .tstate_rule = PY_TSTATE_GIL, .gil = 384,
		.holder = 8, .first_rule = PY_FIRST_CFRAME,
		.instr_rule = PY_INSTR_POINTER, .entry_rule = PY_ENTRY_CSTACK,
		.ts_thread_id = 136, .ts_frame = 56, .cframe_current = 0,
		.f_back = 8, .f_code = 0, .f_instr = 56, .f_entry = 70,
		.code_adaptive = 192 },
	  { 12, PY_LINES_LOCATIONS, 40, 56, 112, 120, 128, 68, 136, 176, 184 } },
};

bool
py_layout_from_table(struct py_interp *py, unsigned minor, uint64_t runtime)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (tables[i].minor != minor)
			continue;
		py->params = tables[i].walk;
		py->params.anchor += runtime;
		py->params.max_frames = PY_MAX_FRAMES;
		py->code = tables[i].code;
		return true;
	}
	return false;
}

/* _Py_DebugOffsets (3.13), as u64s after its 8-byte cookie: where each
   group starts, counted in u64s. 3.14 inserts fields: read only 3.13. */
enum {
	DO_VERSION = 0, DO_FREE_THREADED = 1,
	DO_RUNTIME = 2,                     /* size, finalizing, interp head */
	DO_INTERP = DO_RUNTIME + 3,         /* 13 fields */
	DO_THREAD = DO_INTERP + 13,         /* 9 */
	DO_FRAME = DO_THREAD + 9,           /* 6 */
	DO_CODE = DO_FRAME + 6,             /* 10 */
	DO_PYOBJECT = DO_CODE + 10,         /* 2 */
	DO_TYPE = DO_PYOBJECT + 2,          /* 4 */
	DO_TUPLE = DO_TYPE + 4,             /* 3 */
	DO_LIST = DO_TUPLE + 3,             /* 3 */
	DO_DICT = DO_LIST + 3,              /* 3 */
	DO_FLOAT = DO_DICT + 3,             /* 2 */
	DO_LONG = DO_FLOAT + 2,             /* 3 */
	DO_BYTES = DO_LONG + 3,             /* 3 */
	DO_UNICODE = DO_BYTES + 3,          /* 4: size, state, length, ascii */
	DO_COUNT = DO_UNICODE + 4,
};

/* 3.13's offset of int _co_firsttraceable (not in its debug offsets). */
#define PY313_FIRSTTRACEABLE 184

/* The walk and code layout out of the debug offsets Q. */
static void
layout_from_offsets(struct py_interp *py, const uint64_t *q, uint64_t runtime)
{
	struct py_walk_params *w = &py->params;
	struct py_code_layout *c = &py->code;

	memset(w, 0, sizeof(*w));
	w->anchor = runtime + q[DO_RUNTIME + 2];
	w->tstate_rule = PY_TSTATE_GIL;
	w->gil = (int32_t)q[DO_INTERP + 8];
	/* Given from the interpreter state; ceval.gil points to its _gil
	   (or the main interpreter's), so the holder is taken from there. */
	w->holder = (int32_t)(q[DO_INTERP + 12] - q[DO_INTERP + 9]);
	w->ts_thread_id = (int32_t)q[DO_THREAD + 5];
	w->first_rule = PY_FIRST_DIRECT;
	w->ts_frame = (int32_t)q[DO_THREAD + 4];
	w->f_back = (int32_t)q[DO_FRAME + 1];
	w->f_code = (int32_t)q[DO_FRAME + 2];
	w->f_instr = (int32_t)q[DO_FRAME + 3];
	w->f_entry = (int32_t)q[DO_FRAME + 5];
	w->instr_rule = PY_INSTR_POINTER;
	w->entry_rule = PY_ENTRY_CSTACK;
	w->code_adaptive = (int32_t)q[DO_CODE + 9];
	w->max_frames = PY_MAX_FRAMES;

	memset(c, 0, sizeof(*c));
	c->minor = 13;
	c->line_format = PY_LINES_LOCATIONS;
	c->ascii_size = (uint16_t)q[DO_UNICODE + 3];
	c->compact_size = c->ascii_size + 16;
	c->filename = (uint16_t)q[DO_CODE + 1];
	c->name = (uint16_t)q[DO_CODE + 2];
	c->qualname = (uint16_t)q[DO_CODE + 3];
	c->linetable = (uint16_t)q[DO_CODE + 4];
	c->firstlineno = (uint16_t)q[DO_CODE + 5];
	c->firsttraceable = PY313_FIRSTTRACEABLE;
	c->header = PY313_FIRSTTRACEABLE + 4;
}

/* True when every offset the walk and the reader use is one a struct of
   its kind can have (the groups' sizes are not checked: the runtime's and
   the interpreter's are large). */
static bool
offsets_sane(const uint64_t *q)
{
	static const int used[] = {
		DO_RUNTIME + 2, DO_INTERP + 8, DO_INTERP + 9, DO_INTERP + 12,
		DO_THREAD + 4,
		DO_THREAD + 5, DO_FRAME + 1, DO_FRAME + 2, DO_FRAME + 3,
		DO_FRAME + 5, DO_CODE + 1, DO_CODE + 2, DO_CODE + 3,
		DO_CODE + 4, DO_CODE + 5, DO_CODE + 9,
	};

	for (size_t i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		if (q[used[i]] >= 1u << 16)
			return false;
	if (q[DO_INTERP + 12] < q[DO_INTERP + 9] ||
	    q[DO_INTERP + 12] - q[DO_INTERP + 9] > 256)
		return false;
	return q[DO_CODE + 9] < 512 && q[DO_UNICODE + 3] >= 32 &&
	       q[DO_UNICODE + 3] <= 64;
}

int
py_layout_from_debug_offsets(struct py_interp *py, uint64_t runtime,
			     char *note, size_t notelen)
{
	struct {
		char cookie[8];
		uint64_t q[DO_COUNT];
	} d;

	if (mem_read(py->pid, runtime, &d, sizeof(d)) != (ssize_t)sizeof(d) ||
	    memcmp(d.cookie, "xdebugpy", 8) != 0) {
		snprintf(note, notelen, "no _Py_DebugOffsets at _PyRuntime");
		return -1;
	}
	unsigned major = (unsigned)(d.q[DO_VERSION] >> 24 & 0xff);
	unsigned minor = (unsigned)(d.q[DO_VERSION] >> 16 & 0xff);

	if (major != 3 || minor != 13) {
		snprintf(note, notelen, "Python %u.%u is not one heaptrace "
			 "reads (3.8 to 3.13)", major, minor);
		return -1;
	}
	if (d.q[DO_FREE_THREADED]) {
		snprintf(note, notelen, "free-threaded Python %u.%u is not one "
			 "heaptrace reads", major, minor);
		return -1;
	}
	if (!offsets_sane(d.q)) {
		snprintf(note, notelen, "Python 3.13's debug offsets do not "
			 "look right");
		return -1;
	}
	layout_from_offsets(py, d.q, runtime);
	return 0;
}
