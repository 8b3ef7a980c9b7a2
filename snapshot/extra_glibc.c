/* SPDX-License-Identifier: GPL-2.0-or-later */
/* SNAP_EXTRA_GLIBC: what glibc 2.36's malloc (Debian 12, x86-64) really
   spends on a block: its chunk size minus the request. The chunk size read
   from the target's chunk header wins when the event has it; otherwise it
   is predicted from glibc's size rules. --heap-admin is not added: the
   chunk header is already part of the chunk size. */
#include "snapshot/extra.h"

#include <stdlib.h>

#include "common/xalloc.h"
#include "snapshot/extra_priv.h"

/* glibc's constants on x86-64 (malloc/malloc.c, 2.36). */
#define SIZE_SZ			8
#define CHUNK_ALIGN		16
#define MIN_CHUNK		32
#define PAGE			4096
#define IS_MMAPPED		2	/* the size word's flag in glibc */
#define SIZE_FLAGS		7
#define MMAP_THRESHOLD_DEFAULT	(128 * 1024)
#define MMAP_THRESHOLD_MAX	((uint64_t)32 << 20)

/* The cookie of a block is what glibc keeps in its chunk's size word:
   the chunk size, with IS_MMAPPED set for a chunk of its own mapping. */

struct glibc_state {
	/* glibc raises its mmap threshold to the size of a freed mmapped
	   chunk (up to 32 MiB), so that a program that keeps allocating and
	   freeing a big buffer stops paying a mapping for it. */
	uint64_t mmap_threshold;
};

static void
glibc_init(struct snap_extra *x)
{
	struct glibc_state *g = ht_xmalloc(sizeof(*g));

	g->mmap_threshold = MMAP_THRESHOLD_DEFAULT;
	x->state = g;
}

static void
glibc_fini(struct snap_extra *x)
{
	free(x->state);
}

static void
glibc_clone(struct snap_extra *dst, const struct snap_extra *src)
{
	struct glibc_state *g = ht_xmalloc(sizeof(*g));

	*g = *(const struct glibc_state *)src->state;
	dst->state = g;
}

/* glibc's request2size: the request plus the size word, rounded to 16,
   and never below the 32 bytes a free chunk needs for its links. Checked
   on this machine: malloc(0..24) -> 32, 25 -> 48, 100 -> 112, 1000 ->
   1008. */
static uint64_t
request2size(uint64_t n)
{
	uint64_t nb = extra_round_up(n + SIZE_SZ, CHUNK_ALIGN);

	return nb < MIN_CHUNK ? MIN_CHUNK : nb;
}

/* A chunk of NB bytes in a mapping of its own: the mapping covers the
   chunk plus the unused prev_size word, rounded to pages, and the chunk
   takes it all (malloc(200000) -> 200704, malloc(1 << 20) -> 1052672). */
static uint64_t
mmapped_chunk(uint64_t nb)
{
	return extra_round_up(nb + SIZE_SZ, PAGE) | IS_MMAPPED;
}

/* malloc(N). glibc maps a request of the threshold or more when the top
   of the heap cannot hold it; the top is not modelled, so a big request
   after big frees may really come from the heap. */
static uint64_t
chunk_malloc(const struct glibc_state *g, uint64_t n)
{
	uint64_t nb = request2size(n);

	return nb >= g->mmap_threshold ? mmapped_chunk(nb) : nb;
}

/* Where _int_memalign puts the aligned chunk in a fresh mapping M (page
   aligned): the first ALIGN boundary past M's header, skipped once more if
   the part in front could not be a chunk of its own. Above a page the
   boundary depends on M; M is taken as aligned. */
static uint64_t
mmapped_lead(uint64_t align)
{
	uint64_t lead = align - 2 * SIZE_SZ;

	return lead < MIN_CHUNK ? lead + align : lead;
}

/* memalign(ALIGN, N), ALIGN > 16. _int_memalign takes a chunk with room
   for the request, the alignment and a minimal chunk in front, gives the
   part in front back to the heap and, on the heap, the tail too when more
   than a minimal chunk is left: the result is request2size(N) (16 or 32
   more when the tail was too small, which depends on addresses). A mapped
   chunk keeps its tail and loses only the lead: memalign(64, 200000) ->
   200656, memalign(4096, 200000) -> 200720. Returns 0 when glibc refuses:
   the padded request must fit in a signed word. */
static uint64_t
chunk_memalign(const struct glibc_state *g, uint64_t align, uint64_t n)
{
	uint64_t nb = request2size(n);
	uint64_t big;

	if (align > EXTRA_MAX_REQ || nb > EXTRA_MAX_REQ - MIN_CHUNK - align)
		return 0;
	big = request2size(nb + align + MIN_CHUNK);
	if (big < g->mmap_threshold)
		return nb;
	return (extra_round_up(big + SIZE_SZ, PAGE) - mmapped_lead(align)) |
	       IS_MMAPPED;
}

/* realloc of the chunk whose size word is OLD to N bytes. A mapped chunk
   is remapped to the pages the new size needs, keeping its lead (the
   lead, below a page, is what the chunk lacks of a page multiple):
   realloc(malloc(200000), 10) -> 4096. A heap chunk big enough stays,
   its tail split off when a minimal chunk fits there; a heap chunk too
   small moves (growing in place into free neighbours is not modelled but
   gives the same size). */
static uint64_t
chunk_realloc(const struct glibc_state *g, uint64_t old, uint64_t n)
{
	uint64_t nb = request2size(n);
	uint64_t size = old & ~(uint64_t)SIZE_FLAGS;

	if (old & IS_MMAPPED) {
		uint64_t lead = (PAGE - size % PAGE) % PAGE;

		return (extra_round_up(nb + lead + SIZE_SZ, PAGE) - lead) |
		       IS_MMAPPED;
	}
	if (size >= nb)
		return size - nb >= MIN_CHUNK ? nb : size;
	return chunk_malloc(g, n);
}

/* Fill B's cookie for a block whose predicted size word is WORD; the
   tracer's chunk size USABLE, when there is one, wins for the size. The
   extra bytes follow from it (glibc_extra_of). */
static void
fill(struct snap_extra_block *b, uint64_t word, uint64_t usable)
{
	uint64_t size = usable ? usable & ~(uint64_t)SIZE_FLAGS :
				 word & ~(uint64_t)SIZE_FLAGS;

	b->cookie = size | (word & IS_MMAPPED);
}

static int
glibc_alloc(struct snap_extra *x, uint64_t req, uint64_t align,
	    uint64_t usable, struct snap_extra_block *out)
{
	const struct glibc_state *g = x->state;
	uint64_t word;

	if (align > CHUNK_ALIGN)
		word = chunk_memalign(g, align, req);
	else
		word = chunk_malloc(g, req);
	if (!word)
		return -1;
	fill(out, word, usable);
	return 0;
}

static void
glibc_release(struct snap_extra *x, const struct snap_extra_block *b)
{
	struct glibc_state *g = x->state;

	/* free()'s dynamic threshold; glibc compares the raw size word. */
	if ((b->cookie & IS_MMAPPED) && b->cookie > g->mmap_threshold &&
	    b->cookie <= MMAP_THRESHOLD_MAX)
		g->mmap_threshold = b->cookie & ~(uint64_t)SIZE_FLAGS;
}

static int
glibc_realloc(struct snap_extra *x, struct snap_extra_block *b,
	      uint64_t req_old, uint64_t req_new, uint64_t usable)
{
	const struct glibc_state *g = x->state;
	uint64_t old = b->cookie ? b->cookie : req_old + b->extra;

	fill(b, chunk_realloc(g, old, req_new), usable);
	return 0;
}

/* The chunk beyond the request: its size is in the cookie. */
static uint64_t
glibc_extra_of(const struct snap_extra *x, uint64_t req, uint64_t cookie)
{
	uint64_t size = cookie & ~(uint64_t)SIZE_FLAGS;

	(void)x;
	return size > req ? size - req : 0;
}

const struct extra_ops extra_glibc_ops = {
	.name = "glibc",
	.init = glibc_init,
	.fini = glibc_fini,
	.clone = glibc_clone,
	.alloc = glibc_alloc,
	.release = glibc_release,
	.realloc = glibc_realloc,
	.extra_of = glibc_extra_of,
};
