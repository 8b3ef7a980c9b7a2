/* SPDX-License-Identifier: GPL-2.0-or-later */
/* CPython seen from outside: finding an interpreter in a process's
   objects, how to walk its threads' frames (pyword.h), reading its code
   objects, and putting the Python frames a stack recorded in place of the
   interpreter's evaluation frames. Everything here reads the target's
   memory through tracer/target/ and needs no debug info: only .dynsym
   symbols (_PyRuntime, _PyEval_EvalFrameDefault, PyCode_Type, Py_Version)
   and the interpreter's version. docs/python.md says what is shown. */
#ifndef HT_TRACER_PYTHON_H
#define HT_TRACER_PYTHON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/python/pyword.h"

struct elf_object;
struct py_interp; /* one CPython found in one process */

/* Look for CPython in OBJ (the file PATH, loaded at BIAS) of process PID.
   Returns NULL when OBJ is not an interpreter (no _PyRuntime); NULL with a
   one-line reason in NOTE (NOTE[0] != 0) when it is one this heaptrace
   cannot read (an unknown version, a free-threaded build); else the
   interpreter, its walk parameters filled. */
struct py_interp *py_interp_find(pid_t pid, const struct elf_object *obj,
				 uint64_t bias, const char *path, char *note,
				 size_t notelen);

/* Free PY and every cache it holds; NULL is a no-op. */
void py_interp_free(struct py_interp *py);

/* PY for the fork child CHILD of its process: the same interpreter at the
   same addresses, its caches kept. */
struct py_interp *py_interp_clone(const struct py_interp *py, pid_t child);

/* PY's version as "3.11". */
const char *py_interp_version(const struct py_interp *py);

/* What the stub and py_walk_remote follow for PY. */
const struct py_walk_params *py_interp_params(const struct py_interp *py);

/* True when PC (a frame's lookup pc: its pc, or a return address minus
   one) lies in PY's evaluation loop, the C function whose frames the
   Python frames replace. */
bool py_interp_is_eval(const struct py_interp *py, uint64_t pc);

/* Read the Python frames of thread TID (thread pointer TCB, its fs base)
   as the stub would at this moment, into WORDS (at most MAX): returns how
   many (0: the thread holds no GIL or has no frames). TID must be
   stopped. */
unsigned py_walk_remote(const struct py_interp *py, pid_t tid, uint64_t tcb,
			uint64_t *words, unsigned max);

/* Replace the evaluation-loop frames of the native stack PCS (NPCS lookup
   pcs, innermost first) with the Python frames of WORDS (NWORDS Python
   words, innermost first, as recorded with it), each made a synthetic
   frame (common/synthframe.h) named from its code object: inner to
   outer, each evaluation frame takes the next segment of WORDS; segments
   left over go in place of the outermost evaluation frame, or, where the
   stack has none, after the innermost frames of the interpreter's object
   (never lost). Native frames are kept in their order. Writes at most MAX
   into OUT (which may not be PCS) and returns how many. Must run while
   the code objects WORDS name are alive (the record's drain). */
unsigned py_splice(struct py_interp *py, const uint64_t *pcs, unsigned npcs,
		   const uint64_t *words, unsigned nwords, uint64_t *out,
		   unsigned max);

/* Counts for --stats and tests. */
struct py_stats {
	uint64_t stacks;        /* stacks that had Python words */
	uint64_t frames;        /* Python frames named */
	uint64_t code_reads;    /* code objects read from the target */
	uint64_t code_invalid;  /* words whose code object did not check out */
	uint64_t leftover;      /* segments without an evaluation frame */
};
const struct py_stats *py_interp_stats(const struct py_interp *py);

#endif
