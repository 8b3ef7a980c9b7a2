/* SPDX-License-Identifier: GPL-2.0-or-later */
/* output/pprof_build.c's tables: each string, function, mapping and
   location kept once however often it is asked for, different ones never
   sharing an ID, and the encoding a gzip stream. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "output/pprof_build.h"
#include "tests/check.h"

static const char *const types[] = { "alloc_space", "inuse_space" };
static const char *const units[] = { "bytes", "bytes" };

static void
case_dedup(void)
{
	struct pprof_build *b = pprof_build_new(types, units, 2, "space",
						"bytes", 1);
	/* "", the two types, their unit, the period's two names */
	struct pprof_build_counts c;
	pprof_build_counts(b, &c);
	CHECK(c.strings == 5, "%zu strings at first", c.strings);
	CHECK(pprof_build_string(b, "") == 0, "\"\" is not 0");
	CHECK(pprof_build_string(b, "bytes") ==
	      pprof_build_string(b, "bytes"), "bytes twice");
	int64_t s1 = pprof_build_string(b, "main");
	char name[32];
	for (int i = 0; i < 5000; i++) { /* many, so that tables grow */
		snprintf(name, sizeof(name), "fn%d", i);
		pprof_build_string(b, name);
	}
	CHECK(pprof_build_string(b, "main") == s1, "main moved");
	snprintf(name, sizeof(name), "fn%d", 4321);
	int64_t s2 = pprof_build_string(b, name);
	CHECK(s2 == pprof_build_string(b, "fn4321") && s2 != s1,
	      "fn4321: %lld", (long long)s2);

	uint64_t m1 = pprof_build_mapping(b, 0x1000, 0x2000, 0, "/bin/x",
					  "abcd");
	uint64_t m2 = pprof_build_mapping(b, 0x1000, 0x2000, 0, "/bin/x",
					  "abcd");
	uint64_t m3 = pprof_build_mapping(b, 0x3000, 0x4000, 0, "/lib/y",
					  NULL);
	CHECK(m1 == 1 && m2 == 1 && m3 == 2, "mappings %llu %llu %llu",
	      (unsigned long long)m1, (unsigned long long)m2,
	      (unsigned long long)m3);

	struct pprof_line inl[2] = {
		{ "inl", "t.h", 2 }, { "caller", "t.c", 4 },
	};
	struct pprof_line other[2] = {
		{ "inl", "t.h", 3 }, { "caller", "t.c", 4 },
	};
	uint64_t l1 = pprof_build_location(b, m1, 0x1100, inl, 2);
	uint64_t l2 = pprof_build_location(b, m1, 0x1100, inl, 2);
	uint64_t l3 = pprof_build_location(b, m1, 0x1100, other, 2);
	uint64_t l4 = pprof_build_location(b, m1, 0x1200, inl, 2);
	uint64_t l5 = pprof_build_location(b, m1, 0x1100, inl, 1);
	CHECK(l1 == 1 && l2 == 1, "same location: %llu %llu",
	      (unsigned long long)l1, (unsigned long long)l2);
	CHECK(l3 == 2 && l4 == 3 && l5 == 4, "other locations %llu %llu %llu",
	      (unsigned long long)l3, (unsigned long long)l4,
	      (unsigned long long)l5);
	for (uint64_t a = 0; a < 3000; a++)
		pprof_build_location(b, m3, 0x3000 + a, inl, 2);
	CHECK(pprof_build_location(b, m1, 0x1100, other, 2) == 2,
	      "location 2 moved");
	pprof_build_counts(b, &c);
	/* inl and caller: the same two functions in every location */
	CHECK(c.functions == 2, "%zu functions", c.functions);
	CHECK(c.locations == 3004, "%zu locations", c.locations);
	CHECK(c.mappings == 2, "%zu mappings", c.mappings);

	uint64_t stack[2] = { l1, l4 };
	int64_t zero[2] = { 0, 0 }, some[2] = { 100, 40 };
	pprof_build_sample(b, stack, 2, zero);
	pprof_build_sample(b, stack, 2, some);
	pprof_build_counts(b, &c);
	CHECK(c.samples == 1, "%zu samples (a sample of zeros is left out)",
	      c.samples);

	uint8_t *data;
	size_t len;
	CHECK(pprof_build_encode(b, &data, &len) == 0, "encode");
	CHECK(len > 18 && data[0] == 0x1f && data[1] == 0x8b,
	      "not a gzip stream (%zu bytes)", len);
	free(data);
	pprof_build_free(b);
}

int
main(void)
{
	case_dedup();
	return failures ? 1 : 0;
}
