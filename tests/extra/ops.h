/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The .ops format shared by the Massif-side replay program and the model
   replay test: one allocator call per line, on numbered pointer slots.
     m ID SIZE          malloc         c ID COUNT SIZE  calloc
     a ID ALIGN SIZE    memalign       p ID ALIGN SIZE  posix_memalign
     A ID ALIGN SIZE    aligned_alloc  v ID SIZE        valloc
     r ID SIZE          realloc        f ID             free
   '#' starts a comment line. Header-only and allocation-free, because the
   replay program must not touch the heap itself. */
#ifndef HT_TESTS_EXTRA_OPS_H
#define HT_TESTS_EXTRA_OPS_H

#include <stddef.h>
#include <stdint.h>

#define OPS_MAX		4096
#define OPS_SLOTS	4096

struct op {
	char kind;
	uint32_t id;
	uint64_t count; /* calloc only */
	uint64_t align; /* memalign family only, as written */
	uint64_t size;
};

static inline size_t
ops_strlen(const char *s)
{
	size_t n = 0;

	while (s[n])
		n++;
	return n;
}

/* Parse an unsigned decimal number at *P, skipping blanks before it. */
static inline int
ops_number(const char **p, uint64_t *v)
{
	const char *s = *p;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	for (*v = 0; *s >= '0' && *s <= '9'; s++)
		*v = *v * 10 + (uint64_t)(*s - '0');
	*p = s;
	return 0;
}

/* How many numbers follow the letter of each kind of line. */
static inline int
ops_arity(char kind)
{
	switch (kind) {
	case 'f':
		return 1;
	case 'm':
	case 'v':
	case 'r':
		return 2;
	case 'c':
	case 'a':
	case 'p':
	case 'A':
		return 3;
	}
	return -1;
}

/* Parse one line starting at S into *O. */
static inline int
ops_parse_line(const char *s, struct op *o)
{
	uint64_t v[3] = { 0, 0, 0 };
	int n = ops_arity(*s);

	if (n < 0)
		return -1;
	o->kind = *s++;
	for (int i = 0; i < n; i++)
		if (ops_number(&s, &v[i]))
			return -1;
	if (v[0] >= OPS_SLOTS)
		return -1;
	o->id = (uint32_t)v[0];
	o->count = o->kind == 'c' ? v[1] : 0;
	o->align = o->kind == 'c' || n < 3 ? 0 : v[1];
	o->size = n == 1 ? 0 : v[n - 1];
	if (o->kind == 'v')
		o->align = 4096;
	return 0;
}

/* Parse TEXT (NUL-terminated) into at most MAX operations. Returns their
   number, or -1 on a malformed line. */
static inline int
ops_parse(const char *text, struct op *ops, int max)
{
	int n = 0;

	while (*text) {
		while (*text == ' ' || *text == '\t')
			text++;
		if (*text != '#' && *text != '\n') {
			if (n == max || ops_parse_line(text, &ops[n]))
				return -1;
			n++;
		}
		while (*text && *text != '\n')
			text++;
		if (*text)
			text++;
	}
	return n;
}

#endif
