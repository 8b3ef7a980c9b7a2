/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The snapshot engine: turns allocation events into the snapshots Massif
   would take (normal, detailed, peak; thinned by culling), each with its
   allocation tree already cut at --threshold, ready for a writer. */
#ifndef HT_SNAPSHOT_SNAPSHOT_H
#define HT_SNAPSHOT_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/event.h"
#include "common/options.h"
#include "common/symbolizer.h"

struct snap_engine;
struct snap_extra;

enum snap_kind {
	SNAP_EMPTY,    /* heap_tree=empty */
	SNAP_DETAILED, /* heap_tree=detailed */
	SNAP_PEAK,     /* heap_tree=peak: at most one, the peak at the end;
			  with --heap=no it has no tree and is written as
			  heap_tree=empty (culling still spares it) */
};

/* One printed tree line (before inline chains are expanded by the writer).
   A tree is an array in preorder: node 0 is the root, each node is followed
   by its N_CHILDREN subtrees in print order. */
struct snap_node {
	uint64_t pc;         /* frame address; 0 for the root and aggregates */
	uint64_t bytes;      /* useful bytes attributed to this node */
	uint32_t n_children; /* child lines that follow */
	uint32_t places;     /* 0 for a frame; for an aggregate ("below massif's
				threshold") line, the number of groups merged */
};

struct snap_snapshot {
	enum snap_kind kind;
	uint64_t time;
	uint64_t heap;   /* mem_heap_B: for detailed/peak, the tree's total */
	uint64_t extra;  /* mem_heap_extra_B */
	uint64_t stacks; /* mem_stacks_B */
	struct snap_node *tree; /* NULL for SNAP_EMPTY */
	size_t n_tree;
};

/* Counters of the engine's own work, for --stats and the benchmark. */
struct snap_stats {
	uint64_t events;
	uint64_t allocs, frees, reallocs, ignored;
	uint64_t snapshots_taken, detailed_taken, peaks_taken, cullings;
	uint64_t unknown_frees; /* frees/reallocs of blocks never seen */
	uint64_t reallocs_abandoned; /* REALLOC_BEGINs never completed */
	uint64_t live_blocks, tree_nodes;
	/* memcheck's "total heap usage": a realloc of a block counts as one
	   alloc and one free, and its new size as bytes allocated. */
	uint64_t usage_allocs, usage_frees, usage_bytes;
};

/* A new engine for one process. OPT and SYM are borrowed and must outlive
   the engine; EXTRA (from snap_extra_new) is owned by it. */
struct snap_engine *snap_engine_new(const struct ht_options *opt,
				    const struct ht_symbolizer *sym,
				    struct snap_extra *extra);
/* Free ENG and everything it owns; NULL is a no-op. */
void snap_engine_free(struct snap_engine *eng);
/* An independent copy of ENG (live blocks, tree, snapshots, clock), as a
   forked child starts from its parent's state. Reallocs other threads had
   begun never complete in the child: their blocks are put back. */
struct snap_engine *snap_engine_clone(const struct snap_engine *eng);

/* Make ENG name frames with SYM (borrowed) from now on: a clone made for a
   forked process takes its own process's symbolizer. */
void snap_engine_set_symbolizer(struct snap_engine *eng,
				const struct ht_symbolizer *sym);

/* Take the start-up snapshot at TIME (ignored with --time-unit=B: the
   bytes so far). Events fed before this are accounted but take no
   snapshot, except with --pages-as-heap, where Massif snapshots the
   start-up mappings (MMAP events with the single frame 0, fed before
   this, in address order) as they are recorded. */
void snap_engine_start(struct snap_engine *eng, uint64_t time);
/* Account one event and take the snapshots Massif would take for it.
   A REALLOC_BEGIN takes the block out of the address table until its
   thread's REALLOC of the same address, which then applies Massif's
   realloc rules to it; a REALLOC without BEGIN works on the table. A
   realloc that never completes (its thread's THREAD_EXIT or next BEGIN
   comes first) puts the block back at its old address, or frees it when
   that address has been handed out meanwhile. */
void snap_engine_feed(struct snap_engine *eng, const struct ht_event *ev);

/* The profile ends at TIME (as snap_engine_peek's): a last, detailed
   snapshot of the state then, unless the last snapshot taken shows it
   already. Not Massif's (it takes none at the end): for profiles that
   must hold every block live at the end (outside --massif-compat). */
void snap_engine_finish(struct snap_engine *eng, uint64_t time);
/* A detailed snapshot of ENG's state now into *OUT, as a detailed
   snapshot attempt would take it but leaving ENG untouched (its counters,
   clock and interval included): for a profile written on demand while the
   process runs. Its time is the bytes so far with --time-unit=B, else
   TIME (the session's clock now), or the last event's when later. With
   --heap=no it is SNAP_EMPTY. Free it with snap_snapshot_fini. */
void snap_engine_peek(const struct snap_engine *eng, uint64_t time,
		      struct snap_snapshot *out);
/* Free what S holds (its tree) and zero it. */
void snap_snapshot_fini(struct snap_snapshot *s);

/* Number of snapshots currently held (after culling). */
size_t snap_engine_count(const struct snap_engine *eng);
/* Snapshot I (0 <= I < count), in file order. Valid until the next feed. */
const struct snap_snapshot *snap_engine_snapshot(const struct snap_engine *eng,
						 size_t i);
/* Index of the SNAP_PEAK snapshot, or -1 when there is none. */
long snap_engine_peak_index(const struct snap_engine *eng);
/* The engine's counters. */
struct snap_stats snap_engine_stats(const struct snap_engine *eng);
/* The heap bytes requested and not freed now, as mem_heap_B counts them
   (ignored and unknown blocks aside). */
uint64_t snap_engine_heap(const struct snap_engine *eng);

/* A live heap block, for the exit-time leak check. */
struct snap_live_block {
	uint64_t addr;
	uint64_t size; /* bytes asked for */
	uint32_t site; /* its allocation stack (snap_engine_site_frames) */
};

/* Every live block of ENG (a realloc in flight counts as its old block)
   into *OUT (malloc'd, to be freed; NULL when none), in memcheck's stack
   age order (the order their stacks were first seen). Returns how many. */
size_t snap_engine_live_blocks(const struct snap_engine *eng,
			       struct snap_live_block **out);
/* What happened at one allocation site (one whole stack) over the run:
   heaptrack's figures (docs/sites-format.md). Sampled, every figure is an
   estimate, the counts (calls, blocks, temporary) rounded: those of the
   blocks the sampled ones stand for. */
struct snap_site {
	uint32_t site;        /* for snap_engine_site_frames */
	uint64_t calls;       /* allocating calls made from it */
	uint64_t allocated;   /* bytes they asked for */
	uint64_t peak;        /* its bytes live at the last peak snapshot (at
				 the end when there is none) */
	uint64_t peak_blocks; /* its blocks live then */
	uint64_t leaked;      /* its bytes live now */
	uint64_t leaked_blocks;
	uint64_t temporary;   /* its blocks freed by the next allocator call */
};

/* ENG's sites that made at least one call, in first-seen order, into
   *OUT (malloc'd, to be freed). Returns how many. */
size_t snap_engine_sites(const struct snap_engine *eng,
			 struct snap_site **out);

/* The sites thinned out of ENG so far (past its sites' maximum, those
   with no live block and the fewest bytes allocated were merged): their
   number into *N_SITES, their figures summed (SITE 0; nothing leaked). */
struct snap_site snap_engine_sites_thinned(const struct snap_engine *eng,
					   uint64_t *n_sites);

/* Keep at most about MAX sites in ENG (100,000 by default): past it, the
   least significant half is thinned out (snap_engine_sites_thinned). */
void snap_engine_set_sites_max(struct snap_engine *eng, uint32_t max);

/* Keep Massif's tree of ENG to about MAX nodes (1,000,000 by default):
   past it, the subtrees that hold no byte and no block are dropped. */
void snap_engine_set_tree_max(struct snap_engine *eng, size_t max);

/* The frames of SITE, innermost first (frame 0 inside the allocation
   function, then return addresses minus one), into OUT (room for MAX).
   Returns how many. */
unsigned snap_engine_site_frames(const struct snap_engine *eng, uint32_t site,
				 uint64_t *out, unsigned max);

#endif
