/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Line tables of each format: a function's table as each interpreter
   compiled it (tables and lines taken from 3.8 to 3.13's own co_lnotab,
   co_linetable, dis.findlinestarts and co_lines when this test was
   written), and hand-made tables for the edges: no location, long-form
   negative deltas, a table cut short. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "tracer/python/pypriv.h"

/* The function each table is of, first line 2:
	def f(a):
	    x = a + 1

	    y = [i for i in range(a)]
	    if x:
	        return y
	    return None */
/* Python 3.8: f's table, first line 2 */
static const uint8_t table38[] = {
	0x00, 0x01, 0x08, 0x02, 0x12, 0x01, 0x04, 0x01, 0x04, 0x01,
};
static const unsigned lines38[] = {
	3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 8, 8,
};

/* Python 3.9: f's table, first line 2 */
static const uint8_t table39[] = {
	0x00, 0x01, 0x08, 0x02, 0x12, 0x01, 0x04, 0x01, 0x04, 0x01,
};
static const unsigned lines39[] = {
	3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 8, 8,
};

/* Python 3.10: f's table, first line 2 */
static const uint8_t table310[] = {
	0x08, 0x01, 0x12, 0x02, 0x04, 0x01, 0x04, 0x01, 0x04, 0x01,
};
static const unsigned lines310[] = {
	3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 8, 8,
};

/* Python 3.11: f's table, first line 2 */
static const uint8_t table311[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41,
	0xe0, 0x08, 0x1d, 0xd0, 0x08, 0x1d, 0x95, 0x45, 0x98, 0x21, 0x91,
	0x48, 0x94, 0x48, 0xd0, 0x08, 0x1d, 0xd1, 0x08, 0x1d, 0xd4, 0x08,
	0x1d, 0x80, 0x41, 0xd8, 0x07, 0x08, 0xf0, 0x00, 0x01, 0x05, 0x11,
	0xd8, 0x0f, 0x10, 0x88, 0x08, 0xd8, 0x0b, 0x0f, 0x88, 0x34,
};
static const unsigned lines311[] = {
	2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 8, 8,
};

/* Python 3.12: f's table, first line 2 */
static const uint8_t table312[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41,
	0xe4, 0x14, 0x19, 0x98, 0x21, 0x93, 0x48, 0xd6, 0x08, 0x1d, 0x88,
	0x71, 0x8a, 0x11, 0xd0, 0x08, 0x1d, 0x80, 0x41, 0xd0, 0x08, 0x1d,
	0xd9, 0x07, 0x08, 0xd8, 0x0f, 0x10, 0x88, 0x08, 0xd8, 0x0b, 0x0f,
	0xf9, 0xf2, 0x07, 0x00, 0x09, 0x1e,
};
static const unsigned lines312[] = {
	2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 5, 5, 5, 5, 5, 6, 6, 7, 7, 8, 0, 0, 5, 5, 5,
};

/* Python 3.13: f's table, first line 2 */
static const uint8_t table313[] = {
	0x80, 0x00, 0xd8, 0x08, 0x09, 0x88, 0x41, 0x89, 0x05, 0x80, 0x41,
	0xe4, 0x14, 0x19, 0x98, 0x21, 0x94, 0x48, 0xd3, 0x08, 0x1d, 0x91,
	0x48, 0x88, 0x71, 0x8a, 0x11, 0x91, 0x48, 0x80, 0x41, 0xd0, 0x08,
	0x1d, 0xde, 0x07, 0x08, 0xd8, 0x0f, 0x10, 0x88, 0x08, 0xd8, 0x0b,
	0x0f, 0xf9, 0xf2, 0x07, 0x00, 0x09, 0x1e,
};
static const unsigned lines313[] = {
	2, 3, 3, 3, 3, 3, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
	5, 5, 5, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 7, 8, 0, 0, 5, 5, 5,
};

/* Every code unit of TABLE, in FORMAT, against LINES. */
static void
check_table(const char *what, enum py_line_format format,
	    const uint8_t *table, size_t len, const unsigned *lines, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned got = py_line_of(format, 2, table, len, i);
		CHECK(got == lines[i], "%s: index %zu: line %u, want %u",
		      what, i, got, lines[i]);
	}
}

#define TABLE(what, format, v) \
	check_table(what, format, table##v, sizeof(table##v), lines##v, \
		    sizeof(lines##v) / sizeof(lines##v[0]))

/* The line of INDEX in a hand-made table, a heap copy (so that a
   sanitizer sees a read past its end). */
static unsigned
line_in(enum py_line_format format, int first, const uint8_t *table,
	size_t len, uint64_t index)
{
	uint8_t *copy = malloc(len ? len : 1);
	unsigned line;

	memcpy(copy, table, len);
	line = py_line_of(format, first, copy, len, index);
	free(copy);
	return line;
}

static void
check_edges(void)
{
	/* 3.8: a negative line increment (a loop's back edge). */
	static const uint8_t lnotab[] = { 0, 1, 4, 3, 4, 0xfe };
	CHECK(line_in(PY_LINES_LNOTAB, 10, lnotab, 6, 0) == 11, "lnotab 0");
	CHECK(line_in(PY_LINES_LNOTAB, 10, lnotab, 6, 2) == 14, "lnotab 2");
	CHECK(line_in(PY_LINES_LNOTAB, 10, lnotab, 6, 4) == 12, "lnotab 4");
	/* 3.10: -128, a range with no line. */
	static const uint8_t linetable[] = { 4, 1, 4, 0x80, 4, 2 };
	CHECK(line_in(PY_LINES_LINETABLE, 10, linetable, 6, 1) == 11, "lt 1");
	CHECK(line_in(PY_LINES_LINETABLE, 10, linetable, 6, 2) == 0, "lt 2");
	CHECK(line_in(PY_LINES_LINETABLE, 10, linetable, 6, 5) == 13, "lt 5");
	CHECK(line_in(PY_LINES_LINETABLE, 10, linetable, 6, 6) == 0,
	      "lt past its end");
	/* 3.11+: no location (15), long form -3 (14: zigzag 7, three
	   columns), no column +2 (13), a two-chunk varint (+100: 200 is
	   0x48 0x03), short form (same line). */
	static const uint8_t loc[] = {
		0xf8,
		0xf0, 0x07, 0x00, 0x00, 0x00,
		0xe9, 0x04,
		0xe8, 0x48, 0x03,
		0x80, 0x05,
	};
	size_t n = sizeof(loc);
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 0) == 0, "loc none");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 1) == 7, "loc long");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 2) == 9, "loc 13 a");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 3) == 9, "loc 13 b");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 4) == 109, "loc big");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 5) == 109, "loc short");
	CHECK(line_in(PY_LINES_LOCATIONS, 10, loc, n, 6) == 0, "loc past");
	/* Cut short: nothing read past the end, no line made up. */
	for (size_t len = 0; len < n; len++)
		for (uint64_t i = 0; i < 8; i++)
			(void)line_in(PY_LINES_LOCATIONS, 10, loc, len, i);
	static const uint8_t bad[] = { 0x05, 0x80 };
	CHECK(line_in(PY_LINES_LOCATIONS, 10, bad, 2, 0) == 0,
	      "an entry without its start bit");
}

int
main(void)
{
	TABLE("3.8", PY_LINES_LNOTAB, 38);
	TABLE("3.9", PY_LINES_LNOTAB, 39);
	TABLE("3.10", PY_LINES_LINETABLE, 310);
	TABLE("3.11", PY_LINES_LOCATIONS, 311);
	TABLE("3.12", PY_LINES_LOCATIONS, 312);
	TABLE("3.13", PY_LINES_LOCATIONS, 313);
	check_edges();
	return failures ? 1 : 0;
}
