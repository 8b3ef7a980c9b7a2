/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the engine's unit tests share: a fake program (code addresses with
   the names a table symbolizer gives them), an engine set up on it, and
   events fed from hand-written stacks. */
#ifndef HT_TESTS_ENGINE_FIXTURE_H
#define HT_TESTS_ENGINE_FIXTURE_H

#include <stdint.h>

#include "common/options.h"
#include "snapshot/extra.h"
#include "snapshot/snapshot.h"
#include "symbols/table.h"

/* Code addresses of the fake program: the allocation functions' entries
   (frame 0 of a stack), call sites in named functions, and the start-up
   code below main. */
enum {
	PC_MALLOC = 0x1000,
	PC_CALLOC = 0x1100,
	PC_REALLOC = 0x1200,
	PC_XMALLOC = 0x2000,
	PC_F = 0x3000,
	PC_G = 0x3100,
	PC_H = 0x3200,
	PC_MAIN_A = 0x4000,
	PC_MAIN_B = 0x4010,
	PC_MAIN_C = 0x4020,
	PC_MAIN_D = 0x4030,
	PC_IGN = 0x5000,
	PC_LIBC_START = 0x6000,
};

struct fixture {
	struct ht_options opt;
	struct sym_table *table;
	struct ht_symbolizer sym;
	struct snap_engine *eng;
	uint64_t next_addr;	/* for tests that pick no addresses */
};

/* A stack, innermost first (frame 0 inside the allocation function). */
struct stack {
	unsigned n;
	uint64_t pcs[8];
};

/* The stacks several tests use (fixture.c says which is which). */
extern const struct stack S1, S2, S3, R1, R2, SIGN, SONLY;

/* Sets FX up: options --time-unit=B --heap-admin=0 then OPTS (NULL-ended,
   may be NULL; a bad one exits with status 99, a harness error), the fake program's
   names, an engine with extra-bytes model KIND, started at time 0.  With
   SNAP_EXTRA_ESTIMATE and sizes multiple of 16 no block has extra bytes:
   a snapshot's total is its useful heap. */
void fixture_init(struct fixture *fx, const char *opts[],
		  enum snap_extra_kind kind);

/* Frees all FX holds. */
void fixture_fini(struct fixture *fx);

/* Feeds one event of KIND from thread TID with stack ST (NULL: none);
   fn is malloc, free or realloc after KIND. */
void fixture_event(struct fixture *fx, enum ht_event_kind kind, uint32_t tid,
		   uint64_t addr, uint64_t old, uint64_t size,
		   const struct stack *st);

/* malloc(SIZE) returning ADDR at stack ST, thread 1. */
void fixture_alloc(struct fixture *fx, uint64_t addr, uint64_t size,
		   const struct stack *st);

/* free(ADDR), thread 1, from S2. */
void fixture_release(struct fixture *fx, uint64_t addr);

/* realloc(OLD, SIZE) returning ADDR at stack ST, thread 1. */
void fixture_resize(struct fixture *fx, uint64_t old, uint64_t addr,
		    uint64_t size, const struct stack *st);

#endif
