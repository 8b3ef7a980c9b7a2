/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SNAP_EXTRA_VALGRIND: an emulation of Valgrind 3.19's client arena on
   amd64 (its free lists, splitting, merging, superblocks and aligned
   allocation) and of Massif's realloc on top of it, so that every block gets
   the slop real Massif would charge. The arena lives in a simulated address
   space; docs: massif-semantics.md §2.3, §2.4 and Appendix A. */
#include "snapshot/extra.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "snapshot/extra_priv.h"

/* Block layout: a size word and an 8-byte red zone before the payload, the
   same after it. The payload starts 16 bytes into the block. */
#define BLOCK_OVERHEAD	32
#define PAYLOAD_OFFSET	16
#define MIN_BLOCK	32	/* smallest block worth splitting off */
#define PAYLOAD_ALIGN	16

#define N_LISTS		112
#define LAST_FLOOR	9890	/* smallest payload/16 of the last list */
#define MAX_PROBES	100	/* per list, except the last one */
#define SWIZZLE_STEPS	5

#define SB_HEADER	32
#define SB_MIN		((uint64_t)4 << 20)
#define SB_UNSPLITTABLE	(SB_MIN + 1)
#define PAGE		4096

/* The simulated address space. Superblocks go first-fit, lowest address
   first, as Valgrind's address-space manager places them: a freed range is
   reused by the next superblock that fits in it. The numbers are those of
   a C program linked only against libc under Valgrind 3.19 on Debian 12:
   the first superblock at 0x4a3a000, just above the shared objects, and the
   massif-amd64-linux image in the way at 0x58000000. Other programs start
   elsewhere, which only matters for alignments above a page. Mappings the
   target makes itself are not seen, so they are not avoided. Superblocks
   must end below 2^47, the top of user space; beyond, allocation fails. */
#define SPACE_BASE	0x4a3a000ull
#define RESERVED_START	0x58000000ull
#define RESERVED_END	0x58c2d000ull
#define SPACE_END	(1ull << 47)

#define NIL UINT32_MAX

/* A block of the arena, free or in use. Records are addressed by index; an
   index plus one is the cookie of a live block. */
struct blk {
	uint64_t addr;        /* first byte of the block (payload - 16) */
	uint64_t size;        /* whole block, overhead included */
	uint32_t next, prev;  /* free-list ring when free; next also chains
				 spare records */
	uint32_t left, right; /* physical neighbours in the superblock */
	uint32_t sb;
	bool inuse;
	uint8_t list;         /* the free list it is on, when free */
};

struct sblk {
	uint64_t addr, size;
	uint32_t first;       /* the record of the block at addr + 32: stable,
				 since splits and merges keep the lower
				 record; chains spare slots */
	bool unsplittable;    /* one block, unmapped when it is freed */
};

struct arena {
	uint32_t head[N_LISTS];
	uint64_t nonempty[2]; /* bit L: head[L] != NIL; lets a search skip
				 empty lists without looking at each */
	struct blk *blk;
	size_t n_blk, cap_blk;
	uint32_t spare_blk;
	uint64_t live_blk;
	struct sblk *sb;
	size_t n_sb, cap_sb;
	uint32_t spare_sb;
	uint64_t live_sb;
	uint32_t *order;      /* mapped superblocks by increasing address */
	size_t n_order, cap_order;
	uint32_t deferred;    /* wholly free superblock kept for one more
				 round, or NIL */
	uint8_t list_by_quad[LAST_FLOOR / 4 + 1]; /* list of payload/16 = 4k,
						     for 4k >= 64 */
};

/* Smallest payload/16 of free lists 64..111; below 64 the list is
   payload/16 itself. */
static const uint16_t list_floor[N_LISTS - 64] = {
	64, 67, 70, 74, 77, 81, 85, 90, 94, 99,
	104, 109, 114, 120, 126, 133, 139, 153, 169, 185,
	204, 224, 247, 272, 299, 329, 362, 398, 438, 482,
	530, 583, 641, 770, 924, 1109, 1331, 1597, 1916, 2300,
	2760, 3312, 3974, 4769, 5723, 6868, 8241, 9890,
};

/* The list of U = payload/16 >= 64 by binary search; for filling the
   arena's table of lists by groups of four (struct arena). */
static unsigned
list_of_units(uint64_t u)
{
	unsigned lo = 0, hi = N_LISTS - 64;

	/* The last floor <= u. */
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;

		if (list_floor[mid] <= u)
			lo = mid;
		else
			hi = mid;
	}
	return 64 + lo;
}

/* Every malloc, free and merge asks this, and a binary search on random
   sizes mispredicts at each step, so it is a table look-up: the list of
   the first of U's group of four, then at most one step, since two floors
   are never less than three apart. */
static unsigned
list_of_payload(const struct arena *a, uint64_t psz)
{
	uint64_t u = psz / PAYLOAD_ALIGN;
	unsigned l;

	if (u < 64)
		return (unsigned)u;
	if (u >= LAST_FLOOR)
		return N_LISTS - 1;
	l = a->list_by_quad[u / 4];
	if (list_floor[l + 1 - 64] <= u)
		l++;
	return l;
}

/* Records and superblock slots. Both arrays only grow, so the footprint is
   the peak number of blocks (live plus free fragments), never the number
   of events. Pointers into them die at the next new_blk/new_sb. */

static uint32_t
new_blk(struct arena *a)
{
	uint32_t i = a->spare_blk;

	if (i != NIL) {
		a->spare_blk = a->blk[i].next;
	} else {
		ht_xgrow((void **)&a->blk, &a->cap_blk, a->n_blk + 1,
			 sizeof(*a->blk));
		i = (uint32_t)a->n_blk++;
	}
	a->live_blk++;
	return i;
}

static void
free_blk(struct arena *a, uint32_t i)
{
	a->blk[i].inuse = false;
	a->blk[i].size = 0;
	a->blk[i].next = a->spare_blk;
	a->spare_blk = i;
	a->live_blk--;
}

static uint32_t
new_sb(struct arena *a)
{
	uint32_t s = a->spare_sb;

	if (s != NIL) {
		a->spare_sb = a->sb[s].first;
	} else {
		ht_xgrow((void **)&a->sb, &a->cap_sb, a->n_sb + 1,
			 sizeof(*a->sb));
		s = (uint32_t)a->n_sb++;
	}
	a->live_sb++;
	return s;
}

static void
free_sb(struct arena *a, uint32_t s)
{
	a->sb[s].size = 0;
	a->sb[s].first = a->spare_sb;
	a->spare_sb = s;
	a->live_sb--;
}

/* Free lists: circular, with a head. A new block goes just before the
   head, i.e. at the tail. */
static void
list_insert(struct arena *a, uint32_t i)
{
	unsigned l = list_of_payload(a, a->blk[i].size - BLOCK_OVERHEAD);
	uint32_t h = a->head[l];

	a->blk[i].list = (uint8_t)l;
	if (h == NIL) {
		a->blk[i].next = a->blk[i].prev = i;
		a->head[l] = i;
		a->nonempty[l / 64] |= (uint64_t)1 << (l % 64);
		return;
	}
	uint32_t t = a->blk[h].prev;

	a->blk[t].next = i;
	a->blk[h].prev = i;
	a->blk[i].next = h;
	a->blk[i].prev = t;
}

/* After an unlink the head moves to the lowest-addressed block within a few
   steps of it: this is what keeps Valgrind's first-fit walk mostly
   address-ordered, so the emulation must do exactly the same. */
static void
list_swizzle(struct arena *a, unsigned l)
{
	uint32_t best = a->head[l], fwd = best, back = best;
	uint64_t best_addr = a->blk[best].addr;

	for (int k = 0; k < SWIZZLE_STEPS; k++) {
		fwd = a->blk[fwd].next;
		back = a->blk[back].prev;
		if (a->blk[fwd].addr < best_addr) {
			best = fwd;
			best_addr = a->blk[fwd].addr;
		}
		if (a->blk[back].addr < best_addr) {
			best = back;
			best_addr = a->blk[back].addr;
		}
	}
	a->head[l] = best;
}

/* The first non-empty list from L on, or N_LISTS. */
static unsigned
next_list(const struct arena *a, unsigned l)
{
	while (l < N_LISTS) {
		uint64_t w = a->nonempty[l / 64] >> (l % 64);

		if (w)
			return l + (unsigned)__builtin_ctzll(w);
		l = (l / 64 + 1) * 64;
	}
	return N_LISTS;
}

static void
list_unlink(struct arena *a, uint32_t i)
{
	unsigned l = a->blk[i].list;
	uint32_t p = a->blk[i].prev, n = a->blk[i].next;

	if (p == i) {
		a->head[l] = NIL;
		a->nonempty[l / 64] &= ~((uint64_t)1 << (l % 64));
		return;
	}
	a->head[l] = p;
	a->blk[p].next = n;
	a->blk[n].prev = p;
	list_swizzle(a, l);
}

/* The address space. */

/* The lowest address >= LO where SIZE bytes fit below HI without touching
   the reserved range; false when there is none. */
static bool
fit_in_gap(uint64_t lo, uint64_t hi, uint64_t size, uint64_t *at)
{
	if (lo < RESERVED_END && hi > RESERVED_START &&
	    (lo >= RESERVED_START || RESERVED_START - lo < size))
		lo = RESERVED_END;
	if (lo >= hi || hi - lo < size)
		return false;
	*at = lo;
	return true;
}

/* Map superblock S (size set) at the lowest free address. */
static bool
space_map(struct arena *a, uint32_t s)
{
	uint64_t lo = SPACE_BASE, at = 0;
	size_t k;

	for (k = 0; k <= a->n_order; k++) {
		uint64_t hi = k < a->n_order ? a->sb[a->order[k]].addr :
					       SPACE_END;

		if (fit_in_gap(lo, hi, a->sb[s].size, &at))
			break;
		if (k < a->n_order)
			lo = hi + a->sb[a->order[k]].size;
	}
	if (k > a->n_order)
		return false;
	ht_xgrow((void **)&a->order, &a->cap_order, a->n_order + 1,
		 sizeof(*a->order));
	memmove(a->order + k + 1, a->order + k,
		(a->n_order - k) * sizeof(*a->order));
	a->order[k] = s;
	a->n_order++;
	a->sb[s].addr = at;
	return true;
}

static void
space_unmap(struct arena *a, uint32_t s)
{
	size_t lo = 0, hi = a->n_order;

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (a->sb[a->order[mid]].addr <= a->sb[s].addr)
			lo = mid;
		else
			hi = mid;
	}
	memmove(a->order + lo, a->order + lo + 1,
		(a->n_order - lo - 1) * sizeof(*a->order));
	a->n_order--;
}

/* Unmap superblock S, whose single block is not on any free list. */
static void
sb_unmap(struct arena *a, uint32_t s)
{
	space_unmap(a, s);
	free_blk(a, a->sb[s].first);
	free_sb(a, s);
}

static bool
sb_wholly_free(const struct arena *a, uint32_t s)
{
	const struct blk *f = &a->blk[a->sb[s].first];

	return !f->inuse && f->right == NIL;
}

/* A superblock that became wholly free is not unmapped at once but kept as
   the deferred one, in case it is needed again soon. Deferring another (S,
   or NIL when a new superblock is about to be made) unmaps the previous one
   if it is still wholly free. */
static void
sb_defer(struct arena *a, uint32_t s)
{
	uint32_t d = a->deferred;

	if (d != NIL && d != s && sb_wholly_free(a, d)) {
		list_unlink(a, a->sb[d].first);
		sb_unmap(a, d);
	}
	a->deferred = s;
}

/* A new superblock for a block of WANT bytes, its whole area one free block
   put on its free list. Returns that block, or NIL when no space is left. */
static uint32_t
sb_new(struct arena *a, uint64_t want, bool may_be_unsplittable)
{
	uint64_t size = want + SB_HEADER;

	sb_defer(a, NIL);
	if (size < SB_MIN)
		size = SB_MIN;
	size = extra_round_up(size, PAGE);

	uint32_t s = new_sb(a);

	a->sb[s].size = size;
	a->sb[s].unsplittable = may_be_unsplittable && size >= SB_UNSPLITTABLE;
	if (!space_map(a, s)) {
		free_sb(a, s);
		return NIL;
	}

	uint32_t i = new_blk(a);

	a->sb[s].first = i;
	a->blk[i] = (struct blk){
		.addr = a->sb[s].addr + SB_HEADER,
		.size = size - SB_HEADER,
		.left = NIL,
		.right = NIL,
		.sb = s,
	};
	list_insert(a, i);
	return i;
}

/* First fit in list L: the first block from the head that holds WANT
   bytes. A list that is not the last gets at most 99 probes; the 100th
   advances the head by one, so repeated searches creep through it. */
static uint32_t
list_search(struct arena *a, unsigned l, uint64_t want)
{
	uint32_t cur = a->head[l];
	unsigned probes = 0;

	if (cur == NIL)
		return NIL;
	for (;;) {
		if (++probes >= MAX_PROBES && l < N_LISTS - 1) {
			a->head[l] = a->blk[a->head[l]].next;
			return NIL;
		}
		if (a->blk[cur].size >= want)
			return cur;
		cur = a->blk[cur].next;
		if (cur == a->head[l])
			return NIL;
	}
}

/* Hand out free block I for WANT bytes, splitting off the tail when it can
   stand alone as a free block (in an unsplittable superblock it cannot). */
static void
blk_take(struct arena *a, uint32_t i, uint64_t want)
{
	uint64_t frag = a->blk[i].size - want;

	list_unlink(a, i);
	a->blk[i].inuse = true;
	if (frag < MIN_BLOCK || a->sb[a->blk[i].sb].unsplittable)
		return;

	uint32_t r = new_blk(a);
	struct blk *b = &a->blk[i];

	b->size = want;
	a->blk[r] = (struct blk){
		.addr = b->addr + want,
		.size = frag,
		.left = i,
		.right = b->right,
		.sb = b->sb,
	};
	if (b->right != NIL)
		a->blk[b->right].left = r;
	b->right = r;
	list_insert(a, r);
}

/* Appendix A.3: a block with PSZ payload bytes (a multiple of 16). Returns
   its record, or NIL when no superblock could be mapped. */
static uint32_t
arena_malloc(struct arena *a, uint64_t psz, bool may_be_unsplittable)
{
	uint64_t want = psz + BLOCK_OVERHEAD;
	uint32_t i = NIL;

	for (unsigned l = next_list(a, list_of_payload(a, psz)); l < N_LISTS;
	     l = next_list(a, l + 1)) {
		i = list_search(a, l, want);
		if (i != NIL)
			break;
	}
	if (i == NIL)
		i = sb_new(a, want, may_be_unsplittable);
	if (i == NIL)
		return NIL;
	blk_take(a, i, want);
	return i;
}

/* Appendix A.6: PSZ payload bytes at a multiple of ALIGN (> 16). A block
   with room for the alignment is taken, and the part before the aligned
   block goes back on a free list as it is, not merged with a free left
   neighbour. */
static uint32_t
arena_memalign(struct arena *a, uint64_t psz, uint64_t align)
{
	uint32_t base = arena_malloc(a, psz + MIN_BLOCK + align, false);

	if (base == NIL)
		return NIL;

	uint32_t i = new_blk(a);
	struct blk *f = &a->blk[base];
	/* Room for the smallest free block in front, then the header. */
	uint64_t payload = extra_round_up(f->addr + MIN_BLOCK + PAYLOAD_OFFSET,
					  align);
	uint64_t start = payload - PAYLOAD_OFFSET;

	a->blk[i] = (struct blk){
		.addr = start,
		.size = f->addr + f->size - start,
		.left = base,
		.right = f->right,
		.sb = f->sb,
		.inuse = true,
	};
	if (f->right != NIL)
		a->blk[f->right].left = i;
	f->right = i;
	f->size = start - f->addr;
	f->inuse = false;
	list_insert(a, base);
	return i;
}

/* Merge free block I with its free right neighbour; I survives. */
static void
merge_right(struct arena *a, uint32_t i)
{
	uint32_t r = a->blk[i].right;

	list_unlink(a, i);
	list_unlink(a, r);
	a->blk[i].size += a->blk[r].size;
	a->blk[i].right = a->blk[r].right;
	if (a->blk[r].right != NIL)
		a->blk[a->blk[r].right].left = i;
	free_blk(a, r);
	list_insert(a, i);
}

/* Appendix A.5. */
static void
arena_free(struct arena *a, uint32_t i)
{
	uint32_t s = a->blk[i].sb;

	if (a->sb[s].unsplittable) {
		sb_unmap(a, s);
		return;
	}
	a->blk[i].inuse = false;
	list_insert(a, i);
	if (a->blk[i].right != NIL && !a->blk[a->blk[i].right].inuse)
		merge_right(a, i);
	uint32_t l = a->blk[i].left;

	if (l != NIL && !a->blk[l].inuse) {
		/* Valgrind unlinks the freed block before its neighbour. */
		list_unlink(a, i);
		list_unlink(a, l);
		a->blk[l].size += a->blk[i].size;
		a->blk[l].right = a->blk[i].right;
		if (a->blk[i].right != NIL)
			a->blk[a->blk[i].right].left = l;
		free_blk(a, i);
		list_insert(a, l);
		i = l;
	}
	if (a->blk[i].left == NIL && a->blk[i].right == NIL)
		sb_defer(a, s);
}

/* The model. */

static void
vg_init(struct snap_extra *x)
{
	struct arena *a = ht_xcalloc(1, sizeof(*a));

	for (unsigned l = 0; l < N_LISTS; l++)
		a->head[l] = NIL;
	for (unsigned q = 64 / 4; q <= LAST_FLOOR / 4; q++)
		a->list_by_quad[q] = (uint8_t)list_of_units(4 * q);
	a->spare_blk = a->spare_sb = a->deferred = NIL;
	x->state = a;
}

static void
vg_fini(struct snap_extra *x)
{
	struct arena *a = x->state;

	if (!a)
		return;
	free(a->blk);
	free(a->sb);
	free(a->order);
	free(a);
}

static void
vg_clone(struct snap_extra *dst, const struct snap_extra *src)
{
	const struct arena *a = src->state;
	struct arena *c = ht_xmalloc(sizeof(*c));

	*c = *a;
	c->blk = ht_xmemdup_array(a->blk, a->n_blk, a->n_blk, sizeof(*a->blk));
	c->cap_blk = a->n_blk;
	c->sb = ht_xmemdup_array(a->sb, a->n_sb, a->n_sb, sizeof(*a->sb));
	c->cap_sb = a->n_sb;
	c->order = ht_xmemdup_array(a->order, a->n_order, a->n_order, sizeof(*a->order));
	c->cap_order = a->n_order;
	dst->state = c;
}

/* The record of the live block with COOKIE, or NIL. */
static uint32_t
live_blk(const struct arena *a, uint64_t cookie)
{
	if (cookie == 0 || cookie > a->n_blk || !a->blk[cookie - 1].inuse)
		return NIL;
	return (uint32_t)(cookie - 1);
}

/* Appendix A.7: plain calls (ALIGN 0) use --alignment, and alignment 16 is
   the plain path. Sizes beyond the simulated address space fail here, which
   also keeps every sum below from overflowing. */
static int
vg_alloc(struct snap_extra *x, uint64_t req, uint64_t align, uint64_t usable,
	 struct snap_extra_block *out)
{
	struct arena *a = x->state;
	uint64_t psz = extra_round_up(req, PAYLOAD_ALIGN);
	uint32_t i;

	(void)usable;
	if (!align)
		align = x->alignment;
	if (psz >= SPACE_END || align >= SPACE_END)
		return -1;
	if (align == PAYLOAD_ALIGN)
		i = arena_malloc(a, psz, true);
	else
		i = arena_memalign(a, psz, align);
	if (i == NIL)
		return -1;
	out->cookie = (uint64_t)i + 1; /* the extra bytes: vg_extra_of */
	return 0;
}

static void
vg_release(struct snap_extra *x, const struct snap_extra_block *b)
{
	struct arena *a = x->state;
	uint32_t i = live_blk(a, b->cookie);

	if (i != NIL)
		arena_free(a, i);
}

/* Massif's realloc: a size that fits in the request plus the slop stays
   put and the allocator is not called; otherwise a new block is allocated
   and only then the old one freed. */
static int
vg_realloc(struct snap_extra *x, struct snap_extra_block *b, uint64_t req_old,
	   uint64_t req_new, uint64_t usable)
{
	uint64_t slop_old = b->extra - x->admin;
	struct snap_extra_block nb = { 0 };

	(void)usable;
	if (req_new <= req_old + slop_old)
		return 0; /* same block: vg_extra_of gives its new slop */
	if (vg_alloc(x, req_new, 0, 0, &nb))
		return -1;
	vg_release(x, b);
	*b = nb;
	return 0;
}

/* The block's payload beyond the request (rounding and memalign's slop),
   plus --heap-admin: what Massif adds to mem_heap_extra_B. */
static uint64_t
vg_extra_of(const struct snap_extra *x, uint64_t req, uint64_t cookie)
{
	const struct arena *a = x->state;
	uint32_t i = live_blk(a, cookie);

	if (i == NIL)
		return x->admin;
	return x->admin + (a->blk[i].size - BLOCK_OVERHEAD - req);
}

const struct extra_ops extra_valgrind_ops = {
	.name = "valgrind",
	.init = vg_init,
	.fini = vg_fini,
	.clone = vg_clone,
	.alloc = vg_alloc,
	.release = vg_release,
	.realloc = vg_realloc,
	.extra_of = vg_extra_of,
};

uint64_t
extra_valgrind_payload(const struct snap_extra *x, uint64_t cookie)
{
	const struct arena *a = x->state;
	uint32_t i;

	if (x->ops != &extra_valgrind_ops)
		return 0;
	i = live_blk(a, cookie);
	return i == NIL ? 0 : a->blk[i].addr + PAYLOAD_OFFSET;
}

void
extra_valgrind_footprint(const struct snap_extra *x, uint64_t *blocks,
			 uint64_t *superblocks)
{
	const struct arena *a = x->state;

	*blocks = 0;
	*superblocks = 0;
	if (x->ops != &extra_valgrind_ops)
		return;
	*blocks = a->live_blk;
	*superblocks = a->live_sb;
}
