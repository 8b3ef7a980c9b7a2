/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The massif.out reader: a file Massif or heaptrace wrote, parsed into
   its header, its snapshots and their allocation trees, for the commands
   that read profiles back (print, report, diff). */
#ifndef HT_OUTPUT_MASSIF_READ_H
#define HT_OUTPUT_MASSIF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mf_node {            /* one tree line, preorder */
	uint64_t bytes;
	uint64_t addr;          /* 0 for the root line and aggregate lines */
	char *label;            /* the text after "nN: BYTES ", e.g. "0x4005F4: main (t.c:6)", "(heap allocation functions) malloc/new/new[], --alloc-fns, etc.", "in 3 places, all below massif's threshold (1.00%)" */
	uint32_t n_children;
	bool aggregate;         /* an "in N places..." line */
};
enum mf_kind { MF_EMPTY, MF_DETAILED, MF_PEAK };
struct mf_snapshot {
	unsigned number;        /* snapshot=N */
	uint64_t time, heap, extra, stacks;
	enum mf_kind kind;
	struct mf_node *tree;   /* NULL when empty */
	size_t n_tree;
};
struct mf_file {
	char *desc, *cmd, *time_unit;
	struct mf_snapshot *snaps;
	size_t n_snaps;
};
/* Reads the massif.out file PATH into *OUT. Returns 0, or -1 with a one-line reason (naming the file and line) in ERR. */
int mf_read(const char *path, struct mf_file *out, char *err, size_t errlen);
/* Frees what F holds. */
void mf_free(struct mf_file *f);

/* The index in M->snaps of the peak snapshot (heap_tree=peak), else of
   the detailed one with the largest heap plus stacks; -1 when there is
   none. */
long mf_peak_index(const struct mf_file *m);

/* The index in M->snaps of the snapshot, detailed or not, with the most
   heap plus stacks (the first of equal ones); -1 when M has none. A
   program that ends at its largest has it after its peak snapshot,
   which Massif takes only when memory is released. */
long mf_largest_index(const struct mf_file *m);

/* Whether M was written with --pages-as-heap=yes (its figures are pages
   mapped, not heap blocks): a tree's root says so, else its desc:. */
bool mf_pages_as_heap(const struct mf_file *m);

/* Whether M was written with --stacks=yes: its desc: says so, or a
   snapshot has stack bytes. */
bool mf_has_stacks(const struct mf_file *m);

#endif
