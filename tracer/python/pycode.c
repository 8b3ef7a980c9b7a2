/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Code objects read out of the target and cached by address: each one's
   name, file, first line and line table. A code object can be freed and
   its address reused by another, so a cached one is checked again (its
   type, and its name, file and table pointers) once per epoch of the
   cache, a millisecond: a reused address with the same three pointers
   names the same function anyway. A cached one whose memory holds no
   code object any more is kept (py_code_get): the records that name it
   were made before it was freed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/monotonic.h"
#include "common/xalloc.h"
#include "tracer/python/pypriv.h"
#include "tracer/target/target.h"

#define EPOCH_NS 1000000ull
#define MAX_STRING 4096
#define MAX_TABLE (1u << 20)
#define MAX_CACHED (1u << 20)
/* Bytes read at once at a string or bytes object: header and a short
   text in one read. */
#define FIRST_READ 256

void
py_code_cache_tick(struct py_code_cache *c)
{
	uint64_t now = ht_monotonic_ns();

	if (now - c->epoch_ns >= EPOCH_NS) {
		c->epoch++;
		c->epoch_ns = now;
	}
}

static uint64_t
load64(const uint8_t *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static int32_t
load32(const uint8_t *b, size_t off)
{
	int32_t v;

	memcpy(&v, b + off, 4);
	return v;
}

/* Append code point CP to OUT (at *N of CAP bytes) as UTF-8. */
static void
put_utf8(char *out, size_t *n, size_t cap, uint32_t cp)
{
	uint8_t b[4];
	size_t k;

	if (cp < 0x80) {
		b[0] = (uint8_t)cp, k = 1;
	} else if (cp < 0x800) {
		b[0] = (uint8_t)(0xc0 | cp >> 6), k = 2;
	} else if (cp < 0x10000) {
		b[0] = (uint8_t)(0xe0 | cp >> 12), k = 3;
	} else {
		b[0] = (uint8_t)(0xf0 | (cp >> 18 & 7)), k = 4;
	}
	for (size_t i = 1; i < k; i++)
		b[i] = (uint8_t)(0x80 | (cp >> (6 * (k - 1 - i)) & 0x3f));
	if (*n + k < cap) {
		memcpy(out + *n, b, k);
		*n += k;
	}
}

/* The text of the compact str object at ADDR, as UTF-8, or NULL. */
static char *
read_str(const struct py_interp *py, uint64_t addr)
{
	const struct py_code_layout *l = &py->code;
	uint8_t buf[FIRST_READ + 16];
	ssize_t got = mem_read(py->pid, addr, buf, FIRST_READ);

	if (got < (ssize_t)l->compact_size)
		return NULL;
	uint64_t length = load64(buf, 16);
	uint32_t state = (uint32_t)load32(buf, 32);
	unsigned kind = state >> 2 & 7, compact = state >> 5 & 1,
		 ascii = state >> 6 & 1;

	/* The state word is the target's: memory reused since may hold any
	   bits, and an ASCII flag beside a wide kind would read past the
	   text. */
	if (!compact || length > MAX_STRING ||
	    (kind != 1 && kind != 2 && kind != 4) || (ascii && kind != 1))
		return NULL;
	size_t start = ascii ? l->ascii_size : l->compact_size;
	size_t bytes = (size_t)length * kind;
	uint8_t *text = ht_xmalloc(bytes + 1);

	if (start + bytes <= (size_t)got)
		memcpy(text, buf + start, bytes);
	else if (mem_read(py->pid, addr + start, text, bytes) !=
		 (ssize_t)bytes) {
		free(text);
		return NULL;
	}
	size_t cap = (size_t)length * 4 + 1, n = 0;
	char *out = ht_xmalloc(cap);

	for (size_t i = 0; i < length; i++) {
		uint32_t cp = kind == 1 ? text[i]
			    : kind == 2 ? (uint32_t)(text[2 * i] |
						     text[2 * i + 1] << 8)
			    : (uint32_t)load32(text, 4 * i);
		put_utf8(out, &n, cap, cp);
	}
	out[n] = 0;
	free(text);
	return out;
}

/* The bytes of the bytes object at ADDR into *OUT (malloc'd), or -1. */
static int
read_bytes(const struct py_interp *py, uint64_t addr, uint8_t **out,
	   size_t *len)
{
	uint8_t buf[FIRST_READ];
	ssize_t got = mem_read(py->pid, addr, buf, sizeof(buf));

	if (got < 32)
		return -1;
	uint64_t n = load64(buf, 16);

	if (n > MAX_TABLE)
		return -1;
	*out = ht_xmalloc(n ? n : 1);
	*len = n;
	if (32 + n <= (uint64_t)got)
		memcpy(*out, buf + 32, n);
	else if (mem_read(py->pid, addr + 32, *out, n) != (ssize_t)n) {
		free(*out);
		return -1;
	}
	return 0;
}

void
py_code_display_name(const char *function, const char *file, char *out,
		     size_t len)
{
	const char *base = strrchr(file, '/');
	size_t flen = strlen(file);

	base = base ? base + 1 : file;
	if (flen < 3 || strcmp(file + flen - 3, ".py") != 0) {
		snprintf(out, len, "%s", function);
		return;
	}
	int stem = (int)(file + flen - 3 - base);

	/* A package's __init__.py: the package's directory names it. */
	if (stem == 8 && strncmp(base, "__init__", 8) == 0 && base > file + 1) {
		const char *dir = base - 1;

		while (dir > file && dir[-1] != '/')
			dir--;
		stem = (int)(base - 1 - dir);
		base = dir;
	}
	snprintf(out, len, "%.*s.%s", stem, base, function);
}

static void
code_clear(struct py_code *e)
{
	free(e->function);
	free(e->file);
	free(e->table);
	memset(e, 0, sizeof(*e));
}

/* Read the code object at ADDR into E, whose header HDR is read. */
static void
code_fill(struct py_interp *py, struct py_code *e, uint64_t addr,
	  const uint8_t *hdr)
{
	const struct py_code_layout *l = &py->code;
	uint64_t qual = l->qualname ? load64(hdr, l->qualname) : 0;
	char *name = NULL;

	e->addr = addr;
	e->checked = py->cache.epoch;
	e->filename_p = load64(hdr, l->filename);
	e->name_p = load64(hdr, l->name);
	e->linetable_p = load64(hdr, l->linetable);
	e->firstlineno = load32(hdr, l->firstlineno);
	e->firsttraceable = l->firsttraceable ? load32(hdr, l->firsttraceable)
					      : 0;
	py->stats.code_reads++;
	e->serial = ++py->cache.next_serial;
	e->file = read_str(py, e->filename_p);
	name = read_str(py, qual ? qual : e->name_p);
	if (!e->file || !name ||
	    read_bytes(py, e->linetable_p, &e->table, &e->table_len)) {
		free(name);
		free(e->file);
		e->file = NULL;
		return;
	}
	size_t len = strlen(name) + strlen(e->file) + 2;

	e->function = ht_xmalloc(len);
	py_code_display_name(name, e->file, e->function, len);
	free(name);
	e->valid = true;
}

static size_t
slot_of(uint64_t addr, size_t cap)
{
	return (size_t)((addr >> 4) * 0x9e3779b97f4a7c15ull >> 20) & (cap - 1);
}

static struct py_code *
cache_find(struct py_code_cache *c, uint64_t addr)
{
	if (!c->cap)
		return NULL;
	for (size_t i = slot_of(addr, c->cap);; i = (i + 1) & (c->cap - 1)) {
		if (c->slots[i].addr == addr)
			return &c->slots[i];
		if (!c->slots[i].addr)
			return NULL;
	}
}

/* A free slot for ADDR (not in C), the table grown or emptied first
   when it is full enough. */
static struct py_code *
cache_insert(struct py_code_cache *c, uint64_t addr)
{
	if (c->n >= MAX_CACHED) {
		uint64_t epoch = c->epoch, ns = c->epoch_ns,
			 serial = c->next_serial;

		py_code_cache_free(c);
		c->epoch = epoch, c->epoch_ns = ns, c->next_serial = serial;
	}
	if (2 * (c->n + 1) > c->cap) {
		struct py_code *old = c->slots;
		size_t oldcap = c->cap;

		c->cap = oldcap ? 2 * oldcap : 256;
		c->slots = ht_xcalloc(c->cap, sizeof(*c->slots));
		c->n = 0;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].addr)
				*cache_insert(c, old[i].addr) = old[i];
		free(old);
	}
	size_t i = slot_of(addr, c->cap);

	while (c->slots[i].addr)
		i = (i + 1) & (c->cap - 1);
	c->n++;
	c->slots[i].addr = addr;
	return &c->slots[i];
}

/* Whether cached E still describes the object at its address. */
static bool
still_same(struct py_interp *py, const struct py_code *e, const uint8_t *hdr)
{
	const struct py_code_layout *l = &py->code;

	return load64(hdr, 8) == py->code_type &&
	       load64(hdr, l->filename) == e->filename_p &&
	       load64(hdr, l->name) == e->name_p &&
	       load64(hdr, l->linetable) == e->linetable_p;
}

const struct py_code *
py_code_get(struct py_interp *py, uint64_t addr)
{
	struct py_code_cache *c = &py->cache;
	struct py_code *e = cache_find(c, addr);
	uint8_t hdr[512];

	if (e && e->checked == c->epoch)
		return e->valid ? e : NULL;
	if (!addr || addr & 7 ||
	    mem_read(py->pid, addr, hdr, py->code.header) !=
		    (ssize_t)py->code.header ||
	    load64(hdr, 8) != py->code_type) {
		/* No code object there now. The words drained were recorded
		   up to milliseconds ago, when one was: a module's body, a
		   function made by exec, freed since. The one cached is the
		   best name for them (another code object made and freed
		   at that address in between is the rare case), so it
		   stays; only a different code object there replaces it. */
		if (e && e->valid) {
			e->checked = c->epoch;
			return e;
		}
		if (!e)
			e = cache_insert(c, addr);
		code_clear(e);
		e->addr = addr;
		e->checked = c->epoch;
		return NULL;
	}
	if (e && e->valid && still_same(py, e, hdr)) {
		e->checked = c->epoch;
		return e;
	}
	if (!e)
		e = cache_insert(c, addr);
	code_clear(e);
	code_fill(py, e, addr, hdr);
	return e->valid ? e : NULL;
}

void
py_code_cache_free(struct py_code_cache *c)
{
	for (size_t i = 0; i < c->cap; i++)
		code_clear(&c->slots[i]);
	free(c->slots);
	free(c->words);
	memset(c, 0, sizeof(*c));
}

static char *
dup_or_null(const char *s)
{
	return s ? ht_xstrdup(s) : NULL;
}

void
py_code_cache_copy(struct py_code_cache *dst, const struct py_code_cache *src)
{
	*dst = *src;
	dst->words = NULL;
	dst->slots = src->cap ? ht_xcalloc(src->cap, sizeof(*dst->slots))
			      : NULL;
	for (size_t i = 0; i < src->cap; i++) {
		struct py_code *d = &dst->slots[i];
		const struct py_code *s = &src->slots[i];

		*d = *s;
		d->function = dup_or_null(s->function);
		d->file = dup_or_null(s->file);
		d->table = NULL;
		if (s->table) {
			d->table = ht_xmalloc(s->table_len ? s->table_len : 1);
			memcpy(d->table, s->table, s->table_len);
		}
	}
}
