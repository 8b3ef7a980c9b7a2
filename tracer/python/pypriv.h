/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the files of tracer/python/ share: one interpreter's layout (the
   offsets its version puts things at), its code-object cache, and the
   functions each file gives the others. Not for use outside python/. */
#ifndef HT_TRACER_PYPRIV_H
#define HT_TRACER_PYPRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer/python/python.h"

/* How a version's code objects map instruction indexes to lines. */
enum py_line_format {
	PY_LINES_LNOTAB,    /* 3.8, 3.9 co_lnotab */
	PY_LINES_LINETABLE, /* 3.10 co_linetable */
	PY_LINES_LOCATIONS, /* 3.11+ location table */
};

/* Where one version keeps what the reader needs in a code object. */
struct py_code_layout {
	uint8_t minor;          /* 3.MINOR */
	uint8_t line_format;    /* enum py_line_format */
	uint16_t ascii_size;    /* sizeof(PyASCIIObject) */
	uint16_t compact_size;  /* sizeof(PyCompactUnicodeObject) */
	uint16_t filename, name, qualname; /* qualname 0: none (< 3.11) */
	uint16_t firstlineno;   /* int */
	uint16_t linetable;     /* co_lnotab or co_linetable, a bytes */
	uint16_t firsttraceable; /* int _co_firsttraceable, 0: none */
	uint16_t header;        /* bytes read to cover every field above */
};

/* One cached code object. */
struct py_code {
	uint64_t addr;          /* 0: free slot */
	uint64_t filename_p, name_p, linetable_p; /* as read: reuse check */
	uint64_t checked;       /* the cache's epoch when last checked */
	char *function;         /* "module.qualname" */
	char *file;             /* co_filename */
	uint8_t *table;         /* the line table's bytes */
	size_t table_len;
	int firstlineno;
	int firsttraceable;
	uint64_t serial;        /* which reading of a code object this is */
	bool valid;             /* read and its type checked */
};

/* Words already named: a word's frame, for as long as its code object's
   reading (SERIAL) is the one cached. */
#define PY_WORD_CACHE 4096
struct py_word_entry {
	uint64_t word, serial, pc; /* PC 0: the word names no frame */
};

struct py_code_cache {
	struct py_code *slots;  /* open addressing on the code address */
	size_t cap, n;
	uint64_t epoch;         /* advanced on a clock: entries older are
				   read again before use */
	uint64_t epoch_ns;      /* when EPOCH last advanced */
	uint64_t next_serial;
	struct py_word_entry *words; /* PY_WORD_CACHE, or NULL until used */
};

struct py_interp {
	pid_t pid;
	char version[8];        /* "3.11" */
	unsigned minor;
	struct py_walk_params params;
	struct py_code_layout code;
	uint64_t code_type;     /* &PyCode_Type */
	uint64_t eval_lo, eval_hi; /* _PyEval_EvalFrameDefault */
	uint64_t obj_lo, obj_hi;   /* the interpreter's object's mappings */
	struct py_code_cache cache;
	struct py_stats stats;
};

/* ---- pyversion.c ---- */
/* Fill PY's walk parameters and code layout for 3.MINOR with _PyRuntime
   at RUNTIME (3.8-3.12 from tables). False when MINOR is not one of
   them. */
bool py_layout_from_table(struct py_interp *py, unsigned minor,
			  uint64_t runtime);
/* Fill them from 3.13's _Py_DebugOffsets at RUNTIME in PY's process.
   Returns 0, or -1 with NOTE set (no cookie, a version other than 3.13, a
   free-threaded build). */
int py_layout_from_debug_offsets(struct py_interp *py, uint64_t runtime,
				 char *note, size_t notelen);

/* ---- pylines.c ---- */
/* The line of the instruction at code-unit INDEX of a code object whose
   first line is FIRSTLINENO and line table TABLE (LEN bytes) in FORMAT.
   0 when the table gives none (or INDEX is past its end). */
unsigned py_line_of(enum py_line_format format, int firstlineno,
		    const uint8_t *table, size_t len, uint64_t index);

/* ---- pycode.c ---- */
/* The cached code object at ADDR, read (or read again: a reuse check)
   when needed; NULL when ADDR is no code object of PY's. */
const struct py_code *py_code_get(struct py_interp *py, uint64_t addr);
/* "module.function" for FUNCTION in FILE: the file's stem when FILE ends
   in .py, else FUNCTION alone. Into OUT (LEN bytes). */
void py_code_display_name(const char *function, const char *file, char *out,
			  size_t len);
/* Advance C's epoch when a millisecond passed since it last did: every
   cached code object is then checked again when next used. */
void py_code_cache_tick(struct py_code_cache *c);
/* Forget every cached code object. */
void py_code_cache_free(struct py_code_cache *c);
/* A copy of C (its strings duplicated). */
void py_code_cache_copy(struct py_code_cache *dst,
			const struct py_code_cache *src);

#endif
