/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bytes are printed whole, never rounded to KiB, so that a script and a
   test can compare them with what they know; sampled figures are said to
   be estimates on the header line and in the JSON. */
#include "top_print.h"

#include <inttypes.h>

#include "output/jsonstr.h"

static double
heap_share(const struct top_table *t, const struct top_row *r)
{
	return t->heap ? 100.0 * (double)r->live / (double)t->heap : 0.0;
}

static double
temporary_share(const struct top_row *r)
{
	return r->calls ? 100.0 * (double)r->temporary / (double)r->calls
			: 0.0;
}

static size_t
rows_shown(const struct top_table *t)
{
	return t->n_rows < TOP_PRINT_ROWS ? t->n_rows : TOP_PRINT_ROWS;
}

static void
print_sampling(FILE *out, const struct top_table *t)
{
	if (t->sampling_interval)
		fprintf(out, "sampled every %" PRIu64 " B: every figure is "
			"an estimate\n", t->sampling_interval);
	else
		fprintf(out, "exact: every call counted\n");
}

void
top_print_text(FILE *out, const struct top_table *t)
{
	fprintf(out, "heaptrace top - pid %ld %s - elapsed %.1f s\n", t->pid,
		t->command, t->elapsed);
	fprintf(out, "heap now %" PRIu64 " B, peak %" PRIu64 " B, "
		"allocating %.0f B/s in %.0f calls/s\n", t->heap, t->peak,
		t->alloc_rate, t->call_rate);
	print_sampling(out, t);
	fprintf(out, "%14s %6s %14s %12s %10s %5s  %s\n", "LIVE_B", "HEAP%",
		"GROWTH_B", "ALLOC_B/S", "CALLS/S", "TEMP%", "SITE");
	size_t n = rows_shown(t);
	for (size_t i = 0; i < n; i++) {
		const struct top_row *r = &t->rows[i];
		fprintf(out, "%14" PRIu64 " %5.1f%% %+14" PRId64 " %12.0f "
			"%10.0f %4.0f%%  %s\n", r->live, heap_share(t, r),
			r->growth, r->alloc_rate, r->call_rate,
			temporary_share(r), r->name);
	}
	if (t->n_rows > n)
		fprintf(out, "(%zu more sites)\n", t->n_rows - n);
	fputc('\n', out);
}

static void
print_json_row(FILE *out, const struct top_table *t, const struct top_row *r)
{
	fputs("{\"site\":", out);
	json_string_write(out, r->name, false);
	fprintf(out, ",\"live_bytes\":%" PRIu64 ",\"heap_percent\":%.2f,"
		"\"growth_bytes\":%" PRId64 ",\"alloc_bytes_per_s\":%.1f,"
		"\"calls_per_s\":%.1f,\"calls\":%" PRIu64 ","
		"\"temporary_percent\":%.2f}", r->live, heap_share(t, r),
		r->growth, r->alloc_rate, r->call_rate, r->calls,
		temporary_share(r));
}

void
top_print_json(FILE *out, const struct top_table *t)
{
	fprintf(out, "{\"pid\":%ld,\"command\":", t->pid);
	json_string_write(out, t->command, false);
	fprintf(out, ",\"elapsed_s\":%.3f,\"heap_bytes\":%" PRIu64 ","
		"\"peak_bytes\":%" PRIu64 ",\"alloc_bytes_per_s\":%.1f,"
		"\"calls_per_s\":%.1f,\"sampling_interval\":%" PRIu64 ","
		"\"estimates\":%s,\"sites\":[", t->elapsed, t->heap, t->peak,
		t->alloc_rate, t->call_rate, t->sampling_interval,
		t->sampling_interval ? "true" : "false");
	size_t n = rows_shown(t);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc(',', out);
		print_json_row(out, t, &t->rows[i]);
	}
	fprintf(out, "],\"more_sites\":%zu}\n", t->n_rows - n);
}
