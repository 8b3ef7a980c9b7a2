/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Leak classification in memcheck's terms (Valgrind 3.19's leak search),
   done from outside the process: the caller gives the live blocks, the
   root ranges to scan and a way to read the target's memory; each block
   gets memcheck's kind (definitely, indirectly, possibly lost, still
   reachable), with the clique sizes and the LEAK SUMMARY totals. Pure
   computation: no ptrace, no options, no report here. Words are 8 bytes,
   little-endian, 8-aligned (x86-64, aarch64). */
#ifndef HT_SNAPSHOT_LEAK_H
#define HT_SNAPSHOT_LEAK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* memcheck's Reachedness, in its order (Reachable < Possible <
   IndirectLeak < Unreached). */
enum leak_kind {
	LEAK_REACHABLE,
	LEAK_POSSIBLE,
	LEAK_INDIRECT,
	LEAK_DEFINITE,
	LEAK_N_KINDS
};

/* memcheck's LeakCheckHeuristic. */
enum leak_heuristic {
	LEAK_HEUR_NONE,
	LEAK_HEUR_STDSTRING,
	LEAK_HEUR_LENGTH64,
	LEAK_HEUR_NEWARRAY,
	LEAK_HEUR_MULTIPLEINHERITANCE,
	LEAK_N_HEURISTICS
};

/* A set of heuristics, for leak_input.heuristics. */
#define LEAK_HEUR_BIT(h) (1u << (h))
/* --leak-check-heuristics=all, memcheck 3.19's default. */
#define LEAK_HEUR_ALL                                                 \
	(LEAK_HEUR_BIT(LEAK_HEUR_STDSTRING) |                         \
	 LEAK_HEUR_BIT(LEAK_HEUR_LENGTH64) |                          \
	 LEAK_HEUR_BIT(LEAK_HEUR_NEWARRAY) |                          \
	 LEAK_HEUR_BIT(LEAK_HEUR_MULTIPLEINHERITANCE))

#define LEAK_NO_BLOCK ((size_t)-1)

/* One live heap block. addr, size and id are the caller's; the rest is
   written by leak_classify. Blocks must not overlap. */
struct leak_block {
	uint64_t addr;
	uint64_t size;
	void *id; /* opaque: the caller's block (its allocation stack...) */

	enum leak_kind kind;
	/* The heuristic through which the block was last reached by an
	   interior pointer (memcheck's ex->heuristic), else NONE. */
	enum leak_heuristic heuristic;
	/* DEFINITE only: bytes and blocks of its clique, itself excluded. */
	uint64_t indirect_bytes;
	uint64_t indirect_blocks;
	/* INDIRECT only: index (in the caller's array) of the block whose
	   scan found it (memcheck's IorC.clique), else LEAK_NO_BLOCK. */
	size_t parent;
};

/* A range of the target's memory scanned conservatively. */
struct leak_root {
	uint64_t start;
	uint64_t len;
};

/* Reads up to LEN bytes at ADDR of the target into BUF: returns how many
   were read from ADDR on (fewer when an unreadable page follows), or -1
   when none can be. */
typedef ssize_t (*leak_read_fn)(void *ctx, uint64_t addr, void *buf,
				size_t len);
/* Where the caller holds a copy of the target's [ADDR, ADDR + LEN):
   a pointer to its first byte, or NULL when it holds no copy of all of
   it (then LEAK_READ_FN is asked). Valid until leak_classify returns. */
typedef const void *(*leak_view_fn)(void *ctx, uint64_t addr, size_t len);
/* True when ADDR (8-aligned, above page 0) looks like a vtable (memcheck:
   in a readable file mapping, with 2 non-null pointers into executable
   file mappings among its first 20 words). */
typedef int (*leak_vtable_fn)(void *ctx, uint64_t addr);

/* True when P, found in a root (memory or register) and pointing inside
   block [LO, LO + SIZE) but not at its start, is the allocator's own
   bookkeeping rather than the program's pointer (glibc's arena points at
   the free chunk after a block, whose header overlaps the block's last
   bytes): it is then not a reference at all. */
typedef int (*leak_allocator_fn)(void *ctx, uint64_t p, uint64_t lo,
				 uint64_t size);

struct leak_input {
	struct leak_block *blocks; /* any order; results written in place */
	size_t nblocks;
	const struct leak_root *roots; /* memory roots, e.g. writable maps */
	size_t nroots;
	const uint64_t *regs; /* register values, each one root word */
	size_t nregs;
	leak_read_fn read;
	leak_view_fn view; /* NULL: everything through READ */
	leak_vtable_fn is_vtable; /* NULL: multipleinheritance never fires */
	leak_allocator_fn allocator_pointer; /* NULL: none such */
	void *ctx; /* passed to read and is_vtable */
	unsigned heuristics; /* set of LEAK_HEUR_BIT; LEAK_HEUR_ALL default */
};

/* memcheck's LEAK SUMMARY counts, plus what it prints of the
   "of which reachable via heuristic" lines. */
struct leak_totals {
	uint64_t bytes[LEAK_N_KINDS];
	uint64_t blocks[LEAK_N_KINDS];
	uint64_t heur_bytes[LEAK_N_HEURISTICS];
	uint64_t heur_blocks[LEAK_N_HEURISTICS];
	uint64_t scanned_bytes;    /* bytes of words read (memcheck's Checked) */
	uint64_t unreadable_bytes; /* root or block bytes that could not be */
};

/* Classifies every block of IN as memcheck 3.19 would, writing each
   block's result fields and, when TOTALS is not NULL, the summary. */
void leak_classify(const struct leak_input *in, struct leak_totals *totals);

/* memcheck's name of KIND as its summary prints it ("definitely lost"). */
const char *leak_kind_name(enum leak_kind kind);

/* memcheck's name of heuristic H ("stdstring", "none"...). */
const char *leak_heuristic_name(enum leak_heuristic h);

#endif
