/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Structures shared by the snapshot engine's files (tree, sites, stack
   filter, culling, blocks, pages, stacks), which engine.c puts together;
   nothing outside snapshot/ includes this. The engine's own state is
   engine.c's alone. */
#ifndef HT_SNAPSHOT_SNAP_PRIV_H
#define HT_SNAPSHOT_SNAP_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "common/u64map.h"
#include "snapshot.h"
#include "extra.h"

/* ---- Allocation tree (xtree.c) ----
   Massif's tree is a table from filtered stack to byte count whose entries
   are never removed. We store it as a trie of frames: node 0 is the root, a
   node's SELF is the bytes of the entry whose path ends there, and a group
   printed at some level is exactly a trie node, sized by its subtree's
   total. Parents are always created before their children, so ids grow
   with depth along every path, which lets totals be summed in one
   backward pass. Totals are kept between renderings (xtree.c says when
   they are summed afresh and when only the paths of the nodes charged
   since are updated). */
struct xtree_node {
	uint64_t pc;
	int64_t self;          /* bytes of the entry ending here (may be 0) */
	int64_t total;         /* bytes of the subtree's entries, as of the
				  last rendering */
	int64_t synced;        /* SELF as of the last rendering */
	uint32_t parent;
	uint32_t first_child;  /* 0: none (the root is never a child) */
	uint32_t next_sibling; /* 0: none */
	bool dirty;            /* charged since the last rendering: listed in
				  the tree's DIRTY */
};

struct xtree {
	struct xtree_node *nodes;
	size_t n_nodes, cap_nodes;
	uint32_t *index;       /* open-addressed (parent, pc) -> node id; 0 empty */
	size_t cap_index;
	uint32_t *dirty;       /* the nodes charged since the last rendering */
	size_t n_dirty, cap_dirty;
};

void xtree_init(struct xtree *t);
void xtree_fini(struct xtree *t);
void xtree_copy(struct xtree *dst, const struct xtree *src);
/* The node for PATH (N frames, innermost first: PATH[0], the allocation
   site, hangs off the root), created with its ancestors if absent. */
uint32_t xtree_insert(struct xtree *t, const uint64_t *path, unsigned n);
/* Add BYTES (negative: take them) to the entry of node ID. */
void xtree_charge(struct xtree *t, uint32_t id, int64_t bytes);
/* Build the printed form of the tree as Massif would print it now for a
   snapshot with EXTRA and STACKS bytes and THRESHOLD percent: preorder
   nodes with aggregates, into *OUT (malloc'd) and *N_OUT. Returns the
   root's total (mem_heap_B of a detailed snapshot). Only T's kept totals
   change. */
uint64_t xtree_render(struct xtree *t, uint64_t extra, uint64_t stacks,
		      double threshold, struct snap_node **out, size_t *n_out);

/* Drop T's subtrees that hold nothing (every entry at zero bytes) and
   no leaf KEEP marks (by id: the leaves blocks are charged to); the new
   id of every old node (0: dropped), malloc'd, for the caller to
   renumber the leaves it holds. */
uint32_t *xtree_thin(struct xtree *t, const bool *keep);
/* Tree nodes kept before the empty subtrees are thinned out (engine.c). */
#define XTREE_MAX_DEFAULT 1000000u

/* ---- Allocation sites (sites.c) ---- */
/* One frame of the site trie: its caller's node is PARENT (0: the
   outermost frame). */
struct site_node {
	uint64_t pc;
	uint32_t parent;
	uint32_t age;  /* nonzero when a whole stack ends here: its rank in
			  first-seen order (memcheck's stack age) */
};

/* What happened at one site over the run (docs/sites-format.md). */
struct site_stats {
	uint32_t node;           /* the site's node */
	uint32_t peak_epoch;     /* PEAK_LIVE is as of this peak */
	uint64_t calls, allocated, temporary;
	double calls_est;        /* sampled: the calls the samples stand for */
	uint64_t live, live_blocks;
	uint64_t peak_live;      /* LIVE when peak PEAK_EPOCH was taken */
	uint64_t peak_live_blocks; /* LIVE_BLOCKS then */
	/* The blocks those stand for (sampled: each block weight / size of
	   them; exact: the counts themselves). */
	double temporary_est, live_blocks_est, peak_live_blocks_est;
};

/* Sites merged away by thinning (site_table_thin): their figures summed. */
struct site_thinned {
	uint64_t sites, calls, allocated, temporary;
	uint64_t peak;           /* their live bytes at peak PEAK_EPOCH */
	uint64_t peak_blocks;    /* and live blocks */
	double calls_est;        /* sampled: the calls they stand for */
	double temporary_est, peak_blocks_est; /* the blocks they stand for */
	uint32_t peak_epoch;
};
/* Sites kept before the least significant are thinned out (engine.c). */
#define SITES_MAX_DEFAULT 100000u
struct site_table {
	struct site_node *nodes; /* node 0 is the root */
	size_t n, cap;
	uint32_t *index;         /* open-addressed (parent, pc) -> node; 0 empty */
	size_t index_mask;
	uint32_t n_sites;        /* stacks seen so far */
	struct site_stats *stats; /* by age, 1..n_sites */
	size_t cap_stats;
	uint32_t peak_epoch;     /* peaks taken so far */
	struct site_thinned thinned;
	uint32_t thin_at;        /* N_SITES above which to thin (0: never) */
};

void site_table_init(struct site_table *st);
void site_table_fini(struct site_table *st);
/* Make DST (uninitialised) an independent copy of SRC. */
void site_table_copy(struct site_table *dst, const struct site_table *src);
/* The site of the stack PCS (N frames, innermost first), created if new;
   0 when N is 0. */
uint32_t site_table_intern(struct site_table *st, const uint64_t *pcs,
			   unsigned n);
/* SITE's frames, innermost first, into OUT (room for MAX); their number. */
unsigned site_table_frames(const struct site_table *st, uint32_t site,
			   uint64_t *out, unsigned max);
/* SITE's rank in first-seen order (1 for the first stack), 0 if none. */
uint32_t site_table_age(const struct site_table *st, uint32_t site);
/* A call from SITE allocated BYTES in a block standing for BLOCKS blocks
   (1 in exact mode), live from now on. */
void site_table_alloc(struct site_table *st, uint32_t site, uint64_t bytes,
		      double blocks);
/* SITE's allocation just counted stands for CALLS calls (sampled; 0 in
   exact mode, where nothing changes). */
void site_table_estimate(struct site_table *st, uint32_t site, double calls);
/* A block of SITE holding BYTES and standing for BLOCKS blocks (as it was
   allocated) was released. */
void site_table_release(struct site_table *st, uint32_t site,
			uint64_t bytes, double blocks);
/* A block of SITE standing for BLOCKS blocks was freed by the next
   allocator call after its own. */
void site_table_temporary(struct site_table *st, uint32_t site,
			  double blocks);
/* A peak snapshot is taken now: every site's live bytes are its peak
   bytes until the next one. */
void site_table_peak(struct site_table *st);
/* S's live bytes at the last peak (at the end when none was taken). */
uint64_t site_table_peak_bytes(const struct site_table *st,
			       const struct site_stats *s);
/* Thin ST down to KEEP sites, as Massif culls snapshots: the sites with
   no live block and the fewest bytes allocated are merged into
   ST->thinned, and the frames only they used dropped. Returns the new id
   of every old node (0: dropped), malloc'd, for the caller to renumber
   the site ids it holds (blocks; the stack filter's memo is to be
   forgotten); NULL when nothing could be dropped. The next thinning is
   due KEEP sites from now (ST->thin_at). */
uint32_t *site_table_thin(struct site_table *st, uint32_t keep);
/* The live bytes at the last peak of the sites thinned out, their live
   blocks then into *BLOCKS and the blocks those stand for into *EST. */
uint64_t site_table_thinned_peak(const struct site_table *st,
				 uint64_t *blocks, double *est);
/* S's live blocks at the last peak (at the end when none was taken), and
   the blocks they stand for into *EST. */
uint64_t site_table_peak_blocks(const struct site_table *st,
				const struct site_stats *s, double *est);

/* ---- Stack filter (stackfilter.c) ---- */
/* One remembered stack: the raw frames POOL[OFF..OFF+N) (frame 0 left
   out: the filter drops it) led to tree node LEAF (0: ignored). */
struct stack_memo_slot {
	uint64_t hash;
	uint32_t off;
	uint32_t n;    /* 0: empty slot */
	uint32_t leaf;
	uint32_t site; /* the whole stack's site (sites.c) */
};

struct stack_filter {
	const struct ht_options *opt;
	const struct ht_symbolizer *sym;
	struct u64map pc_class; /* pc -> PC_* bits, each address classified once */
	uint64_t *path;         /* scratch for a filtered stack, opt->depth */
	/* The memo: raw stack -> leaf, open-addressed by the stack's hash. */
	struct stack_memo_slot *memo;
	size_t memo_mask, memo_count;
	uint64_t *pool;         /* the remembered stacks' frames */
	size_t n_pool, cap_pool;
};

void stack_filter_init(struct stack_filter *f, const struct ht_options *opt,
		       const struct ht_symbolizer *sym);
void stack_filter_fini(struct stack_filter *f);
void stack_filter_copy(struct stack_filter *dst, const struct stack_filter *src);
/* Massif's capture filter (§5.2): drop PCS[0] when DROP_FIRST, strip the
   leading run of alloc-fns, apply the ignore test, cut below main and at
   --depth. Writes the kept frames innermost first into OUT (room for
   opt->depth) and returns how many; 0 means the allocation is ignored. */
unsigned stack_filter_apply(struct stack_filter *f, const uint64_t *pcs,
			    unsigned npcs, bool drop_first, uint64_t *out);
/* The node of T charged for an allocation made from the raw stack PCS
   (NPCS frames, frame 0 inside the allocation function), created with its
   ancestors if absent; 0 when the filter ignores the allocation. Same
   result as stack_filter_apply then xtree_insert, remembered per distinct
   stack. The stack's site in SITES into *SITE. T and SITES must be the
   only ones used with F. */
uint32_t stack_filter_leaf(struct stack_filter *f, struct xtree *t,
			   struct site_table *sites, const uint64_t *pcs,
			   unsigned npcs, uint32_t *site);
/* Forget every stack remembered (their sites were renumbered). */
void stack_filter_forget(struct stack_filter *f);
/* The same for a page-level call (--pages-as-heap): frame 0, the syscall
   wrapper's, is kept (§6). T and F must not be used with
   stack_filter_leaf too. */
uint32_t stack_filter_leaf_whole(struct stack_filter *f, struct xtree *t,
				 const uint64_t *pcs, unsigned npcs);
/* ---- Snapshots and culling (cull.c) ---- */
/* Free the tree of S and mark the slot unused. */
void snapshot_clear(struct snap_snapshot *s);
/* Massif's cull: remove floor(M/2) snapshots of SNAPS[0..*N) one at a time,
   each the one with the smallest time span to its neighbours, compact the
   rest and return the new minimum interval (truncated to 32 bits as
   Massif's is). */
uint64_t snapshots_cull(struct snap_snapshot *snaps, size_t *n, unsigned max);

/* ---- Block table (blocks.c) ---- */
/* A live block, stored in the table itself: 32 bytes, two to a cache
   line. Its extra bytes are not kept but asked of the model from the
   cookie (block_extra): the table is most of the engine's memory. An empty
   slot has ADDR 0 (no allocator returns NULL for a block); a block is
   ignored (--ignore-fn, or no frame outside the allocator) when LEAF is
   0. */
struct block {
	uint64_t addr;
	uint64_t req;
	uint64_t cookie;  /* the extra-bytes model's (snap_extra_block) */
	uint32_t leaf;    /* tree node charged with REQ; 0 when ignored */
	uint32_t site;    /* its allocation stack (sites.c); 0: none */
};

/* Open addressing with linear probing and backward-shift deletion (no
   tombstones): the table is as large as the most blocks ever live at once,
   whatever the number of events. */
struct block_table {
	struct block *slots;
	size_t mask;      /* capacity - 1; the capacity is a power of two */
	unsigned shift;   /* 64 - log2(capacity), for the hash */
	size_t count;
	bool mapped;      /* slots from mmap (large tables), else malloc */
};

void block_table_init(struct block_table *bt);
void block_table_fini(struct block_table *bt);
/* Make DST (uninitialised) an independent copy of SRC. */
void block_table_copy(struct block_table *dst, const struct block_table *src);
/* The block at ADDR, or NULL. Valid until the next insert or take. */
struct block *block_table_find(const struct block_table *bt, uint64_t addr);
/* Store a copy of B (B->addr nonzero, not in the table yet). */
void block_table_insert(struct block_table *bt, const struct block *b);
/* Remove the block at ADDR into *OUT; false when there is none. */
bool block_table_take(struct block_table *bt, uint64_t addr, struct block *out);
/* Every block's site S becomes REMAP[S] (site_table_thin's map). */
void block_table_remap_sites(struct block_table *bt, const uint32_t *remap);
/* Mark in KEEP (by tree node id) every block's leaf. */
void block_table_mark_leaves(const struct block_table *bt, bool *keep);
/* Every block's leaf L becomes REMAP[L] (xtree_thin's map). */
void block_table_remap_leaves(struct block_table *bt, const uint32_t *remap);

/* ---- Page table (pagetable.c) ---- */
/* Pages [FIRST, END) owned by tree node LEAF (0: an ignored stack). */
struct page_run {
	uint64_t first, end;
	uint32_t leaf;
};

/* Runs sorted by page, not overlapping, equal-owner neighbours joined. */
struct page_layer {
	struct page_run *runs;
	size_t n, cap;
};

/* Layer k holds every page's k-th owner (Massif's double counting). */
struct page_table {
	struct page_layer *layers;
	size_t n_layers, cap_layers;
};

/* Told of N pages from FIRST, owned by LEAF, leaving the table. */
typedef void (*page_table_fn)(void *ctx, uint64_t first, uint64_t n,
			      uint32_t leaf);

void page_table_init(struct page_table *pt);
void page_table_fini(struct page_table *pt);
/* Make DST (uninitialised) an independent copy of SRC. */
void page_table_copy(struct page_table *dst, const struct page_table *src);
/* Give each of the N pages from FIRST one more owner, LEAF, on top of
   those it has (Massif's record of a page it may already hold). */
void page_table_push(struct page_table *pt, uint64_t first, uint64_t n,
		     uint32_t leaf);
/* Take the top owner off each of the N pages from FIRST that has one,
   telling GONE (if not NULL) of each piece; unknown pages are skipped. */
void page_table_pop(struct page_table *pt, uint64_t first, uint64_t n,
		    page_table_fn gone, void *ctx);
/* Make LEAF the only owner of the N pages from FIRST, telling GONE (if not
   NULL) of the pieces that had one. Single-owner tables only. */
void page_table_replace(struct page_table *pt, uint64_t first, uint64_t n,
			uint32_t leaf, page_table_fn gone, void *ctx);
/* Whether PAGE is recorded; if so its top owner in *LEAF. */
bool page_table_top(const struct page_table *pt, uint64_t page,
		    uint32_t *leaf);
/* Pages among the N from FIRST that have a counted owner (LEAF != 0), in
   a single-owner table. */
uint64_t page_table_count_owned(const struct page_table *pt, uint64_t first,
				uint64_t n);

/* ---- What the page and stack rules need of the engine ----
   pages.c and stacks.c sit below engine.c, which feeds them: they change
   the engine's counters and attempt its snapshots through these calls, in
   the order Massif's rules take those steps. */
struct engine_hooks {
	void *ctx; /* the engine */
	void (*attempt_normal)(void *ctx);
	void (*attempt_peak)(void *ctx);
	void (*account_heap)(void *ctx, uint32_t leaf, int64_t d);
	void (*account_stacks)(void *ctx, int64_t d);
	uint32_t (*page_leaf)(void *ctx, const struct ht_event *ev);
};

/* Massif's normal snapshot attempt (§4.2). */
static inline void
engine_attempt_normal(const struct engine_hooks *h)
{
	h->attempt_normal(h->ctx);
}

/* Massif's peak check before a deallocation (§4.3). */
static inline void
engine_attempt_peak(const struct engine_hooks *h)
{
	h->attempt_peak(h->ctx);
}

/* Add D useful bytes to the heap counter and to tree node LEAF, and |D| to
   the B-time clock. */
static inline void
engine_account_heap(const struct engine_hooks *h, uint32_t leaf, int64_t d)
{
	h->account_heap(h->ctx, leaf, d);
}

/* Add D bytes to the stacks counter, and |D| to the B-time clock. */
static inline void
engine_account_stacks(const struct engine_hooks *h, int64_t d)
{
	h->account_stacks(h->ctx, d);
}

/* The tree node charged for the page-level call EV, created now with its
   ancestors (so not before a peak check that must not show it); 0 when
   the stack filter ignores the call. */
static inline uint32_t
engine_page_leaf(const struct engine_hooks *h, const struct ht_event *ev)
{
	return h->page_leaf(h->ctx, ev);
}

/* ---- Pages (pages.c) ---- */
/* --pages-as-heap: apply the page-level call EV (MMAP, MUNMAP, MREMAP,
   BRK) to the page owners PT as Massif does (COMPAT: --massif-compat), or
   exactly, counting through ENG. */
void pages_feed(struct page_table *pt, bool compat, const struct ht_event *ev,
		const struct engine_hooks *eng);

/* ---- Stacks (stacks.c) ---- */
/* One thread's stack as --stacks=yes counts it. */
struct thread_stack {
	uint32_t tid;
	uint64_t base;    /* the first sample: counted as zero */
	uint64_t counted; /* bytes of S this thread accounts for */
};

struct stack_table {
	struct thread_stack *v;
	size_t n, cap;
};

/* Make DST (uninitialised) an independent copy of SRC. */
void stack_table_copy(struct stack_table *dst, const struct stack_table *src);
/* --stacks=yes: thread TID's stack in T now holds SIZE bytes, counted
   through ENG once STARTED (the engine's start-up snapshot is taken). */
void stacks_sample(struct stack_table *t, uint32_t tid, uint64_t size,
		   bool started, const struct engine_hooks *eng);
/* Thread TID has ended: its stack in T is released, through ENG. */
void stacks_thread_exit(struct stack_table *t, uint32_t tid,
			const struct engine_hooks *eng);

#endif
