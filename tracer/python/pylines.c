/* SPDX-License-Identifier: GPL-2.0-or-later */
/* From an instruction to its line, in each version's line table: 3.8 and
   3.9's co_lnotab (byte offsets), 3.10's co_linetable (ranges of bytes),
   3.11's location table (code units, with columns we skip). A table read
   from a target may be anything: every read stays inside it. */
#include "tracer/python/pypriv.h"

/* 3.8, 3.9: (address increment, signed line increment) pairs, the line
   of the last pair whose address is not past OFF (bytes). */
static unsigned
line_lnotab(int line, const uint8_t *t, size_t len, uint64_t off)
{
	uint64_t addr = 0;

	for (size_t k = 0; k + 1 < len; k += 2) {
		addr += t[k];
		if (addr > off)
			break;
		line += (int8_t)t[k + 1];
	}
	return line > 0 ? (unsigned)line : 0;
}

/* 3.10: (length in bytes, signed line delta or -128: no line) pairs,
   each a range of addresses; OFF in bytes. */
static unsigned
line_linetable(int line, const uint8_t *t, size_t len, uint64_t off)
{
	uint64_t addr = 0;

	for (size_t k = 0; k + 1 < len; k += 2) {
		int delta = (int8_t)t[k + 1];
		uint64_t end = addr + t[k];

		if (delta != -128)
			line += delta;
		if (addr <= off && off < end)
			return delta == -128 || line <= 0 ? 0 : (unsigned)line;
		addr = end;
	}
	return 0;
}

/* A cursor over a location table: reads past its end give 0. */
struct cursor {
	const uint8_t *t;
	size_t len, i;
};

static uint8_t
next_byte(struct cursor *c)
{
	return c->i < c->len ? c->t[c->i++] : 0;
}

/* 6 bits a byte, low first, 0x40 while more follow. */
static uint64_t
varint(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = next_byte(c);
		if (shift < 64)
			v |= (uint64_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64 && c->i < c->len);
	return v;
}

/* A varint with its sign in the low bit. */
static int64_t
svarint(struct cursor *c)
{
	uint64_t v = varint(c);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/* 3.11+: entries of a first byte 1ccccLLL (code c, L+1 code units), then
   code 15 nothing (no location), 14 a line delta and three columns, 13 a
   line delta, 10-12 line delta c-10 and two column bytes, 0-9 one column
   byte (the same line). INDEX in code units. */
static unsigned
line_locations(int line, const uint8_t *t, size_t len, uint64_t index)
{
	struct cursor c = { t, len, 0 };
	uint64_t addr = 0;

	while (c.i < c.len) {
		uint8_t first = next_byte(&c);
		unsigned code = first >> 3 & 15, length = (first & 7) + 1;
		bool none = false;

		if (!(first & 0x80))
			return 0; /* lost the entries' start: a bad table */
		if (code == 15) {
			none = true;
		} else if (code == 14) {
			line += (int)svarint(&c);
			varint(&c);
			varint(&c);
			varint(&c);
		} else if (code == 13) {
			line += (int)svarint(&c);
		} else if (code >= 10) {
			line += (int)code - 10;
			c.i += 2;
		} else {
			c.i += 1;
		}
		if (addr <= index && index < addr + length)
			return none || line <= 0 ? 0 : (unsigned)line;
		addr += length;
	}
	return 0;
}

unsigned
py_line_of(enum py_line_format format, int firstlineno, const uint8_t *table,
	   size_t len, uint64_t index)
{
	switch (format) {
	case PY_LINES_LNOTAB:
		return line_lnotab(firstlineno, table, len, index * 2);
	case PY_LINES_LINETABLE:
		return line_linetable(firstlineno, table, len, index * 2);
	case PY_LINES_LOCATIONS:
		return line_locations(firstlineno, table, len, index);
	}
	return 0;
}
