/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The .sites reader (docs/sites-format.md, versions 1 and 2): one line at
   a time, each line type parsed by its own function into struct
   sites_file; version 2's numbered frames and stacks are kept in a
   sites_table while reading, each site's frames expanded from it. Every
   check ends in reader_fail, so that the first problem is the one
   reported and a malformed file never leaves half a structure behind. */
#include "output/sites_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "output/sites_table.h"

static const char *const kind_names[SITES_N_KINDS] = {
	"definite", "indirect", "possible", "reachable",
};

/* The state of one read: where it is, what it built, the first error. */
struct reader {
	const char *path;
	unsigned long lineno;
	struct sites_file *out;
	size_t cap_sites, cap_frames; /* of out->sites, of the last site's */
	size_t cap_mappings, cap_strings;
	struct sites_table table; /* version 2's numbered frames and stacks */
	bool frame_open; /* the last line was a version-2 frame: line */
	char *err;
	size_t errlen;
	bool failed;
};

/* A key=value field of a line, and where its value goes. */
struct field {
	const char *key;
	uint64_t *u;  /* an unsigned value, or */
	int64_t *i;   /* a signed one (peak's snapshot=-1) */
	bool required;
	bool seen;
};

static int
reader_fail(struct reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keep the first error as "PATH:LINE: MSG"; always returns -1. */
static int
reader_fail(struct reader *r, const char *fmt, ...)
{
	if (r->failed)
		return -1;
	r->failed = true;
	int n = snprintf(r->err, r->errlen, "%s:%lu: ", r->path, r->lineno);
	if (n >= 0 && (size_t)n < r->errlen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* S (malloc'd), kept with the file's strings until sites_free. */
static const char *
keep(struct reader *r, char *s)
{
	struct sites_file *o = r->out;
	ht_xgrow((void **)&o->strings, &r->cap_strings, o->n_strings + 1,
		 sizeof(*o->strings));
	o->strings[o->n_strings++] = s;
	return s;
}

char *
sites_path_of(const char *profile)
{
	return ht_xasprintf("%s.sites", profile);
}

bool
sites_is_alloc_function(const char *fn)
{
	static const char *const names[] = {
		"malloc", "calloc", "realloc", "reallocarray", "memalign",
		"posix_memalign", "aligned_alloc", "valloc", "pvalloc",
		"__builtin_new", "__builtin_vec_new", "strdup", "strndup",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(fn, names[i]) == 0)
			return true;
	return strncmp(fn, "operator new", 12) == 0;
}

const char *
sites_kind_name(enum sites_kind k)
{
	return k < SITES_N_KINDS ? kind_names[k] : "?";
}

/* A decimal number filling S[0..LEN), without sign, within 64 bits. */
static bool
parse_u64(const char *s, size_t len, uint64_t *v)
{
	uint64_t x = 0;
	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

/* As parse_u64, with an optional '-'. */
static bool
parse_i64(const char *s, size_t len, int64_t *v)
{
	bool neg = len > 0 && s[0] == '-';
	uint64_t x;
	if (!parse_u64(s + neg, len - neg, &x) || x > (uint64_t)INT64_MAX)
		return false;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return true;
}

/* The decimal value of OPTION ("--sampling-interval=") in DESC. */
static bool
desc_option(const char *desc, const char *option, uint64_t *v)
{
	const char *p = desc ? strstr(desc, option) : NULL;
	if (!p)
		return false;
	p += strlen(option);
	return parse_u64(p, strspn(p, "0123456789"), v);
}

bool
sites_sampling_of(const struct sites_file *sf, const char *desc,
		  struct sites_sampling *out)
{
	memset(out, 0, sizeof(*out));
	if (sf && sf->has_sampling) {
		out->interval = sf->sampling_interval;
		out->seed = sf->sampling_seed;
		out->has_seed = true;
		return true;
	}
	if (!desc_option(desc, "--sampling-interval=", &out->interval) ||
	    !out->interval)
		return false;
	out->has_seed = desc_option(desc, "--sampling-seed=", &out->seed);
	return true;
}

void
sites_sampling_text(const struct sites_sampling *s, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB" };
	double v = (double)s->interval;
	int u = 0;
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "sampled every %.1f %s: figures are estimated "
		 "(error about sqrt(interval/bytes) per site)", v, units[u]);
}

static struct field *
field_find(struct field *fields, size_t n, const char *key, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(fields[i].key) == len &&
		    memcmp(fields[i].key, key, len) == 0)
			return &fields[i];
	return NULL;
}

static int
field_set(struct reader *r, struct field *f, const char *val, size_t len)
{
	bool ok = f->u ? parse_u64(val, len, f->u) : parse_i64(val, len, f->i);
	if (!ok)
		return reader_fail(r, "%s=%.*s is not a decimal number", f->key,
				   (int)len, val);
	f->seen = true;
	return 0;
}

/* Parse the space-separated KEY=VALUE words of TEXT into FIELDS. The words
   before the first '=' word are the line's own (an ID, a mode): the first
   is put in *WORD when WORD is not NULL. Unknown keys and other words
   without '=' are skipped (later versions add them); a missing required
   key is an error of line type TYPE. */
static int
fields_parse(struct reader *r, const char *type, const char *text,
	     struct field *fields, size_t n, const char **word,
	     size_t *word_len)
{
	bool first = true;
	for (const char *p = text; *p;) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', len);
		if (first && word && !eq && len) {
			*word = p;
			*word_len = len;
		} else if (eq) {
			struct field *f = field_find(fields, n, p,
						     (size_t)(eq - p));
			if (f && field_set(r, f, eq + 1,
					   len - (size_t)(eq + 1 - p)))
				return -1;
		}
		if (len)
			first = false;
		p += len + (end != NULL);
	}
	for (size_t i = 0; i < n; i++)
		if (fields[i].required && !fields[i].seen)
			return reader_fail(r, "%s: line without %s=", type,
					   fields[i].key);
	return 0;
}

static int
header_parse(struct reader *r, const char *line)
{
	static const char tag[] = "heaptrace-sites: ";
	uint64_t v;
	if (strncmp(line, tag, sizeof(tag) - 1) != 0)
		return reader_fail(r, "not a heaptrace sites file (no "
				   "'heaptrace-sites: VERSION' first line)");
	const char *num = line + sizeof(tag) - 1;
	if (!parse_u64(num, strlen(num), &v))
		return reader_fail(r, "version '%s' is not a number", num);
	if (v != 1 && v != SITES_VERSION)
		return reader_fail(r, "version %s, this heaptrace reads "
				   "versions 1 to %d", num, SITES_VERSION);
	r->out->version = (unsigned)v;
	return 0;
}

static int
pid_parse(struct reader *r, const char *text)
{
	int64_t v;
	if (!parse_i64(text, strlen(text), &v) || v < 0 || v > INT32_MAX)
		return reader_fail(r, "pid '%s' is not a process id", text);
	r->out->pid = (long)v;
	r->out->has_pid = true;
	return 0;
}

/* cmd: and time_unit: keep the rest of the line; a repeated line wins. */
static int
string_parse(char **dst, const char *text)
{
	free(*dst);
	*dst = ht_xstrdup(text);
	return 0;
}

static int
peak_parse(struct reader *r, const char *text)
{
	struct sites_file *o = r->out;
	struct field f[] = {
		{ .key = "snapshot", .i = &o->peak_snapshot, .required = true },
		{ .key = "time", .u = &o->peak_time, .required = true },
		{ .key = "heap", .u = &o->peak_heap, .required = true },
	};
	if (fields_parse(r, "peak", text, f, 3, NULL, NULL))
		return -1;
	o->has_peak = true;
	return 0;
}

static int
totals_parse(struct reader *r, const char *text)
{
	struct sites_file *o = r->out;
	struct field f[] = {
		{ .key = "sites", .u = &o->total_sites, .required = true },
		{ .key = "calls", .u = &o->total_calls, .required = true },
		{ .key = "allocated", .u = &o->total_allocated,
		  .required = true },
		{ .key = "temporary", .u = &o->total_temporary,
		  .required = true },
		{ .key = "leaked", .u = &o->total_leaked, .required = true },
		{ .key = "leaked_blocks", .u = &o->total_leaked_blocks },
	};
	if (fields_parse(r, "totals", text, f, 6, NULL, NULL))
		return -1;
	o->has_totals = true;
	return 0;
}

static int
sampling_parse(struct reader *r, const char *text)
{
	struct sites_file *o = r->out;
	struct field f[] = {
		{ .key = "interval", .u = &o->sampling_interval,
		  .required = true },
		{ .key = "seed", .u = &o->sampling_seed },
	};
	if (fields_parse(r, "sampling", text, f, 2, NULL, NULL))
		return -1;
	o->has_sampling = o->sampling_interval != 0;
	return 0;
}

/* A "0xHEX" value filling S[0..LEN). */
static bool
parse_hex(const char *s, size_t len, uint64_t *v)
{
	static const char digits[] = "0123456789abcdef0123456789ABCDEF";
	uint64_t x = 0;
	if (len < 3 || len > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return false;
	for (size_t i = 2; i < len; i++) {
		const char *d = s[i] ? strchr(digits, s[i]) : NULL;
		if (!d)
			return false;
		x = x << 4 | (uint64_t)((d - digits) & 15);
	}
	*v = x;
	return true;
}

static void
mapping_free(struct sites_mapping *m)
{
	free(m->build_id);
	free(m->file);
}

/* One word of a mapping: line into M; FILE= takes the rest of the line.
   Returns the length used, or 0 after failing. */
static size_t
mapping_word(struct reader *r, struct sites_mapping *m, const char *p)
{
	size_t len = strcspn(p, " ");
	const char *eq = memchr(p, '=', len);
	if (strncmp(p, "file=", 5) == 0) {
		free(m->file);
		m->file = ht_xstrdup(p + 5);
		return strlen(p);
	}
	if (!eq)
		return len;
	size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
	uint64_t *dst = klen == 5 && !memcmp(p, "start", 5) ? &m->start
		: klen == 3 && !memcmp(p, "end", 3) ? &m->end
		: klen == 6 && !memcmp(p, "offset", 6) ? &m->offset : NULL;
	if (dst && !parse_hex(eq + 1, vlen, dst)) {
		reader_fail(r, "mapping: %.*s is not 0xHEX", (int)len, p);
		return 0;
	}
	if (klen == 8 && !memcmp(p, "build_id", 8)) {
		free(m->build_id);
		m->build_id = ht_xasprintf("%.*s", (int)vlen, eq + 1);
	}
	return len;
}

static int
mapping_parse(struct reader *r, const char *text)
{
	struct sites_mapping m = { 0 };
	for (const char *p = text; *p;) {
		p += *p == ' ';
		size_t len = mapping_word(r, &m, p);
		if (r->failed) {
			mapping_free(&m);
			return -1;
		}
		p += len;
	}
	if (m.end <= m.start) {
		mapping_free(&m);
		return reader_fail(r, "mapping: line without start= and a "
				   "larger end=");
	}
	struct sites_file *o = r->out;
	ht_xgrow((void **)&o->mappings, &r->cap_mappings, o->n_mappings + 1,
		 sizeof(*o->mappings));
	o->mappings[o->n_mappings++] = m;
	return 0;
}

static int
mapping_cmp(const void *a, const void *b)
{
	const struct sites_mapping *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Binary search: a profile's every frame is looked up. */
const struct sites_mapping *
sites_mapping_of(const struct sites_file *f, uint64_t addr)
{
	size_t lo = 0, hi = f->n_mappings;
	while (lo < hi) { /* the first mapping starting after ADDR */
		size_t mid = lo + (hi - lo) / 2;
		if (f->mappings[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < f->mappings[lo - 1].end)
		return &f->mappings[lo - 1];
	return NULL;
}

/* "KIND=BYTES/BLOCKS" words: parsed here, not by fields_parse. */
static int
leak_kind_parse(struct reader *r, const char *word, size_t len)
{
	const char *eq = memchr(word, '=', len);
	if (!eq)
		return 0;
	for (int k = 0; k < SITES_N_KINDS; k++) {
		size_t klen = strlen(kind_names[k]);
		if ((size_t)(eq - word) != klen ||
		    memcmp(word, kind_names[k], klen) != 0)
			continue;
		const char *val = eq + 1, *end = word + len;
		const char *slash = memchr(val, '/', (size_t)(end - val));
		if (!slash ||
		    !parse_u64(val, (size_t)(slash - val),
			       &r->out->leak_bytes[k]) ||
		    !parse_u64(slash + 1, (size_t)(end - slash - 1),
			       &r->out->leak_blocks[k]))
			return reader_fail(r, "leak_check: %.*s is not "
					   "KIND=BYTES/BLOCKS", (int)len, word);
	}
	return 0;
}

static int
leak_check_parse(struct reader *r, const char *text)
{
	size_t mode_len = strcspn(text, " ");
	if (mode_len == 0 || memchr(text, '=', mode_len))
		return reader_fail(r, "leak_check: line without its mode");
	free(r->out->leak_mode);
	r->out->leak_mode = ht_xasprintf("%.*s", (int)mode_len, text);
	for (const char *p = text + mode_len; *p;) {
		p += *p == ' ';
		size_t len = strcspn(p, " ");
		if (leak_kind_parse(r, p, len))
			return -1;
		p += len;
	}
	r->out->has_leak_check = true;
	return 0;
}

/* Version 2's stack=: the site's frames from the numbered stacks. */
static int
site_stack_expand(struct reader *r, struct sites_site *s, uint64_t stack)
{
	const char *why = sites_table_expand(&r->table, stack, &s->frames,
					     &s->n_frames);
	return why ? reader_fail(r, "%s", why) : 0;
}

static int
site_parse(struct reader *r, const char *text)
{
	struct sites_file *o = r->out;
	bool v1 = o->version == 1; /* version 2 leaves out figures of 0 */
	ht_xgrow((void **)&o->sites, &r->cap_sites, o->n_sites + 1,
		 sizeof(*o->sites));
	struct sites_site *s = &o->sites[o->n_sites];
	memset(s, 0, sizeof(*s));
	uint64_t stack = 0;
	struct field f[] = {
		{ .key = "calls", .u = &s->calls, .required = true },
		{ .key = "allocated", .u = &s->allocated, .required = true },
		{ .key = "peak", .u = &s->peak, .required = v1 },
		{ .key = "leaked", .u = &s->leaked, .required = v1 },
		{ .key = "leaked_blocks", .u = &s->leaked_blocks },
		{ .key = "temporary", .u = &s->temporary, .required = v1 },
		{ .key = "definite", .u = &s->kind_bytes[SITES_DEFINITE] },
		{ .key = "indirect", .u = &s->kind_bytes[SITES_INDIRECT] },
		{ .key = "possible", .u = &s->kind_bytes[SITES_POSSIBLE] },
		{ .key = "reachable", .u = &s->kind_bytes[SITES_REACHABLE] },
		{ .key = "peak_blocks", .u = &s->peak_blocks },
		{ .key = "stack", .u = &stack, .required = !v1 },
	};
	const char *id = NULL;
	size_t id_len = 0;
	if (fields_parse(r, "site", text, f, 12, &id, &id_len))
		return -1;
	s->has_peak_blocks = f[10].seen || !v1;
	if (!id || !parse_u64(id, id_len, &s->id))
		return reader_fail(r, "site: line without its decimal ID");
	for (int k = 0; k < SITES_N_KINDS; k++)
		s->has_kinds |= f[6 + k].seen;
	if (!v1 && site_stack_expand(r, s, stack))
		return -1;
	o->n_sites++;
	r->cap_frames = 0;
	return 0;
}

/* PLACE after the TAB: "", "file:line" or "(in /path/object)". */
static int
frame_place_parse(struct reader *r, struct sites_frame *fr, const char *place)
{
	size_t len = strlen(place);
	if (len == 0)
		return 0;
	if (strncmp(place, "(in ", 4) == 0 && place[len - 1] == ')') {
		fr->object = keep(r, ht_xasprintf("%.*s", (int)(len - 5),
						  place + 4));
		return 0;
	}
	const char *colon = strrchr(place, ':');
	uint64_t line;
	if (!colon || colon == place ||
	    !parse_u64(colon + 1, strlen(colon + 1), &line))
		return reader_fail(r, "frame: place '%s' is neither file:line "
				   "nor (in object)", place);
	fr->file = keep(r, ht_xasprintf("%.*s", (int)(colon - place), place));
	fr->line = (unsigned long)line;
	return 0;
}

/* "0xADDR FUNCTION\tPLACE" into *FR. */
static int
frame_text_parse(struct reader *r, const char *text, struct sites_frame *fr)
{
	if (strncmp(text, "0x", 2) != 0 && strncmp(text, "0X", 2) != 0)
		return reader_fail(r, "frame: address does not start with 0x");
	char *end;
	errno = 0;
	size_t hex = strspn(text + 2, "0123456789abcdefABCDEF");
	unsigned long long addr = strtoull(text + 2, &end, 16);
	if (hex == 0 || hex > 16 || errno || end != text + 2 + hex ||
	    *end != ' ' || end[1] == '\0' || end[1] == '\t')
		return reader_fail(r, "frame: not '0xADDRESS FUNCTION<TAB>"
				   "PLACE'");
	const char *name = end + 1;
	const char *tab = strchr(name, '\t');
	*fr = (struct sites_frame){
		.addr = addr,
		.function = keep(r, ht_xasprintf("%.*s",
						 (int)(tab ? tab - name :
						       (long)strlen(name)),
						 name)),
	};
	return tab ? frame_place_parse(r, fr, tab + 1) : 0;
}

/* Version 1: "0xADDR FUNCTION\tPLACE", appended to the last site. */
static int
frame_v1_parse(struct reader *r, const char *text)
{
	struct sites_file *o = r->out;
	if (!o->n_sites)
		return reader_fail(r, "frame: line before any site: line");
	struct sites_frame fr;
	if (frame_text_parse(r, text, &fr))
		return -1;
	struct sites_site *s = &o->sites[o->n_sites - 1];
	ht_xgrow((void **)&s->frames, &r->cap_frames, s->n_frames + 1,
		 sizeof(*s->frames));
	s->frames[s->n_frames++] = fr;
	return 0;
}

/* Version 2: "NUMBER 0xADDR FUNCTION\tPLACE", a numbered frame. */
static int
frame_v2_parse(struct reader *r, const char *text)
{
	size_t len = strcspn(text, " ");
	uint64_t id;
	struct sites_frame fr;
	if (!parse_u64(text, len, &id) || text[len] != ' ')
		return reader_fail(r, "frame: line without its number");
	if (frame_text_parse(r, text + len + 1, &fr))
		return -1;
	const char *why = sites_table_frame(&r->table, id, r->frame_open, &fr);
	return why ? reader_fail(r, "%s", why) : 0;
}

/* The decimal number at *P, *P moved past it and one blank. */
static bool
next_number(const char **p, uint64_t *v)
{
	size_t len = strcspn(*p, " ");
	if (!parse_u64(*p, len, v))
		return false;
	*p += len + ((*p)[len] == ' ');
	return true;
}

/* Version 2: "NUMBER CALLER FRAME...": stack NUMBER is the first FRAME
   called from stack CALLER, each next one the next FRAME called from the
   one before. */
static int
stack_parse(struct reader *r, const char *text)
{
	const char *p = text;
	uint64_t id, caller, frame;
	if (!next_number(&p, &id) || !next_number(&p, &caller))
		return reader_fail(r, "stack: not 'NUMBER CALLER FRAME...'");
	for (uint64_t k = 0; k == 0 || *p; k++) {
		if (!next_number(&p, &frame))
			return reader_fail(r, "stack: frame '%.20s' is not a "
					   "decimal number", p);
		const char *why = sites_table_stack(&r->table, id + k,
						    k ? id + k - 1 : caller,
						    frame);
		if (why)
			return reader_fail(r, "%s", why);
	}
	return 0;
}

static int
frame_parse(struct reader *r, const char *text)
{
	return r->out->version == 1 ? frame_v1_parse(r, text)
				    : frame_v2_parse(r, text);
}

/* One line after the first, without its newline. */
static int
line_parse(struct reader *r, const char *line)
{
	if (line[0] == '#' || line[0] == '\0')
		return 0;
	size_t type_len = strcspn(line, ":");
	if (line[type_len] != ':' || type_len == 0 ||
	    (line[type_len + 1] != ' ' && line[type_len + 1] != '\0'))
		return reader_fail(r, "not a 'type: ...' line");
	const char *text = line + type_len + 1 + (line[type_len + 1] == ' ');
#define IS(t) (type_len == sizeof(t) - 1 && memcmp(line, t, type_len) == 0)
	if (IS("pid"))
		return pid_parse(r, text);
	if (IS("cmd"))
		return string_parse(&r->out->cmd, text);
	if (IS("time_unit"))
		return string_parse(&r->out->time_unit, text);
	if (IS("peak"))
		return peak_parse(r, text);
	if (IS("sampling"))
		return sampling_parse(r, text);
	if (IS("mapping"))
		return mapping_parse(r, text);
	if (IS("totals"))
		return totals_parse(r, text);
	if (IS("leak_check"))
		return leak_check_parse(r, text);
	if (IS("site"))
		return site_parse(r, text);
	if (IS("frame"))
		return frame_parse(r, text);
	if (IS("stack") && r->out->version > 1)
		return stack_parse(r, text);
	if (IS("heaptrace-sites"))
		return reader_fail(r, "a second heaptrace-sites: line");
#undef IS
	return 0; /* a line type of a later version */
}

/* Every line of F through the parsers; 0 or -1 (errno set to 0 for a
   malformed file). */
static int
lines_read(struct reader *r, FILE *f)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	errno = 0;
	while (!rc && (n = getline(&line, &cap, f)) >= 0) {
		r->lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strlen(line) != (size_t)n)
			rc = reader_fail(r, "NUL byte in the line");
		else
			rc = r->lineno == 1 ? header_parse(r, line)
					    : line_parse(r, line);
		r->frame_open = strncmp(line, "frame:", 6) == 0;
		errno = 0;
	}
	free(line);
	if (!rc && ferror(f)) {
		int e = errno ? errno : EIO;
		snprintf(r->err, r->errlen, "%s: %s", r->path, strerror(e));
		errno = e;
		return -1;
	}
	if (!rc && r->lineno == 0) {
		snprintf(r->err, r->errlen, "%s: empty, not a heaptrace sites "
			 "file", r->path);
		rc = -1;
	}
	errno = 0;
	return rc;
}

int
sites_read(const char *path, struct sites_file *out, int *errno_out,
	   char *err, size_t errlen)
{
	struct reader r = { .path = path, .out = out, .err = err,
			    .errlen = errlen };
	memset(out, 0, sizeof(*out));
	if (errno_out)
		*errno_out = 0;
	FILE *f = fopen(path, "re");
	if (!f) {
		if (errno_out)
			*errno_out = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	sites_table_init(&r.table);
	int rc = lines_read(&r, f);
	sites_table_fini(&r.table);
	if (!rc && out->n_mappings)
		qsort(out->mappings, out->n_mappings, sizeof(*out->mappings),
		      mapping_cmp);
	if (rc && errno_out)
		*errno_out = errno;
	fclose(f);
	if (rc)
		sites_free(out);
	return rc;
}

void
sites_free(struct sites_file *f)
{
	for (size_t i = 0; i < f->n_sites; i++)
		free(f->sites[i].frames);
	for (size_t i = 0; i < f->n_strings; i++)
		free(f->strings[i]);
	free(f->strings);
	free(f->sites);
	for (size_t i = 0; i < f->n_mappings; i++)
		mapping_free(&f->mappings[i]);
	free(f->mappings);
	free(f->cmd);
	free(f->time_unit);
	free(f->leak_mode);
	memset(f, 0, sizeof(*f));
}
