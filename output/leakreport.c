/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The leak check's report in memcheck 3.19's words. The layout was
   learnt from memcheck runs (valgrind 3.19.0, --leak-check=full|summary,
   --show-leak-kinds=all|default) and is checked against their text in
   tests/output/test_leakreport.c; no code or text taken from Valgrind.

   What memcheck does, and we do:
   - "HEAP SUMMARY:" comes after a blank line, then "    in use at
     exit:" and "  total heap usage:", then a blank line. With nothing in
     use, "All heap blocks were freed -- no leaks are possible" and a
     blank line end the report. With --leak-check=no, only "For a
     detailed leak analysis, rerun with: --leak-check=full" and a blank
     line follow, leaks or not.
   - Full mode: blocks are grouped into loss records by (allocation
     stack, kind). Records are numbered among all of them ("in loss record
     3 of 6" even when records 1 and 2, of kinds not shown, are skipped).
     Order: total bytes (direct + indirect), then kind (reachable <
     possible < indirect < definite), then block count, then the stack's
     age (memcheck compares ExeContext addresses; we use the first block
     of the record in the caller's order). Each shown record is its
     header, its frames, a blank line. "N (D direct, I indirect) bytes"
     when the record has indirect bytes (only definitely lost ones can).
     The block count is always followed by "blocks", even for 1.
   - "LEAK SUMMARY:" labels are right-aligned to "definitely lost:" at 3
     spaces; the heuristic lines follow "still reachable:" when a
     heuristic reached anything, names left-aligned in 19 columns.
   - Hints: summary mode says "Rerun with --leak-check=full..."; full
     mode with reachable blocks not shown says how to see them. A blank
     line ends the report.
   - Numbers have ',' every three digits (Valgrind's %'lu). */
#include "output/leakreport.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/u64map.h"
#include "common/xalloc.h"

struct lr_record {
	uint64_t key;
	enum leak_kind kind;
	size_t first; /* lowest index of its blocks */
	uint64_t bytes;
	uint64_t indirect;
	uint64_t nblocks;
};

/* V with ',' every three digits, in BUF (at least 27 bytes). */
static const char *
commas(char *buf, uint64_t v)
{
	char digits[21];
	int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
	char *o = buf;

	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			*o++ = ',';
		*o++ = digits[i];
	}
	*o = '\0';
	return buf;
}

static int
cmp_record(const void *a, const void *b)
{
	const struct lr_record *x = a, *y = b;
	uint64_t tx = x->bytes + x->indirect, ty = y->bytes + y->indirect;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->nblocks != y->nblocks)
		return x->nblocks < y->nblocks ? -1 : 1;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The loss records of BLOCKS, sorted. Blocks are grouped by (stack,
   kind) through a hash table: a million blocks made sorting them the
   report's cost. */
static struct lr_record *
make_records(const struct leak_block *blocks, size_t n,
	     const struct leakreport_stacks *stacks, size_t *nrec)
{
	struct lr_record *rec = ht_xcalloc(n ? n : 1, sizeof *rec);
	struct u64map group; /* (key, kind) -> record */
	size_t r = 0;

	u64map_init(&group);
	for (size_t i = 0; i < n; i++) {
		const struct leak_block *b = &blocks[i];
		uint64_t key = stacks->key(stacks->ctx, b->id);
		bool fresh;
		uint64_t *slot = u64map_slot(&group, key * LEAK_N_KINDS + b->kind,
					     &fresh);
		if (fresh) {
			*slot = r;
			rec[r].key = key;
			rec[r].kind = b->kind;
			rec[r].first = i;
			r++;
		}
		struct lr_record *x = &rec[*slot];
		x->bytes += b->size;
		if (b->kind == LEAK_DEFINITE)
			x->indirect += b->indirect_bytes;
		x->nblocks++;
	}
	u64map_fini(&group);
	qsort(rec, r, sizeof *rec, cmp_record);
	*nrec = r;
	return rec;
}

uint64_t
leakreport_count_records(const struct leak_block *blocks, size_t n,
			 const struct leakreport_stacks *stacks,
			 unsigned kinds)
{
	size_t nrec = 0;
	uint64_t count = 0;
	struct lr_record *rec = make_records(blocks, n, stacks, &nrec);
	for (size_t i = 0; i < nrec; i++)
		count += (kinds & LEAKREPORT_KIND_BIT(rec[i].kind)) != 0;
	free(rec);
	return count;
}

static void
write_record(FILE *out, long pid, const struct lr_record *rec, size_t i,
	     size_t nrec, const struct leak_block *blocks,
	     const struct leakreport_stacks *stacks)
{
	char a[32], b[32], c[32], d[32], e[32];
	const struct leakreport_frame *frames = NULL;
	size_t nframes;

	fprintf(out, "==%ld== ", pid);
	if (rec->indirect > 0)
		fprintf(out, "%s (%s direct, %s indirect) ",
			commas(a, rec->bytes + rec->indirect),
			commas(b, rec->bytes), commas(c, rec->indirect));
	else
		fprintf(out, "%s ", commas(a, rec->bytes));
	fprintf(out, "bytes in %s blocks are %s in loss record %s of %s\n",
		commas(d, rec->nblocks), leak_kind_name(rec->kind),
		commas(e, i + 1), commas(b, nrec));
	nframes = stacks->frames(stacks->ctx, blocks[rec->first].id, &frames);
	for (size_t f = 0; f < nframes; f++)
		fprintf(out, "==%ld==    %s 0x%" PRIX64 ": %s\n", pid,
			f == 0 ? "at" : "by", frames[f].addr,
			frames[f].desc ? frames[f].desc : "???");
	fprintf(out, "==%ld== \n", pid);
}

int
leakreport_write(FILE *out, const struct leak_block *blocks, size_t n,
		 const struct leak_totals *totals,
		 const struct leakreport_stacks *stacks,
		 const struct leakreport_opts *opts)
{
	/* The LEAK SUMMARY lines, in memcheck's order. */
	static const struct {
		const char *label;
		enum leak_kind kind;
	} lines[] = {
		{ "   definitely lost", LEAK_DEFINITE },
		{ "   indirectly lost", LEAK_INDIRECT },
		{ "     possibly lost", LEAK_POSSIBLE },
		{ "   still reachable", LEAK_REACHABLE },
	};
	long pid = opts->pid;
	char a[32], b[32], c[32];
	uint64_t use_bytes = 0, use_blocks = 0;
	int heur = 0;

	for (int k = 0; k < LEAK_N_KINDS; k++) {
		use_bytes += totals->bytes[k];
		use_blocks += totals->blocks[k];
	}
	fprintf(out, "==%ld== \n==%ld== HEAP SUMMARY:\n", pid, pid);
	fprintf(out, "==%ld==     in use at exit: %s bytes in %s blocks\n", pid,
		commas(a, use_bytes), commas(b, use_blocks));
	fprintf(out,
		"==%ld==   total heap usage: %s allocs, %s frees, "
		"%s bytes allocated\n==%ld== \n",
		pid, commas(a, opts->allocs), commas(b, opts->frees),
		commas(c, opts->bytes_allocated), pid);
	if (opts->mode == LEAKREPORT_NO) {
		fprintf(out,
			"==%ld== For a detailed leak analysis, rerun with: "
			"--leak-check=full\n==%ld== \n",
			pid, pid);
		return ferror(out) ? -1 : 0;
	}
	if (use_blocks == 0) {
		fprintf(out,
			"==%ld== All heap blocks were freed -- no leaks are "
			"possible\n==%ld== \n",
			pid, pid);
		return ferror(out) ? -1 : 0;
	}

	if (opts->mode == LEAKREPORT_FULL) {
		size_t nrec = 0;
		struct lr_record *rec = make_records(blocks, n, stacks, &nrec);

		for (size_t i = 0; i < nrec; i++)
			if (opts->show_kinds & LEAKREPORT_KIND_BIT(rec[i].kind))
				write_record(out, pid, &rec[i], i, nrec, blocks,
					     stacks);
		free(rec);
	}

	fprintf(out, "==%ld== LEAK SUMMARY:\n", pid);
	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		enum leak_kind k = lines[i].kind;

		fprintf(out, "==%ld== %s: %s bytes in %s blocks\n", pid,
			lines[i].label, commas(a, totals->bytes[k]),
			commas(b, totals->blocks[k]));
	}
	for (int h = 1; h < LEAK_N_HEURISTICS; h++)
		if (totals->heur_blocks[h] > 0)
			heur = 1;
	if (heur) {
		fprintf(out, "==%ld==                       of which reachable "
			     "via heuristic:\n",
			pid);
		for (int h = 1; h < LEAK_N_HEURISTICS; h++)
			if (totals->heur_blocks[h] > 0)
				fprintf(out,
					"==%ld==                         %-19s: "
					"%s bytes in %s blocks\n",
					pid,
					leak_heuristic_name(
						(enum leak_heuristic)h),
					commas(a, totals->heur_bytes[h]),
					commas(b, totals->heur_blocks[h]));
	}
	fprintf(out, "==%ld==         suppressed: 0 bytes in 0 blocks\n", pid);
	if (opts->mode == LEAKREPORT_SUMMARY)
		fprintf(out, "==%ld== Rerun with --leak-check=full to see "
			     "details of leaked memory\n",
			pid);
	else if (totals->blocks[LEAK_REACHABLE] > 0 &&
		 !(opts->show_kinds & LEAKREPORT_KIND_BIT(LEAK_REACHABLE)))
		fprintf(out,
			"==%ld== Reachable blocks (those to which a pointer "
			"was found) are not shown.\n"
			"==%ld== To see them, rerun with: --leak-check=full "
			"--show-leak-kinds=all\n",
			pid, pid);
	fprintf(out, "==%ld== \n", pid);
	return ferror(out) ? -1 : 0;
}
