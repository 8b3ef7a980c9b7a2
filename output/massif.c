/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The massif.out writer: header lines, snapshot records and allocation
   trees, byte for byte as Massif 3.19 prints them (massif-semantics §1),
   including the expansion of inlined frames into chains of lines. */
#include "output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "common/err.h"

static int
emit(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One formatted write; stdio buffers, so this is cheap per line. */
static int
emit(FILE *f, const char *fmt, ...)
{
	va_list ap;

	errno = 0;
	va_start(ap, fmt);
	int n = vfprintf(f, fmt, ap);
	va_end(ap);
	if (n < 0)
		return errno ? -errno : -EIO;
	return 0;
}

/* Massif writes an argument's line breaks as they are, and ms_print then
   stops at its own file ("missing 'time_unit' line") when an argument
   held one ($'a\nb'). */
int
out_header_arg(FILE *f, const char *arg)
{
	int rc = emit(f, " ");
	for (const char *p = arg; !rc && *p;) {
		size_t run = strcspn(p, "\n\r");
		if (run)
			rc = emit(f, "%.*s", (int)run, p);
		p += run;
		if (!rc && *p)
			rc = emit(f, *p++ == '\n' ? "\\n" : "\\r");
	}
	return rc;
}

/* "desc: a b", or "desc: (none)"; "cmd: prog a b"; "time_unit: B". */
static int
header_print(FILE *f, const struct out_header *h)
{
	int rc = emit(f, "desc:");

	for (size_t i = 0; !rc && i < h->n_desc_args; i++)
		rc = out_header_arg(f, h->desc_args[i]);
	if (!rc && !h->n_desc_args)
		rc = emit(f, " (none)");
	if (!rc)
		rc = emit(f, "\ncmd:");
	for (size_t i = 0; !rc && i < h->cmd_argc; i++)
		rc = out_header_arg(f, h->cmd_argv[i]);
	if (!rc)
		rc = emit(f, "\ntime_unit: %s\n",
			  ht_time_unit_name(h->time_unit));
	return rc;
}

/* Walks one preorder tree array; NEXT is the index of the node to print. */
struct tree_walk {
	FILE *f;
	const struct out_header *h;
	const struct ht_symbolizer *sym;
	const struct snap_node *nodes;
	size_t n_nodes;
	size_t next;
};

static int
aggregate_print(struct tree_walk *w, const struct snap_node *nd,
		unsigned indent)
{
	if (nd->n_children)
		return -HT_E_FORMAT;
	if (nd->places == 1)
		return emit(w->f,
			    "%*sn0: %" PRIu64 " in 1 place, below massif's "
			    "threshold (%.2f%%)\n",
			    (int)indent, "", nd->bytes, w->h->threshold);
	return emit(w->f,
		    "%*sn0: %" PRIu64 " in %" PRIu32 " places, all below "
		    "massif's threshold (%.2f%%)\n",
		    (int)indent, "", nd->bytes, nd->places, w->h->threshold);
}

/* Print a frame line, or the chain of lines of an inlined frame
   (innermost function first, each one more space in, all "n1:" but the
   last). Returns the indent the node's children are relative to, or a
   negative error. */
static long
frame_print(struct tree_walk *w, const struct snap_node *nd, unsigned indent)
{
	const char *lines[HT_MAX_INLINE];
	unsigned k = w->sym->describe(w->sym->ctx, nd->pc, lines,
				      HT_MAX_INLINE);

	if (k == 0) {
		lines[0] = "???";
		k = 1;
	}
	if (k > HT_MAX_INLINE)
		k = HT_MAX_INLINE;
	for (unsigned j = 0; j < k; j++) {
		uint32_t c = j + 1 < k ? 1 : nd->n_children;
		int rc = emit(w->f, "%*sn%" PRIu32 ": %" PRIu64 " 0x%" PRIX64
			      ": %s\n", (int)(indent + j), "", c, nd->bytes,
			      nd->pc, lines[j]);
		if (rc)
			return rc;
	}
	return (long)(indent + k - 1);
}

/* Print the node at W->NEXT, indented INDENT spaces, and its subtrees. */
static int
node_print(struct tree_walk *w, unsigned indent)
{
	if (w->next >= w->n_nodes)
		return -HT_E_FORMAT;

	const struct snap_node *nd = &w->nodes[w->next++];
	if (nd->places)
		return aggregate_print(w, nd, indent);

	long last = frame_print(w, nd, indent);
	if (last < 0)
		return (int)last;
	for (uint32_t i = 0; i < nd->n_children; i++) {
		int rc = node_print(w, (unsigned)last + 1);
		if (rc)
			return rc;
	}
	return 0;
}

static int
tree_print(FILE *f, const struct out_header *h, const struct snap_snapshot *s,
	   const struct ht_symbolizer *sym)
{
	struct tree_walk w = {
		.f = f, .h = h, .sym = sym,
		.nodes = s->tree, .n_nodes = s->n_tree, .next = 1,
	};

	if (!s->tree || !s->n_tree || s->tree[0].places)
		return -HT_E_FORMAT;

	const struct snap_node *root = &s->tree[0];
	int rc = emit(f, "n%" PRIu32 ": %" PRIu64 " %s\n", root->n_children,
		      root->bytes,
		      h->pages_as_heap ?
		      "(page allocation syscalls) mmap/mremap/brk, "
		      "--alloc-fns, etc." :
		      "(heap allocation functions) malloc/new/new[], "
		      "--alloc-fns, etc.");
	/* Children of the root sit one space in. */
	for (uint32_t i = 0; !rc && i < root->n_children; i++)
		rc = node_print(&w, 1);
	if (!rc && w.next != w.n_nodes)
		rc = -HT_E_FORMAT;
	return rc;
}

static const char *
kind_name(enum snap_kind k)
{
	switch (k) {
	case SNAP_EMPTY:
		return "empty";
	case SNAP_DETAILED:
		return "detailed";
	case SNAP_PEAK:
		return "peak";
	}
	return NULL;
}

static int
snapshot_print(FILE *f, const struct out_header *h, size_t idx,
	       const struct snap_snapshot *s, const struct ht_symbolizer *sym)
{
	const char *kind = kind_name(s->kind);
	/* A --heap=no peak has no tree; Massif writes it as an empty one. */
	bool treeless_peak = s->kind == SNAP_PEAK && !s->tree;

	if (treeless_peak)
		kind = kind_name(SNAP_EMPTY);
	if (!kind)
		return -HT_E_FORMAT;
	int rc = emit(f,
		      "#-----------\n"
		      "snapshot=%zu\n"
		      "#-----------\n"
		      "time=%" PRIu64 "\n"
		      "mem_heap_B=%" PRIu64 "\n"
		      "mem_heap_extra_B=%" PRIu64 "\n"
		      "mem_stacks_B=%" PRIu64 "\n"
		      "heap_tree=%s\n",
		      idx, s->time, s->heap, s->extra, s->stacks, kind);
	if (!rc && s->kind != SNAP_EMPTY && !treeless_peak)
		rc = tree_print(f, h, s, sym);
	return rc;
}

static int
flush(FILE *f)
{
	errno = 0;
	if (fflush(f))
		return errno ? -errno : -EIO;
	return 0;
}

int
out_massif_fprint_snapshots(FILE *f, const struct out_header *h,
			    const struct snap_snapshot *snaps, size_t n,
			    const struct ht_symbolizer *sym)
{
	int rc = header_print(f, h);

	for (size_t i = 0; !rc && i < n; i++)
		rc = snapshot_print(f, h, i, &snaps[i], sym);
	return rc ? rc : flush(f);
}

/* ENG's snapshots, then NOW (when not NULL) numbered after them. */
static int
engine_print(FILE *f, const struct out_header *h,
	     const struct snap_engine *eng, const struct snap_snapshot *now,
	     const struct ht_symbolizer *sym)
{
	size_t n = snap_engine_count(eng);
	int rc = header_print(f, h);

	for (size_t i = 0; !rc && i < n; i++)
		rc = snapshot_print(f, h, i, snap_engine_snapshot(eng, i),
				    sym);
	if (!rc && now)
		rc = snapshot_print(f, h, n, now, sym);
	return rc ? rc : flush(f);
}

int
out_massif_fprint(FILE *f, const struct out_header *h,
		  const struct snap_engine *eng,
		  const struct ht_symbolizer *sym)
{
	return engine_print(f, h, eng, NULL, sym);
}

struct engine_fill {
	const struct out_header *h;
	const struct snap_engine *eng;
	const struct snap_snapshot *now;
	const struct ht_symbolizer *sym;
};

static int
engine_fill(FILE *f, void *arg)
{
	const struct engine_fill *ef = arg;

	return engine_print(f, ef->h, ef->eng, ef->now, ef->sym);
}

int
out_massif_write(const char *path, const struct out_header *h,
		 const struct snap_engine *eng,
		 const struct ht_symbolizer *sym)
{
	struct engine_fill ef = { .h = h, .eng = eng, .sym = sym };

	return out_file_write(path, engine_fill, &ef);
}

int
out_massif_write_now(const char *path, const struct out_header *h,
		     const struct snap_engine *eng,
		     const struct snap_snapshot *now,
		     const struct ht_symbolizer *sym)
{
	struct engine_fill ef = { .h = h, .eng = eng, .now = now, .sym = sym };

	return out_file_write(path, engine_fill, &ef);
}
