/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One process's leak check: the engine's live blocks, the tracer's view of
   the stopped process, memcheck's classification and report. */
#include "leakcheck.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/u64map.h"
#include "common/xalloc.h"
#include "output/leakreport.h"
#include "tracer/leak/leakroots.h"

#define MAX_DESC_LINES 512 /* frames printed per loss record, inlined too */

/* What the classifier and the report's callbacks read. */
struct check {
	const struct ht_options *opt;
	const struct snap_engine *eng;
	const struct ht_symbolizer *sym;
	struct leakroots_reader reader;
	struct leakroots_maps maps;
	bool glibc;
	struct u64map keys; /* site -> its stack's key */
	uint64_t *pcs;      /* scratch: opt->num_callers frames */
	struct leakreport_frame frames[MAX_DESC_LINES];
	char below[256];    /* the one "(below main)" line of a stack */
};

static ssize_t
check_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct check *c = ctx;
	return leakroots_read(&c->reader, addr, buf, len);
}

static const void *
check_view(void *ctx, uint64_t addr, size_t len)
{
	struct check *c = ctx;
	return leakroots_view(&c->reader, addr, len);
}

static int
check_is_vtable(void *ctx, uint64_t addr)
{
	struct check *c = ctx;
	return leakroots_is_vtable(&c->maps, &c->reader, addr);
}

static int
check_allocator_pointer(void *ctx, uint64_t p, uint64_t lo, uint64_t size)
{
	struct check *c = ctx;
	(void)size;
	return c->glibc && leakroots_glibc_chunk_pointer(&c->reader, p, lo);
}

/* The first --num-callers frames of SITE into C->pcs: memcheck keeps no
   more of a stack, and groups blocks into loss records by them. */
static unsigned
site_frames(struct check *c, uint32_t site)
{
	return snap_engine_site_frames(c->eng, site, c->pcs,
				       c->opt->num_callers);
}

/* Blocks whose first --num-callers frames are equal share a key: a hash
   of them (64 bits: a collision among the few thousand stacks of a
   program is not a practical concern). */
static uint64_t
stack_key(void *ctx, void *id)
{
	struct check *c = ctx;
	const struct snap_live_block *b = id;
	uint64_t *known = u64map_get(&c->keys, b->site);
	if (known)
		return *known;
	unsigned n = site_frames(c, b->site);
	uint64_t h = 0xcbf29ce484222325ULL ^ n;
	for (unsigned i = 0; i < n; i++) {
		h ^= c->pcs[i];
		h *= 0x100000001b3ULL;
		h ^= h >> 29;
	}
	u64map_put(&c->keys, b->site, h);
	return h;
}

/* "name (where)" with its name replaced by "(below main)", as Valgrind
   shows the C library's start-up frames; the result lives in BUF. */
static const char *
below_main(const char *desc, char *buf, size_t len)
{
	const char *where = strstr(desc, " (");
	snprintf(buf, len, "(below main)%s", where ? where : "");
	return buf;
}

/* The frames of block ID as memcheck prints them: each inlined call its
   own line at the same address, up to main (or the first frame below
   it) unless --show-below-main=yes. */
static size_t
stack_frames(void *ctx, void *id, const struct leakreport_frame **out)
{
	struct check *c = ctx;
	const struct snap_live_block *b = id;
	unsigned n = site_frames(c, b->site);
	size_t k = 0;
	for (unsigned i = 0; i < n && k < MAX_DESC_LINES; i++) {
		const char *lines[HT_MAX_INLINE];
		unsigned nl = c->sym->describe(c->sym->ctx, c->pcs[i], lines,
					       HT_MAX_INLINE);
		const char *fn = c->sym->function_name(c->sym->ctx, c->pcs[i]);
		bool is_main = fn && strcmp(fn, "main") == 0;
		bool is_below = fn && ht_is_below_main(fn) &&
				!c->opt->show_below_main;
		for (unsigned l = 0; l < nl && k < MAX_DESC_LINES; l++, k++) {
			c->frames[k].addr = c->pcs[i];
			c->frames[k].desc =
				is_below && l + 1 == nl
					? below_main(lines[l], c->below,
						     sizeof(c->below))
					: lines[l];
		}
		if ((is_main || is_below) && !c->opt->show_below_main)
			break;
	}
	*out = c->frames;
	return k;
}

static void
report(struct check *c, pid_t pid, const struct leak_block *blocks, size_t n,
       struct leakcheck_result *res)
{
	const struct ht_options *opt = c->opt;
	struct snap_stats st = snap_engine_stats(c->eng);
	struct leakreport_stacks stacks = {
		.key = stack_key, .frames = stack_frames, .ctx = c,
	};
	struct leakreport_opts ro = {
		.pid = pid,
		.mode = opt->leak_check == HT_LEAK_CHECK_FULL ? LEAKREPORT_FULL
							       : LEAKREPORT_SUMMARY,
		.show_kinds = opt->show_leak_kinds,
		.allocs = st.usage_allocs,
		.frees = st.usage_frees,
		.bytes_allocated = st.usage_bytes,
	};
	res->errors = opt->leak_check == HT_LEAK_CHECK_FULL
		? leakreport_count_records(blocks, n, &stacks,
					   opt->errors_for_leak_kinds)
		: 0;
	fflush(stdout);
	if (leakreport_write(stderr, blocks, n, &res->totals, &stacks, &ro))
		ht_warn("process %d: the leak report could not be written",
			(int)pid);
	fprintf(stderr,
		"==%d== ERROR SUMMARY: %llu errors from %llu contexts "
		"(suppressed: 0 from 0)\n",
		(int)pid, (unsigned long long)res->errors,
		(unsigned long long)res->errors);
	fflush(stderr);
}

/* What the scan leaves out of the roots, in *EXCL (malloc'd): heaptrace's
   own pages, and glibc malloc's heaps when it is the allocator, which are
   copied in whole (the blocks the scan reaches lie all over them). */
static int
allocator_memory(struct check *c, const char *maps,
		 const struct tracer_leak_view *view,
		 struct leakroots_range **excl, size_t *nexcl)
{
	struct leakroots_range *heaps = NULL;
	size_t nheaps = 0;
	if (c->glibc) {
		int rc = leakroots_glibc_heaps(maps, &c->reader, &heaps,
					       &nheaps);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < nheaps; i++)
		if (leakroots_reader_copy(&c->reader, heaps[i].lo, heaps[i].hi))
			break;
	*nexcl = view->nown + nheaps;
	*excl = ht_xcalloc(*nexcl ? *nexcl : 1, sizeof(**excl));
	memcpy(*excl, view->own, view->nown * sizeof(**excl));
	if (nheaps)
		memcpy(*excl + view->nown, heaps, nheaps * sizeof(**excl));
	free(heaps);
	return 0;
}

/* The verdicts summed per allocation site, for the profile's .sites. */
static void
by_site(struct leakcheck_result *res, const struct leak_block *blocks,
	size_t n)
{
	u64map_init(&res->rows);
	res->by_site = ht_xcalloc(n ? n : 1, sizeof(*res->by_site));
	for (size_t i = 0; i < n; i++) {
		const struct snap_live_block *b = blocks[i].id;
		bool fresh;
		uint64_t *row = u64map_slot(&res->rows, b->site, &fresh);
		if (fresh)
			*row = res->n_rows++;
		res->by_site[*row][blocks[i].kind] += blocks[i].size;
	}
}

void
leakcheck_result_fini(struct leakcheck_result *res)
{
	if (res->by_site)
		u64map_fini(&res->rows);
	free(res->by_site);
	res->by_site = NULL;
	res->n_rows = 0;
}

static uint64_t
now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void
leakcheck_run(const struct ht_options *opt, pid_t pid,
	      const struct snap_engine *eng, const struct ht_symbolizer *sym,
	      bool glibc, const struct tracer_leak_view *view,
	      struct leakcheck_result *res)
{
	struct check c = {
		.opt = opt, .eng = eng, .sym = sym, .glibc = glibc,
	};
	struct snap_live_block *live = NULL;
	struct leak_block *blocks = NULL;
	struct leak_root *roots = NULL;
	struct leakroots_range *excl = NULL;
	size_t nroots = 0, nexcl = 0;
	char *maps = NULL;

	uint64_t t0 = now_us();
	memset(res, 0, sizeof(*res));
	size_t n = snap_engine_live_blocks(eng, &live);
	blocks = ht_xcalloc(n ? n : 1, sizeof(*blocks));
	for (size_t i = 0; i < n; i++)
		blocks[i] = (struct leak_block){
			.addr = live[i].addr, .size = live[i].size,
			.id = &live[i],
		};
	leakroots_reader_init(&c.reader, view->tid);
	int rc = leakroots_read_maps(view->tid, &maps);
	if (rc == 0)
		rc = leakroots_index_maps(maps, &c.maps);
	if (rc == 0)
		rc = allocator_memory(&c, maps, view, &excl, &nexcl);
	if (rc == 0)
		rc = leakroots_from_maps(maps, excl, nexcl, view->sps,
					 view->nsps, blocks, n, &roots,
					 &nroots);
	if (rc) {
		ht_warn("process %d: no leak check: its memory map could not "
			"be read (%s)", (int)pid, strerror(-rc));
		goto out;
	}
	uint64_t t1 = now_us();
	u64map_init(&c.keys);
	c.pcs = ht_xcalloc(opt->num_callers, sizeof(*c.pcs));
	struct leak_input in = {
		.blocks = blocks, .nblocks = n,
		.roots = roots, .nroots = nroots,
		.regs = view->regs, .nregs = view->nregs,
		.read = check_read,
		.view = check_view,
		.is_vtable = check_is_vtable,
		.allocator_pointer = check_allocator_pointer,
		.ctx = &c,
		.heuristics = LEAK_HEUR_ALL,
	};
	leak_classify(&in, &res->totals);
	by_site(res, blocks, n);
	uint64_t t2 = now_us();
	res->done = true;
	report(&c, pid, blocks, n, res);
	if (opt->stats)
		ht_error("stats: process %d: leak check of %zu blocks: %llu "
			 "bytes copied, %llu scanned, %llu unreadable; %llu ms "
			 "to gather, %llu ms to classify, %llu ms to report",
			 (int)pid, n, (unsigned long long)c.reader.copied,
			 (unsigned long long)res->totals.scanned_bytes,
			 (unsigned long long)res->totals.unreadable_bytes,
			 (unsigned long long)(t1 - t0) / 1000,
			 (unsigned long long)(t2 - t1) / 1000,
			 (unsigned long long)(now_us() - t2) / 1000);
	free(c.pcs);
	u64map_fini(&c.keys);
out:
	leakroots_reader_fini(&c.reader);
	leakroots_maps_fini(&c.maps);
	free(excl);
	free(maps);
	free(roots);
	free(blocks);
	free(live);
}
