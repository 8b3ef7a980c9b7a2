/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The massif.out reader (massif-semantics §1). It accepts what ms_print
   accepts where that is sensible: blank lines and lines that are only a
   comment are skipped anywhere, a "key=value" line may end in blanks and
   a comment, indentation and the blanks after "nN:" are free. Text (desc,
   cmd, labels) is kept as written, comments included: cutting them is
   the printer's business. Several desc: lines are joined by newlines. */
#include "massif_read.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

/* The file's text and where the reader is in it. */
struct lines {
	const char *path;
	char *buf;          /* the whole file, each line's '\n' made a NUL */
	size_t len, pos;
	unsigned lineno;    /* of the line in LINE */
	char *line;         /* the current line, NULL at the end */
	char *err;
	size_t errlen;
};

static int
fail(struct lines *ls, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "PATH:LINE: reason"; returns -1 for the caller to return. */
static int
fail(struct lines *ls, const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	snprintf(ls->err, ls->errlen, "%s:%u: %s", ls->path, ls->lineno, why);
	return -1;
}

static bool
is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static char *
skip_blanks(char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

/* Blank lines and comment lines carry nothing, for ms_print neither. */
static bool
is_filler(char *line)
{
	const char *p = skip_blanks(line);
	return *p == '\0' || *p == '#';
}

/* Moves to the next line that carries something; false at the end. */
static bool
next_line(struct lines *ls)
{
	while (ls->pos < ls->len) {
		char *start = ls->buf + ls->pos;
		char *nl = memchr(start, '\n', ls->len - ls->pos);
		size_t n = nl ? (size_t)(nl - start) : ls->len - ls->pos;

		start[n] = '\0';
		ls->pos += n + 1;
		ls->lineno++;
		if (!is_filler(start)) {
			ls->line = start;
			return true;
		}
	}
	ls->line = NULL;
	return false;
}

/* The file's bytes, NUL-terminated; a NUL inside is refused, as it would
   cut a line short unseen. */
static int
slurp(struct lines *ls)
{
	FILE *f = fopen(ls->path, "re");
	if (!f) {
		snprintf(ls->err, ls->errlen, "cannot open %s: %s", ls->path,
			 strerror(errno));
		return -1;
	}
	size_t cap = 0;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		ht_xgrow((void **)&ls->buf, &cap, ls->len + n + 1, 1);
		memcpy(ls->buf + ls->len, chunk, n);
		ls->len += n;
	}
	int rerr = ferror(f) ? errno : 0;
	fclose(f);
	if (rerr) {
		snprintf(ls->err, ls->errlen, "cannot read %s: %s", ls->path,
			 strerror(rerr));
		return -1;
	}
	ht_xgrow((void **)&ls->buf, &cap, ls->len + 1, 1);
	ls->buf[ls->len] = '\0';
	if (memchr(ls->buf, '\0', ls->len)) {
		snprintf(ls->err, ls->errlen, "%s: not a massif.out file "
			 "(it holds a NUL byte)", ls->path);
		return -1;
	}
	return 0;
}

/* Decimal digits at *P into *V, *P moved past them; false when there are
   none or the number does not fit 64 bits. */
static bool
take_u64(char **p, uint64_t *v)
{
	char *s = *p;
	uint64_t n = 0;

	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');
		if (n > (UINT64_MAX - d) / 10)
			return false;
		n = n * 10 + d;
	}
	*v = n;
	*p = s;
	return true;
}

/* Nothing after a value but blanks and a comment. */
static bool
at_value_end(char *p)
{
	p = skip_blanks(p);
	return *p == '\0' || *p == '#';
}

/* The value of a "NAME=..." line, the next one: a pointer into the line. */
static int
field_text(struct lines *ls, const char *name, char **value)
{
	size_t n = strlen(name);

	if (!next_line(ls))
		return fail(ls, "expected \"%s=\", got the end of the file",
			    name);
	if (strncmp(ls->line, name, n) != 0 || ls->line[n] != '=')
		return fail(ls, "expected \"%s=\", got \"%.60s\"", name,
			    ls->line);
	*value = ls->line + n + 1;
	return 0;
}

static int
field_u64(struct lines *ls, const char *name, uint64_t *v)
{
	char *p;

	if (field_text(ls, name, &p))
		return -1;
	if (!take_u64(&p, v) || !at_value_end(p))
		return fail(ls, "%s= needs a number below 2^64, not \"%.40s\"",
			    name, ls->line + strlen(name) + 1);
	return 0;
}

/* Reads "NAME:" lines' text (after the name and, for the first, one
   blank) joined by newlines: there must be at least one. Stops on the
   line after them when REPEATS, else on the (only) one. */
static int
header_text(struct lines *ls, const char *name, bool repeats, char **out)
{
	size_t n = strlen(name);
	char *joined = NULL;

	while (ls->line && strncmp(ls->line, name, n) == 0) {
		char *text = ls->line + n;
		if (!joined) {
			joined = ht_xstrdup(*text == ' ' ? text + 1 : text);
		} else {
			char *more = ht_xasprintf("%s\n%s", joined, text);
			free(joined);
			joined = more;
		}
		if (!repeats)
			break;
		next_line(ls);
	}
	if (!joined)
		return ls->line ?
		       fail(ls, "expected \"%s\", got \"%.60s\"", name,
			    ls->line) :
		       fail(ls, "expected \"%s\", got the end of the file",
			    name);
	*out = joined;
	return 0;
}

static bool
is_time_unit(const char *s)
{
	return !strcmp(s, "i") || !strcmp(s, "ms") || !strcmp(s, "B");
}

/* Blanks at the end of S dropped. */
static void
trim_end(char *s)
{
	size_t n = strlen(s);
	while (n && is_blank(s[n - 1]))
		s[--n] = '\0';
}

/* Massif writes an argument's line break as it is ($'a\nb' gives "cmd: a"
   and a line "b"), which ms_print refuses: lines before "time_unit:"
   belong to the command. */
static void
cmd_continued(struct lines *ls, char **cmd)
{
	while (ls->line && strncmp(ls->line, "time_unit:", 10) != 0) {
		char *more = ht_xasprintf("%s\n%s", *cmd, ls->line);
		free(*cmd);
		*cmd = more;
		next_line(ls);
	}
}

static int
header_read(struct lines *ls, struct mf_file *f)
{
	next_line(ls);
	if (header_text(ls, "desc:", true, &f->desc) ||
	    header_text(ls, "cmd:", false, &f->cmd))
		return -1;
	/* cmd: and time_unit: take no leading blanks, as in ms_print */
	memmove(f->cmd, skip_blanks(f->cmd), strlen(skip_blanks(f->cmd)) + 1);
	next_line(ls);
	cmd_continued(ls, &f->cmd);
	if (header_text(ls, "time_unit:", false, &f->time_unit))
		return -1;
	char *unit = skip_blanks(f->time_unit);
	memmove(f->time_unit, unit, strlen(unit) + 1);
	trim_end(f->time_unit);
	if (!is_time_unit(f->time_unit))
		return fail(ls, "time_unit: must be i, ms or B, not \"%.20s\"",
			    f->time_unit);
	next_line(ls);
	return 0;
}

/* "0x1A2B: ..." gives 0x1A2B; other labels have no address. */
static uint64_t
label_addr(const char *label)
{
	uint64_t a = 0;
	const char *p = label + 2;

	if (label[0] != '0' || label[1] != 'x')
		return 0;
	for (; (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'F') ||
	       (*p >= 'a' && *p <= 'f'); p++) {
		unsigned d = *p <= '9' ? (unsigned)(*p - '0') :
			     (unsigned)((*p | 0x20) - 'a' + 10);
		if (a > (UINT64_MAX >> 4))
			return 0;
		a = a << 4 | d;
	}
	return *p == ':' ? a : 0;
}

/* Massif's "in 1 place, below ..." and "in N places, all below ...". */
static bool
label_is_aggregate(const char *label)
{
	const char *p = label;

	if (strncmp(p, "in ", 3) != 0)
		return false;
	p += 3;
	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	return strncmp(p, " place", 6) == 0;
}

/* "  nC: BYTES LABEL" into *ND (its label allocated). */
static int
node_parse(struct lines *ls, struct mf_node *nd)
{
	char *p = skip_blanks(ls->line);
	uint64_t n;

	if (*p++ != 'n' || !take_u64(&p, &n) || n > UINT32_MAX || *p++ != ':')
		return fail(ls, "expected a tree line \"nC: BYTES ...\", got "
			    "\"%.60s\"", ls->line);
	p = skip_blanks(p);
	if (!take_u64(&p, &nd->bytes) || (*p != '\0' && *p != ' '))
		return fail(ls, "expected a tree line \"nC: BYTES ...\" (BYTES "
			    "a number below 2^64), got \"%.60s\"", ls->line);
	if (*p == ' ')
		p++;
	nd->n_children = (uint32_t)n;
	nd->label = ht_xstrdup(p);
	nd->addr = label_addr(p);
	nd->aggregate = label_is_aggregate(p);
	return 0;
}

/* The preorder lines of one tree: as many as the child counts announce. */
static int
tree_read(struct lines *ls, struct mf_snapshot *s)
{
	size_t cap = 0;
	uint64_t pending = 1;   /* lines the counts so far still announce */

	while (pending) {
		if (!next_line(ls))
			return fail(ls, "the file ends inside snapshot %u's tree "
				    "(%" PRIu64 " more lines announced)",
				    s->number, pending);
		ht_xgrow((void **)&s->tree, &cap, s->n_tree + 1,
			 sizeof(*s->tree));
		struct mf_node *nd = &s->tree[s->n_tree];
		memset(nd, 0, sizeof(*nd));
		if (node_parse(ls, nd))
			return -1;
		s->n_tree++;
		pending = pending - 1 + nd->n_children;
	}
	return 0;
}

static int
kind_parse(struct lines *ls, struct mf_snapshot *s)
{
	char *v;

	if (field_text(ls, "heap_tree", &v))
		return -1;
	trim_end(v);
	if (!strcmp(v, "empty"))
		s->kind = MF_EMPTY;
	else if (!strcmp(v, "detailed"))
		s->kind = MF_DETAILED;
	else if (!strcmp(v, "peak"))
		s->kind = MF_PEAK;
	else
		return fail(ls, "heap_tree= must be empty, detailed or peak, "
			    "not \"%.20s\"", v);
	return 0;
}

/* One snapshot record, its "snapshot=" line being the current one. */
static int
snapshot_read(struct lines *ls, struct mf_snapshot *s)
{
	uint64_t number;

	if (strncmp(ls->line, "snapshot=", 9) != 0)
		return fail(ls, "expected \"snapshot=\", got \"%.60s\"",
			    ls->line);
	char *p = ls->line + 9;
	if (!take_u64(&p, &number) || number > UINT_MAX || !at_value_end(p))
		return fail(ls, "snapshot= needs a number, not \"%.40s\"",
			    ls->line + 9);
	s->number = (unsigned)number;
	if (field_u64(ls, "time", &s->time) ||
	    field_u64(ls, "mem_heap_B", &s->heap) ||
	    field_u64(ls, "mem_heap_extra_B", &s->extra) ||
	    field_u64(ls, "mem_stacks_B", &s->stacks) ||
	    kind_parse(ls, s))
		return -1;
	if (s->kind != MF_EMPTY)
		return tree_read(ls, s);
	return 0;
}

static int
snapshots_read(struct lines *ls, struct mf_file *f)
{
	size_t cap = 0;

	while (ls->line) {
		ht_xgrow((void **)&f->snaps, &cap, f->n_snaps + 1,
			 sizeof(*f->snaps));
		struct mf_snapshot *s = &f->snaps[f->n_snaps++];
		memset(s, 0, sizeof(*s));
		if (snapshot_read(ls, s))
			return -1;
		next_line(ls);
	}
	return 0;
}

int
mf_read(const char *path, struct mf_file *out, char *err, size_t errlen)
{
	struct lines ls = { .path = path, .err = err, .errlen = errlen };

	memset(out, 0, sizeof(*out));
	int rc = slurp(&ls);
	if (!rc)
		rc = header_read(&ls, out);
	if (!rc)
		rc = snapshots_read(&ls, out);
	free(ls.buf);
	if (rc)
		mf_free(out);
	return rc;
}

void
mf_free(struct mf_file *f)
{
	for (size_t i = 0; i < f->n_snaps; i++) {
		struct mf_snapshot *s = &f->snaps[i];
		for (size_t j = 0; j < s->n_tree; j++)
			free(s->tree[j].label);
		free(s->tree);
	}
	free(f->snaps);
	free(f->desc);
	free(f->cmd);
	free(f->time_unit);
	memset(f, 0, sizeof(*f));
}

long
mf_peak_index(const struct mf_file *m)
{
	long best = -1;
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		if (s->kind == MF_PEAK)
			return (long)i;
		/* Massif's peak counts stacks too (heap + extra + stacks);
		   extra is left out, as before stacks were read */
		if (s->kind == MF_DETAILED &&
		    (best < 0 || s->heap + s->stacks >
				 m->snaps[best].heap + m->snaps[best].stacks))
			best = (long)i;
	}
	return best;
}

long
mf_largest_index(const struct mf_file *m)
{
	long best = -1;
	for (size_t i = 0; i < m->n_snaps; i++) {
		const struct mf_snapshot *s = &m->snaps[i];
		if (best < 0 || s->heap + s->stacks >
				m->snaps[best].heap + m->snaps[best].stacks)
			best = (long)i;
	}
	return best;
}

bool
mf_pages_as_heap(const struct mf_file *m)
{
	for (size_t i = 0; i < m->n_snaps; i++)
		if (m->snaps[i].n_tree)
			return strncmp(m->snaps[i].tree[0].label,
				       "(page allocation", 16) == 0;
	return m->desc && strstr(m->desc, "--pages-as-heap=yes");
}

bool
mf_has_stacks(const struct mf_file *m)
{
	for (size_t i = 0; i < m->n_snaps; i++)
		if (m->snaps[i].stacks)
			return true;
	return m->desc && strstr(m->desc, "--stacks=yes");
}
