/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The table is made from the very statistics the .sites file holds, read
   back from memory by sites_read, so that a site is named by the rule the
   report and diff use (output/site_name.h), mappings and wrappers
   included, and a row of `top` is the row `report` would show. */
#include "top_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/xalloc.h"
#include "output/site_name.h"
#include "output/site_wrappers.h"
#include "output/sites.h"
#include "output/sites_read.h"

/* A site name's figures at the previous table. */
struct top_seen {
	char *name;
	uint64_t calls, allocated;
	uint64_t live_first; /* its live bytes when growth started counting
				(0 for a name that came later) */
	uint64_t live_last;  /* at the previous table */
};

struct top_history {
	uint64_t start_ns, prev_ns;
	bool any;               /* a table was made */
	uint64_t prev_calls, prev_allocated;
	uint64_t peak;
	struct top_seen *seen;  /* sorted by name */
	size_t n_seen;
};

struct top_history *
top_history_new(uint64_t start_ns)
{
	struct top_history *h = ht_xcalloc(1, sizeof(*h));
	h->start_ns = start_ns;
	h->prev_ns = start_ns;
	return h;
}

void
top_history_free(struct top_history *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n_seen; i++)
		free(h->seen[i].name);
	free(h->seen);
	free(h);
}

void
top_history_reset_growth(struct top_history *h)
{
	for (size_t i = 0; i < h->n_seen; i++)
		h->seen[i].live_first = h->seen[i].live_last;
}

static int
seen_cmp(const void *key, const void *elem)
{
	return strcmp(key, ((const struct top_seen *)elem)->name);
}

/* H's entry for NAME, added (figures 0) when new. */
static struct top_seen *
seen_get(struct top_history *h, const char *name)
{
	size_t lo = 0, hi = h->n_seen;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = seen_cmp(name, &h->seen[mid]);
		if (!c)
			return &h->seen[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	h->seen = ht_xreallocarray(h->seen, h->n_seen + 1, sizeof(*h->seen));
	memmove(&h->seen[lo + 1], &h->seen[lo],
		(h->n_seen - lo) * sizeof(*h->seen));
	h->n_seen++;
	h->seen[lo] = (struct top_seen){ .name = ht_xstrdup(name) };
	return &h->seen[lo];
}

/* The statistics of ENG as the .sites file gives them, into *SF. */
static int
read_stats(pid_t pid, const struct snap_engine *eng,
	   const struct ht_symbolizer *sym, const struct out_header *hdr,
	   struct sites_file *sf)
{
	int fd = memfd_create("heaptrace-top", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int e = errno;
		close(fd);
		return -e;
	}
	int rc = out_sites_fprint(f, pid, hdr, eng, sym, NULL);
	if (!rc && fflush(f))
		rc = -errno;
	if (!rc) {
		char path[64], err[512];
		int e = 0;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (sites_read(path, sf, &e, err, sizeof(err)))
			rc = e ? -e : -EINVAL;
	}
	fclose(f);
	return rc;
}

/* The desc: line's words, for the --alloc-fn names in it. */
static char *
desc_text(const struct out_header *hdr)
{
	char *s = ht_xstrdup("");
	for (size_t i = 0; i < hdr->n_desc_args; i++) {
		char *t = ht_xasprintf("%s%s%s", s, i ? " " : "",
				       hdr->desc_args[i]);
		free(s);
		s = t;
	}
	return s;
}

static char *
command_text(const struct sites_file *sf)
{
	return ht_xstrdup(sf->cmd && sf->cmd[0] ? sf->cmd : "?");
}

/* A site with its name, for grouping by name. */
struct named_site {
	char *name;
	const struct sites_site *site;
};

static int
named_order(const void *a, const void *b)
{
	return strcmp(((const struct named_site *)a)->name,
		      ((const struct named_site *)b)->name);
}

/* Most live bytes first; then most allocated per second; then by name,
   so that the order is the same from table to table. */
static int
row_order(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	if (x->live != y->live)
		return x->live < y->live ? 1 : -1;
	if (x->alloc_rate != y->alloc_rate)
		return x->alloc_rate < y->alloc_rate ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Whether site A's stack rather than B's stands for their name's row. */
static bool
heavier(const struct sites_site *a, const struct sites_site *b)
{
	if (a->leaked != b->leaked)
		return a->leaked > b->leaked;
	return a->allocated > b->allocated;
}

/* Sum SF's sites into T's rows by name (sorted by name: a profile may
   have 100,000 sites); the allocated bytes of each row into the array
   returned (parallel to T's rows). */
static uint64_t *
rows_from_sites(struct top_table *t, const struct sites_file *sf,
		const struct out_header *hdr)
{
	char *desc = desc_text(hdr);
	struct site_naming nm;
	site_naming_init(&nm, sf, desc, NULL, 0, true);
	size_t n = sf->n_sites;
	struct named_site *v = ht_xcalloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		const struct sites_frame *fr = site_name_frame(&nm,
							       &sf->sites[i]);
		v[i].name = fr ? site_frame_text(fr) : ht_xstrdup("(no stack)");
		v[i].site = &sf->sites[i];
	}
	qsort(v, n, sizeof(*v), named_order);
	t->rows = ht_xcalloc(n ? n : 1, sizeof(*t->rows));
	uint64_t *allocated = ht_xcalloc(n ? n : 1, sizeof(*allocated));
	for (size_t i = 0; i < n; i++) {
		struct top_row *r = t->n_rows ? &t->rows[t->n_rows - 1] : NULL;
		if (!r || strcmp(r->name, v[i].name)) {
			r = &t->rows[t->n_rows++];
			r->name = v[i].name;
		} else {
			free(v[i].name);
		}
		if (!r->heaviest || heavier(v[i].site, r->heaviest))
			r->heaviest = v[i].site;
		r->live += v[i].site->leaked;
		r->calls += v[i].site->calls;
		r->temporary += v[i].site->temporary;
		allocated[r - t->rows] += v[i].site->allocated;
	}
	free(v);
	site_naming_free(&nm);
	free(desc);
	return allocated;
}

int
top_table_make(struct top_history *h, pid_t pid,
	       const struct snap_engine *eng, const struct ht_symbolizer *sym,
	       const struct out_header *hdr, uint64_t now_ns,
	       struct top_table *out)
{
	memset(out, 0, sizeof(*out));
	struct sites_file *sf = &out->sites;
	int rc = read_stats(pid, eng, sym, hdr, sf);
	if (rc)
		return rc;
	double dt = (double)(now_ns - h->prev_ns) / 1e9;
	if (dt <= 0)
		dt = 1e-9;
	out->pid = pid;
	out->command = command_text(sf);
	out->heap = snap_engine_heap(eng);
	out->sampling_interval = hdr->sampling_interval;
	out->elapsed = (double)(now_ns - h->start_ns) / 1e9;
	uint64_t *allocated = rows_from_sites(out, sf, hdr);
	for (size_t i = 0; i < out->n_rows; i++) {
		struct top_row *r = &out->rows[i];
		bool first = !h->any;
		struct top_seen *s = seen_get(h, r->name);
		if (first)
			s->live_first = r->live;
		r->growth = (int64_t)r->live - (int64_t)s->live_first;
		r->alloc_rate = (double)(allocated[i] - s->allocated) / dt;
		r->call_rate = (double)(r->calls - s->calls) / dt;
		s->calls = r->calls;
		s->allocated = allocated[i];
		s->live_last = r->live;
	}
	free(allocated);
	qsort(out->rows, out->n_rows, sizeof(*out->rows), row_order);
	uint64_t calls = sf->total_calls, bytes = sf->total_allocated;
	out->alloc_rate = (double)(bytes - h->prev_allocated) / dt;
	out->call_rate = (double)(calls - h->prev_calls) / dt;
	if (sf->has_peak && sf->peak_heap > h->peak)
		h->peak = sf->peak_heap;
	if (out->heap > h->peak)
		h->peak = out->heap;
	out->peak = h->peak;
	h->prev_calls = calls;
	h->prev_allocated = bytes;
	h->prev_ns = now_ns;
	h->any = true;
	return 0;
}

void
top_table_fini(struct top_table *t)
{
	for (size_t i = 0; i < t->n_rows; i++)
		free(t->rows[i].name);
	free(t->rows);
	free(t->command);
	sites_free(&t->sites);
	memset(t, 0, sizeof(*t));
}
