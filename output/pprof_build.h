/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A pprof profile being built (output/pprof_profile.proto, encoded by
   libprotobuf-c): its string table, functions, mappings and locations each
   kept once, looked up by hash, so that a profile of many samples sharing
   frames stays as small as the frames are few. */
#ifndef HT_OUTPUT_PPROF_BUILD_H
#define HT_OUTPUT_PPROF_BUILD_H

#include <stddef.h>
#include <stdint.h>

struct pprof_build;

/* One line of a location: an inlined function or the real one. */
struct pprof_line {
	const char *function; /* its name; NULL: "???" */
	const char *file;     /* NULL when not known */
	int64_t line;         /* 0 when not known */
};

/* An empty profile whose samples have the N_TYPES value types TYPES and
   UNITS ("inuse_space", "bytes"), the period type PERIOD_TYPE/PERIOD_UNIT
   and period PERIOD. */
struct pprof_build *pprof_build_new(const char *const *types,
				    const char *const *units, size_t n_types,
				    const char *period_type,
				    const char *period_unit, int64_t period);

/* Free B and everything it holds; NULL is a no-op. */
void pprof_build_free(struct pprof_build *b);

/* The string table index of S (added when new; "" is 0). */
int64_t pprof_build_string(struct pprof_build *b, const char *s);

/* The ID of the mapping starting at START (added when new, with its
   LIMIT, OFFSET, FILE and BUILD_ID, either NULL; a mapping is known by
   its start). */
uint64_t pprof_build_mapping(struct pprof_build *b, uint64_t start,
			     uint64_t limit, uint64_t offset, const char *file,
			     const char *build_id);

/* The ID of the location at ADDRESS in mapping MAPPING_ID (0: none) whose
   N_LINES lines are LINES, innermost first (added when no location has
   the same address, mapping and lines). A synthetic ADDRESS (a Python
   frame, common/synthframe.h) makes functions without a system name. */
uint64_t pprof_build_location(struct pprof_build *b, uint64_t mapping_id,
			      uint64_t address, const struct pprof_line *lines,
			      size_t n_lines);

/* A sample: its N location IDs, innermost first, and one value per value
   type. Samples with all values 0 are left out. */
void pprof_build_sample(struct pprof_build *b, const uint64_t *locations,
			size_t n, const int64_t *values);

/* The profile was written at TIME_NANOS (since the epoch) and covers
   DURATION_NANOS; 0 when not known. */
void pprof_build_times(struct pprof_build *b, int64_t time_nanos,
		       int64_t duration_nanos);

/* A comment line for the profile's readers (go tool pprof -raw shows
   them). */
void pprof_build_comment(struct pprof_build *b, const char *text);

/* How many strings, functions, locations, mappings and samples B holds
   (for tests). */
struct pprof_build_counts {
	size_t strings, functions, locations, mappings, samples;
};
void pprof_build_counts(const struct pprof_build *b,
			struct pprof_build_counts *out);

/* B encoded as profile.proto and gzip'd, into *OUT (malloc'd) and *LEN.
   Returns 0, or -1 when zlib fails. */
int pprof_build_encode(const struct pprof_build *b, uint8_t **out,
		       size_t *len);

#endif
