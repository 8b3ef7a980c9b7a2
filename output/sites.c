/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The .sites file (docs/sites-format.md). Frames are written as names and
   places, not only addresses, so that the file is read without the
   program: `report` and `diff` run after the process is gone, and `diff`
   matches sites across runs whose addresses differ. Each frame and each
   stack is written once, numbered (version 2): a run's sites share most
   of their frames, and writing every site's whole stack made files a
   hundred times the size of the profile. */
#include "output/sites.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "common/xalloc.h"
#include "output/sites_stacks.h"

#define MAX_FRAMES 256 /* per site; a deeper stack is cut (said in a comment) */

static const char *const kind_names[OUT_SITES_KINDS] = {
	"definite", "indirect", "possible", "reachable",
};

char *
out_sites_path(const char *path)
{
	return ht_xasprintf("%s.sites", path);
}

/* fprintf's result as 0 or -errno. */
static int
emit(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int
emit(FILE *f, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n < 0 ? -(errno ? errno : EIO) : 0;
}

/* One "frame:" line of frame number ID from Massif's description of PC
   ("fn (file:line)", "fn (in /obj)", "???"): the name, a TAB, then the
   place. */
static int
frame_line(FILE *f, uint32_t id, uint64_t pc, const char *desc)
{
	size_t len = strlen(desc), name_len = len;
	const char *place = "";
	size_t place_len = 0;
	/* the place is the last " (...)" ending the line: a C++ name has
	   parentheses of its own, but none after a blank */
	const char *open = NULL;
	for (const char *p = strstr(desc, " ("); p; p = strstr(p + 1, " ("))
		open = p;
	if (open && len > 0 && desc[len - 1] == ')') {
		name_len = (size_t)(open - desc);
		place = open + 2;
		place_len = len - name_len - 3;
		if (strncmp(place, "in ", 3) == 0) {
			place = open + 1; /* keep "(in /obj)" whole */
			place_len += 2;
		}
	}
	return emit(f, "frame: %u 0x%llX %.*s\t%.*s\n", (unsigned)id,
		    (unsigned long long)pc, (int)name_len, desc,
		    (int)place_len, place);
}

/* The objects the frames lie in, by their start address, each written
   once after the sites (mapping: lines): START -> one pc inside it, asked
   of the symbolizer again when written. */
struct mappings {
	const struct ht_symbolizer *sym;
	struct u64map seen;
};

static void
mapping_note(struct mappings *m, uint64_t pc)
{
	struct ht_mapping map;
	if (!m->sym->mapping || !m->sym->mapping(m->sym->ctx, pc, &map))
		return;
	bool fresh;
	uint64_t *slot = u64map_slot(&m->seen, map.start, &fresh);
	if (fresh)
		*slot = pc;
}

/* "mapping: start=0x.. end=0x.. offset=0x.. build_id=HEX file=PATH", the
   file last as it may hold blanks; build_id= absent when unknown. */
static int
mapping_line(FILE *f, const struct ht_mapping *map)
{
	int rc = emit(f, "mapping: start=0x%llX end=0x%llX offset=0x%llX",
		      (unsigned long long)map->start,
		      (unsigned long long)map->end,
		      (unsigned long long)map->offset);
	if (!rc && map->build_id_len) {
		rc = emit(f, " build_id=");
		for (size_t i = 0; !rc && i < map->build_id_len; i++)
			rc = emit(f, "%02x", map->build_id[i]);
	}
	if (!rc && map->file)
		rc = emit(f, " file=%s", map->file);
	return rc ? rc : emit(f, "\n");
}

/* The mappings noted, in address order. */
static int
write_mappings(FILE *f, const struct mappings *m)
{
	size_t n = m->seen.count, k = 0;
	uint64_t *starts = ht_xcalloc(n ? n : 1, sizeof(*starts));
	uint64_t start, pc;
	for (size_t pos = 0; u64map_next(&m->seen, &pos, &start, &pc);)
		starts[k++] = start;
	for (size_t i = 1; i < k; i++) /* few objects: insertion sort */
		for (size_t j = i; j > 0 && starts[j - 1] > starts[j]; j--) {
			uint64_t t = starts[j];
			starts[j] = starts[j - 1];
			starts[j - 1] = t;
		}
	int rc = 0;
	for (size_t i = 0; !rc && i < k; i++) {
		struct ht_mapping map;
		pc = *u64map_get(&m->seen, starts[i]);
		if (m->sym->mapping(m->sym->ctx, pc, &map))
			rc = mapping_line(f, &map);
	}
	free(starts);
	return rc;
}

/* The frame lines of PC, numbered ID: one per function inlined there,
   innermost first. */
static int
frame_lines(FILE *f, const struct ht_symbolizer *sym, uint32_t id,
	    uint64_t pc)
{
	const char *lines[HT_MAX_INLINE];
	unsigned nl = sym->describe(sym->ctx, pc, lines, HT_MAX_INLINE);
	if (nl == 0) /* a number without a line would break the numbering */
		return frame_line(f, id, pc, "???");
	int rc = 0;
	for (unsigned l = 0; !rc && l < nl; l++)
		rc = frame_line(f, id, pc, lines[l]);
	return rc;
}

/* What writing the sites' stacks keeps: the numbers given, and room for
   one stack's addresses and frame numbers. */
struct stack_work {
	struct sites_stacks stacks;
	uint64_t pcs[MAX_FRAMES];
	uint32_t frames[MAX_FRAMES];
};

/* Number the frames of the N addresses of W, innermost first, writing
   the frame: lines of those met for the first time. */
static int
number_frames(FILE *f, const struct ht_symbolizer *sym, struct stack_work *w,
	      unsigned n, struct mappings *maps)
{
	int rc = 0;
	for (unsigned i = n; !rc && i-- > 0;) {
		bool fresh;
		w->frames[i] = sites_stacks_frame(&w->stacks, w->pcs[i],
						  &fresh);
		if (fresh) {
			mapping_note(maps, w->pcs[i]);
			rc = frame_lines(f, sym, w->frames[i], w->pcs[i]);
		}
	}
	return rc;
}

/* The stack of SITE, with the frame and stack lines it needs that were
   not written yet, above it (a file is read top down); its number into
   *NODE (0 for a stack without frames). A new stack extends the longest
   known one by the frames it lacks, outermost first: one stack: line,
   whatever their number. */
static int
site_stack(FILE *f, const struct snap_engine *eng,
	   const struct ht_symbolizer *sym, uint32_t site,
	   struct stack_work *w, struct mappings *maps, uint32_t *node)
{
	unsigned n = snap_engine_site_frames(eng, site, w->pcs, MAX_FRAMES);
	int rc = number_frames(f, sym, w, n, maps);
	uint32_t caller = 0;
	bool fresh = false;
	unsigned i = n;
	*node = 0;
	while (!rc && !fresh && i > 0) { /* down the stacks already known */
		caller = *node;
		*node = sites_stacks_node(&w->stacks, caller, w->frames[--i],
					  &fresh);
	}
	if (rc || !fresh)
		return rc;
	rc = emit(f, "stack: %u %u %u", (unsigned)*node, (unsigned)caller,
		  (unsigned)w->frames[i]);
	while (!rc && i-- > 0) { /* each new, numbered in a row */
		*node = sites_stacks_node(&w->stacks, *node, w->frames[i],
					  &fresh);
		rc = emit(f, " %u", (unsigned)w->frames[i]);
	}
	return rc ? rc : emit(f, "\n");
}

static int
write_header(FILE *f, long pid, const struct out_header *h,
	     const struct snap_engine *eng)
{
	int rc = emit(f, "heaptrace-sites: 2\npid: %ld\ncmd:", pid);
	for (size_t i = 0; !rc && i < h->cmd_argc; i++)
		rc = out_header_arg(f, h->cmd_argv[i]);
	if (!rc)
		rc = emit(f, "\ntime_unit: %s\n",
			  ht_time_unit_name(h->time_unit));
	if (!rc && h->sampling_interval)
		rc = emit(f, "sampling: interval=%llu seed=%llu\n",
			  (unsigned long long)h->sampling_interval,
			  (unsigned long long)h->sampling_seed);
	long peak = snap_engine_peak_index(eng);
	const struct snap_snapshot *s =
		peak >= 0 ? snap_engine_snapshot(eng, (size_t)peak) : NULL;
	if (!rc)
		rc = emit(f, "peak: snapshot=%ld time=%llu heap=%llu\n", peak,
			  (unsigned long long)(s ? s->time : 0),
			  (unsigned long long)(s ? s->heap : 0));
	return rc;
}

/* The totals count the sites thinned out too; their line says how
   many there were and what they did. */
static int
write_totals(FILE *f, const struct snap_site *v, size_t n,
	     const struct snap_engine *eng)
{
	uint64_t n_thinned;
	struct snap_site th = snap_engine_sites_thinned(eng, &n_thinned);
	uint64_t calls = th.calls, allocated = th.allocated,
		 temporary = th.temporary, leaked = 0, leaked_blocks = 0;
	for (size_t i = 0; i < n; i++) {
		calls += v[i].calls;
		allocated += v[i].allocated;
		temporary += v[i].temporary;
		leaked += v[i].leaked;
		leaked_blocks += v[i].leaked_blocks;
	}
	int rc = emit(f,
		      "totals: sites=%zu calls=%llu allocated=%llu "
		      "temporary=%llu leaked=%llu leaked_blocks=%llu\n",
		      n, (unsigned long long)calls,
		      (unsigned long long)allocated,
		      (unsigned long long)temporary, (unsigned long long)leaked,
		      (unsigned long long)leaked_blocks);
	if (!rc && n_thinned)
		rc = emit(f, "thinned: sites=%llu calls=%llu allocated=%llu "
			  "peak=%llu peak_blocks=%llu temporary=%llu\n",
			  (unsigned long long)n_thinned,
			  (unsigned long long)th.calls,
			  (unsigned long long)th.allocated,
			  (unsigned long long)th.peak,
			  (unsigned long long)th.peak_blocks,
			  (unsigned long long)th.temporary);
	return rc;
}

static int
write_leak_summary(FILE *f, const struct out_sites_leak *leak)
{
	int rc = emit(f, "leak_check: %s", leak->mode);
	for (int k = 0; !rc && k < OUT_SITES_KINDS; k++)
		rc = emit(f, " %s=%llu/%llu", kind_names[k],
			  (unsigned long long)leak->bytes[k],
			  (unsigned long long)leak->blocks[k]);
	return rc ? rc : emit(f, "\n");
}

/* " KEY=VALUE", left out when VALUE is 0 (readers take it as 0). */
static int
nonzero_key(FILE *f, const char *key, uint64_t value)
{
	return value ? emit(f, " %s=%llu", key, (unsigned long long)value) : 0;
}

static int
write_site(FILE *f, size_t id, uint32_t stack, const struct snap_site *s,
	   const struct out_sites_leak *leak)
{
	int rc = emit(f, "site: %zu stack=%u calls=%llu allocated=%llu", id,
		      (unsigned)stack, (unsigned long long)s->calls,
		      (unsigned long long)s->allocated);
	if (!rc)
		rc = nonzero_key(f, "peak", s->peak);
	if (!rc)
		rc = nonzero_key(f, "peak_blocks", s->peak_blocks);
	if (!rc)
		rc = nonzero_key(f, "leaked", s->leaked);
	if (!rc)
		rc = nonzero_key(f, "leaked_blocks", s->leaked_blocks);
	if (!rc)
		rc = nonzero_key(f, "temporary", s->temporary);
	/* all four, even at 0: their presence says the leak check found
	   blocks of the site */
	uint64_t bytes[OUT_SITES_KINDS] = { 0 };
	if (!rc && leak && leak->site_bytes(leak->ctx, s->site, bytes))
		for (int k = 0; !rc && k < OUT_SITES_KINDS; k++)
			rc = emit(f, " %s=%llu", kind_names[k],
				  (unsigned long long)bytes[k]);
	return rc ? rc : emit(f, "\n");
}

int
out_sites_fprint(FILE *f, long pid, const struct out_header *h,
		 const struct snap_engine *eng, const struct ht_symbolizer *sym,
		 const struct out_sites_leak *leak)
{
	struct snap_site *v;
	size_t n = snap_engine_sites(eng, &v);
	struct stack_work *w = ht_xcalloc(1, sizeof(*w));
	sites_stacks_init(&w->stacks);
	struct mappings maps = { .sym = sym };
	u64map_init(&maps.seen);
	int rc = write_header(f, pid, h, eng);
	if (!rc)
		rc = write_totals(f, v, n, eng);
	if (!rc && leak)
		rc = write_leak_summary(f, leak);
	for (size_t i = 0; !rc && i < n; i++) {
		uint32_t stack;
		rc = site_stack(f, eng, sym, v[i].site, w, &maps, &stack);
		if (!rc)
			rc = write_site(f, i + 1, stack, &v[i], leak);
	}
	if (!rc)
		rc = write_mappings(f, &maps);
	u64map_fini(&maps.seen);
	if (!rc && fflush(f))
		rc = -(errno ? errno : EIO);
	sites_stacks_fini(&w->stacks);
	free(w);
	free(v);
	return rc;
}

struct sites_job {
	long pid;
	const struct out_header *h;
	const struct snap_engine *eng;
	const struct ht_symbolizer *sym;
	const struct out_sites_leak *leak;
};

static int
fill_sites(FILE *f, void *arg)
{
	const struct sites_job *j = arg;
	return out_sites_fprint(f, j->pid, j->h, j->eng, j->sym, j->leak);
}

int
out_sites_write(const char *path, long pid, const struct out_header *h,
		const struct snap_engine *eng, const struct ht_symbolizer *sym,
		const struct out_sites_leak *leak)
{
	struct sites_job j = {
		.pid = pid, .h = h, .eng = eng, .sym = sym, .leak = leak,
	};
	return out_file_write(path, fill_sites, &j);
}
