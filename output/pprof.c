/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pprof_write_file: a profile's figures as pprof samples. With a .sites
   file each site is one sample, its whole stack (allocator frames left
   out, as Massif's tree leaves them out), alloc_* its calls and bytes,
   inuse_* its bytes and blocks live at the peak or at the end; at a
   snapshot N, inuse_space comes from the Massif file's tree of snapshot N
   instead, one sample per leaf (inuse_objects 0: trees count bytes).
   Without a .sites file (real Massif's) there is only inuse_space, from
   the tree. Frames of one address (an inlined chain) are one location
   with a line per function, innermost first. A --pages-as-heap profile
   (whose .sites holds no sites) has only its tree's figures, pages
   mapped, named mapped_space; with --stacks=yes the snapshot's stack
   bytes are one more sample, "(stacks)", as Massif counts them in its
   peak. */
#include "output/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/xalloc.h"
#include "output/massif_read.h"
#include "output/output.h"
#include "output/pprof_build.h"
#include "output/sites_read.h"

/* The sample types, Go's heap profile's, in its order: readers show the
   last (inuse_space) when default_sample_type is unset. */
enum { V_ALLOC_OBJECTS, V_ALLOC_SPACE, V_INUSE_OBJECTS, V_INUSE_SPACE,
       N_VALUES };
static const char *const type_names[N_VALUES] = {
	"alloc_objects", "alloc_space", "inuse_objects", "inuse_space",
};
static const char *const type_units[N_VALUES] = {
	"count", "bytes", "count", "bytes",
};

/* The name of the synthetic frame of a tree's "in N places, all below
   massif's threshold" line, and of bytes a tree node holds beyond its
   children's. */
#define BELOW_THRESHOLD "(below threshold)"
#define NO_STACK "(no stack)"
#define STACKS "(stacks)"

/* The one type of a profile read from a tree alone; under
   --pages-as-heap its figures are pages mapped, not heap blocks. */
static const char *const mapped_name = "mapped_space";

/* What one write reads and builds. */
struct pprof_job {
	const char *path;
	struct mf_file massif;
	bool has_sites;
	struct sites_file sites;
	bool pages;            /* --pages-as-heap */
	struct pprof_build *b;
	size_t n_values;       /* N_VALUES, or 1 (inuse_space) without .sites */
	uint64_t *locs;        /* a sample's location IDs */
	size_t cap_locs;
	struct pprof_line *lines;
	size_t cap_lines;
};

/* The sampling interval the profile says it was made at (the .sites
   file's, else the Massif desc:'s); 0 when exact. */
static uint64_t
sampling_interval(const struct pprof_job *j)
{
	struct sites_sampling s;
	return sites_sampling_of(j->has_sites ? &j->sites : NULL,
				 j->massif.desc, &s) ? s.interval : 0;
}

/* The index of snapshot number N in M, or -1. */
static long
snapshot_index(const struct mf_file *m, long n)
{
	for (size_t i = 0; i < m->n_snaps; i++)
		if ((long)m->snaps[i].number == n)
			return (long)i;
	return -1;
}

static void
locs_push(struct pprof_job *j, size_t n, uint64_t id)
{
	ht_xgrow((void **)&j->locs, &j->cap_locs, n + 1, sizeof(*j->locs));
	j->locs[n] = id;
}

static void
lines_push(struct pprof_job *j, size_t n, struct pprof_line line)
{
	ht_xgrow((void **)&j->lines, &j->cap_lines, n + 1, sizeof(*j->lines));
	j->lines[n] = line;
}

/* ---- samples from the .sites file ---- */

static uint64_t
site_mapping(struct pprof_job *j, uint64_t addr)
{
	const struct sites_mapping *m = sites_mapping_of(&j->sites, addr);
	return m ? pprof_build_mapping(j->b, m->start, m->end, m->offset,
				       m->file, m->build_id) : 0;
}

/* Site S's frames as location IDs into J->locs, from frame FIRST on;
   returns how many. */
static size_t
site_locations(struct pprof_job *j, const struct sites_site *s, size_t first)
{
	size_t n = 0;
	for (size_t i = first; i < s->n_frames;) {
		size_t nl = 0;
		uint64_t addr = s->frames[i].addr;
		for (; i < s->n_frames && s->frames[i].addr == addr; i++) {
			const struct sites_frame *fr = &s->frames[i];
			lines_push(j, nl++, (struct pprof_line){
				.function = fr->function,
				.file = fr->file ? fr->file : fr->object,
				.line = (int64_t)fr->line,
			});
		}
		uint64_t id = pprof_build_location(j->b, site_mapping(j, addr),
						   addr, j->lines, nl);
		locs_push(j, n++, id);
	}
	return n;
}

/* The first frame of S that is not inside the allocator: the one whose
   call Massif's tree shows under its root. */
static size_t
site_first_frame(const struct sites_site *s)
{
	size_t i = 0;
	while (i < s->n_frames && sites_is_alloc_function(s->frames[i].function))
		i++;
	/* a stack of allocator frames only keeps them all */
	return i < s->n_frames ? i : 0;
}

/* A sampled profile's block counts are estimates already (each sampled
   block counted as the weight / size blocks it stands for), closer than
   the site's bytes at its mean block size: a site whose live blocks are
   not of the size it mostly allocates (a realloc chain) is right too. */
static void
sites_samples(struct pprof_job *j, long at)
{
	for (size_t i = 0; i < j->sites.n_sites; i++) {
		const struct sites_site *s = &j->sites.sites[i];
		int64_t v[N_VALUES] = {
			[V_ALLOC_OBJECTS] = (int64_t)s->calls,
			[V_ALLOC_SPACE] = (int64_t)s->allocated,
		};
		if (at == PPROF_AT_PEAK) {
			v[V_INUSE_OBJECTS] = (int64_t)s->peak_blocks;
			v[V_INUSE_SPACE] = (int64_t)s->peak;
		} else if (at == PPROF_AT_END) {
			v[V_INUSE_OBJECTS] = (int64_t)s->leaked_blocks;
			v[V_INUSE_SPACE] = (int64_t)s->leaked;
		}
		size_t n = site_locations(j, s, site_first_frame(s));
		pprof_build_sample(j->b, j->locs, n, v);
	}
}

/* ---- samples from a Massif tree ---- */

/* Tree line LABEL ("0x4005F4: main (t.c:6)", "0x...: f (in /lib/x.so)",
   "0x...: ???") as a pprof line; the strings point into *BUF
   (malloc'd, to be freed). */
static struct pprof_line
label_line(const char *label, char **buf)
{
	const char *text = label;
	if (strncmp(text, "0x", 2) == 0) {
		const char *colon = strstr(text, ": ");
		if (colon)
			text = colon + 2;
	}
	*buf = ht_xstrdup(text);
	char *s = *buf, *open = NULL;
	size_t len = strlen(s);
	/* the place is the last " (...)": C++ names have parentheses of
	   their own, never after a blank */
	for (char *p = strstr(s, " ("); p; p = strstr(p + 1, " ("))
		open = p;
	struct pprof_line line = { .function = s };
	if (!open || s[len - 1] != ')')
		return line;
	*open = '\0';
	s[len - 1] = '\0';
	char *place = open + 2;
	if (strncmp(place, "in ", 3) == 0) {
		line.file = place + 3;
		return line;
	}
	char *colon = strrchr(place, ':');
	char *end;
	long n = colon ? strtol(colon + 1, &end, 10) : 0;
	if (colon && end != colon + 1 && *end == '\0') {
		*colon = '\0';
		line.line = n;
	}
	line.file = place;
	return line;
}

/* The path from the tree's root to a node: the preorder indexes of its
   nodes below the root, innermost frame first. */
struct tree_walk {
	struct pprof_job *j;
	const struct mf_snapshot *s;
	size_t *path;
	size_t cap;
};

/* PATH[0..DEPTH) as locations: nodes of one address in a row (an inlined
   chain, Massif prints one line per function) make one location. */
static size_t
path_locations(struct tree_walk *w, size_t depth)
{
	struct pprof_job *j = w->j;
	size_t n = 0;
	for (size_t i = 0; i < depth;) {
		const struct mf_node *first = &w->s->tree[w->path[i]];
		size_t nl = 0;
		char *bufs[64];
		for (; i < depth && nl < 64; i++) {
			const struct mf_node *nd = &w->s->tree[w->path[i]];
			if (nl && (nd->aggregate || nd->addr != first->addr))
				break;
			if (nd->aggregate) {
				bufs[nl] = NULL;
				lines_push(j, nl++, (struct pprof_line){
					.function = BELOW_THRESHOLD });
				i++;
				break;
			}
			lines_push(j, nl, label_line(nd->label, &bufs[nl]));
			nl++;
		}
		locs_push(j, n++, pprof_build_location(j->b, 0,
				first->aggregate ? 0 : first->addr, j->lines,
				nl));
		for (size_t k = 0; k < nl; k++)
			free(bufs[k]);
	}
	return n;
}

static void
tree_sample(struct tree_walk *w, size_t depth, uint64_t bytes)
{
	struct pprof_job *j = w->j;
	int64_t v[N_VALUES] = { 0 };
	size_t n;
	if (depth) {
		n = path_locations(w, depth);
	} else {
		lines_push(j, 0, (struct pprof_line){ .function = NO_STACK });
		locs_push(j, 0, pprof_build_location(j->b, 0, 0, j->lines, 1));
		n = 1;
	}
	v[j->n_values == 1 ? 0 : V_INUSE_SPACE] = (int64_t)bytes;
	pprof_build_sample(j->b, j->locs, n, v);
}

/* Node I at DEPTH (0: the root) and its subtree: a sample for each
   node's bytes its children do not account for (all of a leaf's).
   Returns the index after the subtree. */
static size_t
tree_node(struct tree_walk *w, size_t i, size_t depth)
{
	const struct mf_node *nd = &w->s->tree[i];
	if (depth) {
		ht_xgrow((void **)&w->path, &w->cap, depth, sizeof(*w->path));
		w->path[depth - 1] = i;
	}
	uint64_t children = 0;
	size_t next = i + 1;
	for (uint32_t c = 0; c < nd->n_children && next < w->s->n_tree; c++) {
		children += w->s->tree[next].bytes;
		next = tree_node(w, next, depth + 1);
	}
	if (nd->bytes > children)
		tree_sample(w, depth, nd->bytes - children);
	return next;
}

/* The stack bytes of snapshot S (--stacks=yes) as one sample of their
   own: Massif's trees leave them out, its peak counts them. */
static void
stacks_sample(struct pprof_job *j, const struct mf_snapshot *s)
{
	int64_t v[N_VALUES] = { 0 };
	if (!s->stacks)
		return;
	lines_push(j, 0, (struct pprof_line){ .function = STACKS });
	locs_push(j, 0, pprof_build_location(j->b, 0, 0, j->lines, 1));
	v[j->n_values == 1 ? 0 : V_INUSE_SPACE] = (int64_t)s->stacks;
	pprof_build_sample(j->b, j->locs, 1, v);
}

static void
tree_samples(struct pprof_job *j, const struct mf_snapshot *s)
{
	struct tree_walk w = { .j = j, .s = s };
	if (s->n_tree)
		tree_node(&w, 0, 0);
	free(w.path);
}

/* ---- the file ---- */

static void
job_free(struct pprof_job *j)
{
	mf_free(&j->massif);
	if (j->has_sites)
		sites_free(&j->sites);
	pprof_build_free(j->b);
	free(j->locs);
	free(j->lines);
}

static int
job_read(struct pprof_job *j, char *err, size_t errlen)
{
	char why[512];
	if (mf_read(j->path, &j->massif, why, sizeof(why))) {
		if (strstr(why, j->path))
			snprintf(err, errlen, "%s", why);
		else
			snprintf(err, errlen, "%s: %s", j->path, why);
		return -1;
	}
	char *sites = sites_path_of(j->path);
	int e;
	int rc = sites_read(sites, &j->sites, &e, err, errlen);
	free(sites);
	if (rc == 0)
		j->has_sites = true;
	else if (e != ENOENT)
		return -1;
	j->pages = mf_pages_as_heap(&j->massif);
	/* no allocator calls are counted under --pages-as-heap: the tree
	   holds the figures */
	if (j->has_sites && j->pages && j->sites.n_sites == 0) {
		sites_free(&j->sites);
		j->has_sites = false;
	}
	return 0;
}

/* The snapshot whose tree gives inuse_space, as an index of
   J->massif.snaps; -1 when the .sites figures give it; -2 after failing
   (ERR says why). */
static long
tree_snapshot(const struct pprof_job *j, long at, char *err, size_t errlen)
{
	if (at >= 0) {
		long i = snapshot_index(&j->massif, at);
		if (i < 0 || j->massif.snaps[i].kind == MF_EMPTY) {
			snprintf(err, errlen, "%s: snapshot %ld is not a "
				 "detailed snapshot of the file", j->path, at);
			return -2;
		}
		return i;
	}
	if (j->has_sites)
		return -1;
	if (at == PPROF_AT_END) {
		snprintf(err, errlen, "%s: no .sites file beside it, so the "
			 "heap at the end is not known (--at=peak or the "
			 "number of a detailed snapshot)", j->path);
		return -2;
	}
	long i = mf_peak_index(&j->massif);
	if (i < 0)
		snprintf(err, errlen, "%s: no detailed snapshot: the heap's "
			 "stacks are not known", j->path);
	return i < 0 ? -2 : i;
}

/* The snapshot whose stack bytes go with the inuse figures: the tree's,
   else the peak's or the last; -1 when none. */
static long
stacks_snapshot(const struct pprof_job *j, long tree, long at)
{
	if (tree >= 0)
		return tree;
	if (at == PPROF_AT_END)
		return j->massif.n_snaps ? (long)j->massif.n_snaps - 1 : -1;
	return mf_peak_index(&j->massif);
}

/* When the profile was written (its Massif file's modification time) and
   how long the run it covers lasted, when its time unit is ms (the time
   of its last snapshot). */
static void
profile_times(const struct pprof_job *j)
{
	struct stat st;
	int64_t when = 0, duration = 0;
	if (stat(j->path, &st) == 0)
		when = (int64_t)st.st_mtim.tv_sec * 1000000000 +
		       st.st_mtim.tv_nsec;
	const struct mf_file *m = &j->massif;
	if (m->time_unit && strcmp(m->time_unit, "ms") == 0 && m->n_snaps)
		duration = (int64_t)m->snaps[m->n_snaps - 1].time * 1000000;
	pprof_build_times(j->b, when, duration);
}

/* What the profile is, for its readers: its command, and when sampled
   that its figures are estimates. */
static void
profile_comments(const struct pprof_job *j)
{
	struct sites_sampling s;
	char text[256];
	if (j->massif.cmd) {
		char *cmd = ht_xasprintf("heaptrace profile of: %s",
					 j->massif.cmd);
		pprof_build_comment(j->b, cmd);
		free(cmd);
	}
	if (j->pages)
		pprof_build_comment(j->b, "mapped_space: bytes of the pages "
				    "mapped (--pages-as-heap: mmap, mremap, "
				    "brk), not heap blocks");
	if (mf_has_stacks(&j->massif))
		pprof_build_comment(j->b, "(stacks): the stack bytes of the "
				    "snapshot (--stacks=yes), counted in "
				    "Massif's peak");
	if (sites_sampling_of(j->has_sites ? &j->sites : NULL, j->massif.desc,
			      &s)) {
		sites_sampling_text(&s, text, sizeof(text));
		pprof_build_comment(j->b, text);
	}
}

static int
fill_profile(FILE *f, void *arg)
{
	const struct pprof_build *b = arg;
	uint8_t *data;
	size_t len;
	if (pprof_build_encode(b, &data, &len))
		return -ENOMEM;
	size_t put = fwrite(data, 1, len, f);
	free(data);
	return put == len ? 0 : -(errno ? errno : EIO);
}

int
pprof_write_file(const char *massif_path, const char *out_path, long at,
		 char *err, size_t errlen)
{
	struct pprof_job j = { .path = massif_path };
	if (job_read(&j, err, errlen)) {
		job_free(&j);
		return -1;
	}
	long tree = tree_snapshot(&j, at, err, errlen);
	if (tree == -2) {
		job_free(&j);
		return -1;
	}
	uint64_t period = sampling_interval(&j);
	j.n_values = j.has_sites ? N_VALUES : 1;
	/* exact profiles: period 1, every byte was seen */
	j.b = pprof_build_new(j.has_sites ? type_names :
			      j.pages ? &mapped_name : &type_names[3],
			      j.has_sites ? type_units : &type_units[3],
			      j.n_values, "space", "bytes",
			      period ? (int64_t)period : 1);
	profile_times(&j);
	profile_comments(&j);
	if (j.has_sites)
		sites_samples(&j, tree >= 0 ? at : (at == PPROF_AT_END
						     ? PPROF_AT_END
						     : PPROF_AT_PEAK));
	if (tree >= 0)
		tree_samples(&j, &j.massif.snaps[tree]);
	long st = stacks_snapshot(&j, tree, at);
	if (st >= 0)
		stacks_sample(&j, &j.massif.snaps[st]);
	int rc = out_file_write(out_path, fill_profile, j.b);
	if (rc)
		snprintf(err, errlen, "cannot write %s: %s", out_path,
			 strerror(-rc));
	job_free(&j);
	return rc ? -1 : 0;
}
