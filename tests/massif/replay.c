/* SPDX-License-Identifier: GPL-2.0-or-later */
/* replay: reads a hand-written event file (format in README.md beside this
   file), feeds its allocator calls through the snapshot engine with Massif's
   options, and writes the massif.out file. It lets the golden tests check the
   engine and the writer against real Massif without tracing anything. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/event.h"
#include "common/options.h"
#include "common/symbolizer.h"
#include "common/synthframe.h"
#include "common/xalloc.h"
#include "output/output.h"
#include "output/sites.h"
#include "snapshot/extra.h"
#include "snapshot/snapshot.h"
#include "symbols/table.h"

/* Exit status for a malformed event file or command line: the harness, not
   the code under test, is at fault. */
#define EXIT_HARNESS 2

/* How an event line's numbers map onto struct ht_event. */
enum args {
	A_ADDR_SIZE,       /* malloc ADDR SIZE */
	A_ADDR_NMEMB_SIZE, /* calloc ADDR NMEMB SIZE */
	A_ADDR_ALIGN_SIZE, /* memalign ADDR ALIGN SIZE */
	A_NEW_OLD_SIZE,    /* realloc NEWADDR OLDADDR SIZE */
	A_ADDR,            /* free ADDR */
	A_MREMAP,          /* mremap OLD OLDSIZE NEW NEWSIZE */
	A_OLD_NEW,         /* brk OLD NEW */
	A_TID_SIZE,        /* stackbytes TID SIZE */
	A_TID,             /* thread_exit TID */
};

struct event_kind {
	const char *word;
	enum ht_event_kind kind;
	enum ht_alloc_fn fn;
	enum args args;
	uint64_t align; /* fixed alignment of the call (valloc), else 0 */
};

static const struct event_kind event_kinds[] = {
	{ "malloc", HT_EV_ALLOC, HT_FN_MALLOC, A_ADDR_SIZE, 0 },
	{ "calloc", HT_EV_ALLOC, HT_FN_CALLOC, A_ADDR_NMEMB_SIZE, 0 },
	{ "realloc", HT_EV_REALLOC, HT_FN_REALLOC, A_NEW_OLD_SIZE, 0 },
	{ "memalign", HT_EV_ALLOC, HT_FN_MEMALIGN, A_ADDR_ALIGN_SIZE, 0 },
	{ "posix_memalign", HT_EV_ALLOC, HT_FN_POSIX_MEMALIGN,
	  A_ADDR_ALIGN_SIZE, 0 },
	{ "aligned_alloc", HT_EV_ALLOC, HT_FN_ALIGNED_ALLOC,
	  A_ADDR_ALIGN_SIZE, 0 },
	/* valloc's alignment is the page size; the call takes none. */
	{ "valloc", HT_EV_ALLOC, HT_FN_VALLOC, A_ADDR_SIZE, 4096 },
	{ "new", HT_EV_ALLOC, HT_FN_NEW, A_ADDR_SIZE, 0 },
	{ "new[]", HT_EV_ALLOC, HT_FN_NEW_ARRAY, A_ADDR_SIZE, 0 },
	{ "free", HT_EV_FREE, HT_FN_FREE, A_ADDR, 0 },
	{ "delete", HT_EV_FREE, HT_FN_DELETE, A_ADDR, 0 },
	{ "delete[]", HT_EV_FREE, HT_FN_DELETE_ARRAY, A_ADDR, 0 },
	/* Page-level calls (--pages-as-heap) and stack samples (--stacks). */
	{ "mmap", HT_EV_MMAP, HT_FN_MALLOC, A_ADDR_SIZE, 0 },
	{ "munmap", HT_EV_MUNMAP, HT_FN_MALLOC, A_ADDR_SIZE, 0 },
	{ "mremap", HT_EV_MREMAP, HT_FN_MALLOC, A_MREMAP, 0 },
	{ "brk", HT_EV_BRK, HT_FN_MALLOC, A_OLD_NEW, 0 },
	{ "stackbytes", HT_EV_STACK, HT_FN_MALLOC, A_TID_SIZE, 0 },
	{ "thread_exit", HT_EV_THREAD_EXIT, HT_FN_MALLOC, A_TID, 0 },
};

enum op {
	OP_CMD,
	OP_SYM,
	OP_PYFRAME,
	OP_STACK,
	OP_TIME,
	OP_REPEAT,
	OP_END,
	OP_START,
	OP_EVENT,
};

/* One non-empty line of an event file (includes already expanded). */
struct stmt {
	enum op op;
	const char *file; /* owned by struct script's file list */
	unsigned line;
	char **word;      /* the line's words, keyword first */
	char **tok;       /* WORD + 1: the arguments */
	size_t n_tok;
	char *rest;       /* OP_SYM: the text after the pc, verbatim */
	const struct event_kind *ev;
	size_t end;       /* OP_REPEAT: index of its OP_END */
};

struct named_stack {
	char *name;
	uint64_t *pcs;
	size_t n;
};

struct var {
	const char *name;
	uint64_t value;
};

struct script {
	struct stmt *stmts;
	size_t n_stmts, cap_stmts;
	char **files;
	size_t n_files, cap_files;

	/* Execution state. */
	struct named_stack *stacks;
	size_t n_stacks, cap_stacks;
	struct var *vars;
	size_t n_vars, cap_vars;
	uint64_t *pcs; /* scratch for one event's stack */
	size_t cap_pcs;
	uint64_t clock;
	char **cmd;
	size_t n_cmd;
	struct sym_table *syms;
	struct snap_engine *eng;
};

static void __attribute__((format(printf, 2, 3), noreturn))
fail(const struct stmt *s, const char *fmt, ...)
{
	va_list ap;

	if (s)
		fprintf(stderr, "replay: %s:%u: ", s->file, s->line);
	else
		fputs("replay: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_HARNESS);
}

/* ---- Numbers: decimal or 0x hex, loop variables, + - * / % ( ). ---- */

struct expr {
	const struct script *sc;
	const struct stmt *s;
	const char *p;
};

static uint64_t expr_sum(struct expr *e);

static bool
is_ident(int c, bool first)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && c >= '0' && c <= '9');
}

static uint64_t
var_value(struct expr *e, const char *name, size_t len)
{
	/* Innermost binding wins, so nested loops may reuse a name. */
	for (size_t i = e->sc->n_vars; i-- > 0;) {
		const struct var *v = &e->sc->vars[i];

		if (strlen(v->name) == len && !strncmp(v->name, name, len))
			return v->value;
	}
	fail(e->s, "unknown variable '%.*s'", (int)len, name);
}

static uint64_t
expr_number(struct expr *e)
{
	int base = 10;
	char *end;
	uint64_t v;

	if (e->p[0] == '0' && (e->p[1] == 'x' || e->p[1] == 'X'))
		base = 16;
	errno = 0;
	v = strtoull(e->p, &end, base);
	if (end == e->p || errno)
		fail(e->s, "bad number at '%s'", e->p);
	e->p = end;
	return v;
}

static uint64_t
expr_factor(struct expr *e)
{
	uint64_t v;

	if (*e->p == '(') {
		e->p++;
		v = expr_sum(e);
		if (*e->p != ')')
			fail(e->s, "missing ')' at '%s'", e->p);
		e->p++;
		return v;
	}
	if (is_ident((unsigned char)*e->p, true)) {
		const char *name = e->p;

		while (is_ident((unsigned char)*e->p, false))
			e->p++;
		return var_value(e, name, (size_t)(e->p - name));
	}
	return expr_number(e);
}

static uint64_t
expr_product(struct expr *e)
{
	uint64_t v = expr_factor(e);

	while (*e->p == '*' || *e->p == '/' || *e->p == '%') {
		char op = *e->p++;
		uint64_t r = expr_factor(e);

		if (op == '*') {
			v *= r;
			continue;
		}
		if (!r)
			fail(e->s, "division by zero");
		v = op == '/' ? v / r : v % r;
	}
	return v;
}

static uint64_t
expr_sum(struct expr *e)
{
	uint64_t v = expr_product(e);

	while (*e->p == '+' || *e->p == '-') {
		char op = *e->p++;
		uint64_t r = expr_product(e);

		v = op == '+' ? v + r : v - r;
	}
	return v;
}

/* The value of the word TEXT of statement S (no spaces inside a word). */
static uint64_t
eval(const struct script *sc, const struct stmt *s, const char *text)
{
	struct expr e = { .sc = sc, .s = s, .p = text };
	uint64_t v = expr_sum(&e);

	if (*e.p)
		fail(s, "junk '%s' in number '%s'", e.p, text);
	return v;
}

/* ---- Reading: lines to statements. ---- */

static char *
trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' ||
			   end[-1] == '\n' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* Split LINE (clobbered) into malloc'd words in *OUT; a word starting with
   '#' ends the line. Returns the number of words. */
static size_t
split_words(char *line, char ***out)
{
	char **w = NULL, *save = NULL;
	size_t n = 0, cap = 0;

	for (char *p = strtok_r(line, " \t\r\n", &save); p;
	     p = strtok_r(NULL, " \t\r\n", &save)) {
		if (*p == '#')
			break;
		ht_xgrow((void **)&w, &cap, n + 1, sizeof(*w));
		w[n++] = ht_xstrdup(p);
	}
	*out = w;
	return n;
}

static const struct event_kind *
find_event_kind(const char *word)
{
	for (size_t i = 0; i < sizeof(event_kinds) / sizeof(event_kinds[0]); i++)
		if (!strcmp(event_kinds[i].word, word))
			return &event_kinds[i];
	return NULL;
}

static void read_file(struct script *sc, const char *path, unsigned depth);

/* "include FILE" names a file relative to the including one. */
static void
include_file(struct script *sc, const struct stmt *at, const char *name,
	     unsigned depth)
{
	const char *slash = strrchr(at->file, '/');
	char *path;

	if (depth >= 8)
		fail(at, "includes nested too deeply");
	if (name[0] == '/' || !slash)
		path = ht_xstrdup(name);
	else
		path = ht_xasprintf("%.*s/%s", (int)(slash - at->file),
				    at->file, name);
	read_file(sc, path, depth + 1);
	free(path);
}

/* The statements other than events, with how many words follow them. */
static const struct keyword {
	const char *word;
	enum op op;
	size_t min_args, max_args;
	const char *usage;
} keywords[] = {
	{ "cmd", OP_CMD, 1, SIZE_MAX, "cmd PROGRAM [ARGS...]" },
	{ "sym", OP_SYM, 1, SIZE_MAX, "sym PC NAME | DESC [| DESC...]" },
	{ "pyframe", OP_PYFRAME, 4, 4, "pyframe NAME FUNCTION FILE LINE" },
	{ "stack", OP_STACK, 1, SIZE_MAX, "stack NAME ITEM..." },
	{ "time", OP_TIME, 1, 1, "time T" },
	{ "repeat", OP_REPEAT, 2, 2, "repeat COUNT VARIABLE" },
	{ "end", OP_END, 0, 0, "end" },
	{ "start", OP_START, 0, 0, "start" },
};

/* Set S's kind from its keyword, checking the number of words. */
static void
classify(struct stmt *s, const char *raw_line)
{
	const struct keyword *k = NULL;

	for (size_t i = 0; i < sizeof(keywords) / sizeof(keywords[0]); i++)
		if (!strcmp(keywords[i].word, s->word[0]))
			k = &keywords[i];
	if (!k) {
		s->ev = find_event_kind(s->word[0]);
		if (!s->ev)
			fail(s, "unknown keyword '%s'", s->word[0]);
		s->op = OP_EVENT;
		return;
	}
	s->op = k->op;
	if (s->n_tok < k->min_args || s->n_tok > k->max_args ||
	    (k->op == OP_REPEAT && !is_ident((unsigned char)s->tok[1][0], true)))
		fail(s, "usage: %s", k->usage);
	if (k->op == OP_SYM) {
		/* Descriptions may hold anything but '|', blanks and '#'
		   included, so keep the raw text after the pc. */
		const char *p = raw_line + strspn(raw_line, " \t") + 3;
		char *rest;

		p += strspn(p, " \t");
		p += strcspn(p, " \t");
		rest = ht_xstrdup(p);
		s->rest = ht_xstrdup(trim(rest));
		free(rest);
	}
}

static void
parse_line(struct script *sc, const char *file, unsigned lineno,
	   const char *line, unsigned depth)
{
	struct stmt s = { .file = file, .line = lineno };
	char *copy = ht_xstrdup(line);
	size_t n = split_words(copy, &s.word);

	free(copy);
	if (!n) {
		free(s.word);
		return;
	}
	s.tok = s.word + 1;
	s.n_tok = n - 1;
	if (!strcmp(s.word[0], "include")) {
		if (n != 2)
			fail(&s, "usage: include FILE");
		include_file(sc, &s, s.word[1], depth);
		for (size_t i = 0; i < n; i++)
			free(s.word[i]);
		free(s.word);
		return;
	}
	classify(&s, line);
	ht_xgrow((void **)&sc->stmts, &sc->cap_stmts, sc->n_stmts + 1,
		 sizeof(*sc->stmts));
	sc->stmts[sc->n_stmts++] = s;
}

static void
read_file(struct script *sc, const char *path, unsigned depth)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, *name;
	size_t cap = 0;
	unsigned lineno = 0;

	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		exit(EXIT_HARNESS);
	}
	name = ht_xstrdup(path);
	ht_xgrow((void **)&sc->files, &sc->cap_files, sc->n_files + 1,
		 sizeof(*sc->files));
	sc->files[sc->n_files++] = name;
	while (getline(&line, &cap, f) >= 0)
		parse_line(sc, name, ++lineno, line, depth);
	free(line);
	fclose(f);
}

/* Pair each repeat with its end. Includes are already expanded, so a block
   may even span them; nothing relies on it not doing so. */
static void
match_blocks(struct script *sc)
{
	size_t *open = NULL, n_open = 0, cap = 0;

	for (size_t i = 0; i < sc->n_stmts; i++) {
		if (sc->stmts[i].op == OP_REPEAT) {
			ht_xgrow((void **)&open, &cap, n_open + 1,
				 sizeof(*open));
			open[n_open++] = i;
		} else if (sc->stmts[i].op == OP_END) {
			if (!n_open)
				fail(&sc->stmts[i], "'end' without 'repeat'");
			sc->stmts[open[--n_open]].end = i;
		}
	}
	if (n_open)
		fail(&sc->stmts[open[n_open - 1]], "'repeat' without 'end'");
	free(open);
}

/* ---- Execution. ---- */

static struct named_stack *
find_stack(struct script *sc, const char *name)
{
	for (size_t i = 0; i < sc->n_stacks; i++)
		if (!strcmp(sc->stacks[i].name, name))
			return &sc->stacks[i];
	return NULL;
}

/* Put the stack written as words W[0..N) (pcs and @NAME splices) into the
   scratch array SC->pcs; returns its length. */
static size_t
build_stack(struct script *sc, const struct stmt *s, char *const *w, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		const uint64_t *src;
		size_t count;
		uint64_t pc;

		if (w[i][0] == '@') {
			const struct named_stack *ns = find_stack(sc, w[i] + 1);

			if (!ns)
				fail(s, "unknown stack '%s'", w[i]);
			src = ns->pcs;
			count = ns->n;
		} else {
			pc = eval(sc, s, w[i]);
			src = &pc;
			count = 1;
		}
		ht_xgrow((void **)&sc->pcs, &sc->cap_pcs, len + count,
			 sizeof(*sc->pcs));
		memcpy(sc->pcs + len, src, count * sizeof(*src));
		len += count;
	}
	return len;
}

/* The stack called NAME, now of the N pcs in SC->pcs. */
static void
set_stack(struct script *sc, const char *name, size_t n)
{
	struct named_stack *ns = find_stack(sc, name);

	if (!ns) {
		ht_xgrow((void **)&sc->stacks, &sc->cap_stacks,
			 sc->n_stacks + 1, sizeof(*sc->stacks));
		ns = &sc->stacks[sc->n_stacks++];
		ns->name = ht_xstrdup(name);
	} else {
		free(ns->pcs);
	}
	ns->pcs = ht_xcalloc(n ? n : 1, sizeof(*ns->pcs));
	memcpy(ns->pcs, sc->pcs, n * sizeof(*ns->pcs));
	ns->n = n;
}

static void
do_stack(struct script *sc, const struct stmt *s)
{
	set_stack(sc, s->tok[0], build_stack(sc, s, s->tok + 1, s->n_tok - 1));
}

/* A Python frame, as the tracer makes one: a synthetic pc (the table
   symbolizer names it), as the one-frame stack NAME. */
static void
do_pyframe(struct script *sc, const struct stmt *s)
{
	uint64_t line = eval(sc, s, s->tok[3]);

	ht_xgrow((void **)&sc->pcs, &sc->cap_pcs, 1, sizeof(*sc->pcs));
	sc->pcs[0] = synth_frame_intern(s->tok[1], s->tok[2], (unsigned)line);
	set_stack(sc, s->tok[0], 1);
}

static void
do_sym(struct script *sc, const struct stmt *s)
{
	const char *desc[HT_MAX_INLINE];
	char *text = ht_xstrdup(s->rest), *field, *save = NULL, *name = NULL;
	unsigned n = 0;
	bool first = true;

	for (field = strtok_r(text, "|", &save); field;
	     field = strtok_r(NULL, "|", &save)) {
		field = trim(field);
		if (first) {
			name = strcmp(field, "-") ? field : NULL;
			first = false;
			continue;
		}
		if (n == HT_MAX_INLINE)
			fail(s, "more than %d description lines", HT_MAX_INLINE);
		desc[n++] = field;
	}
	if (first || !n || (name && !*name))
		fail(s, "usage: sym PC NAME | DESC [| DESC...]");
	sym_table_add(sc->syms, eval(sc, s, s->tok[0]), name, desc, n);
	free(text);
}

static void
do_event(struct script *sc, const struct stmt *s)
{
	static const size_t n_args[] = {
		[A_ADDR_SIZE] = 2, [A_ADDR_NMEMB_SIZE] = 3,
		[A_ADDR_ALIGN_SIZE] = 3, [A_NEW_OLD_SIZE] = 3, [A_ADDR] = 1,
		[A_MREMAP] = 4, [A_OLD_NEW] = 2, [A_TID_SIZE] = 2, [A_TID] = 1,
	};
	const struct event_kind *k = s->ev;
	size_t na = n_args[k->args];
	uint64_t v[4];
	struct ht_event ev = {
		.kind = k->kind,
		.fn = k->fn,
		.align = k->align,
		.time = sc->clock,
		.tid = 1,
	};

	if (s->n_tok < na)
		fail(s, "'%s' needs %zu numbers", k->word, na);
	for (size_t i = 0; i < na; i++)
		v[i] = eval(sc, s, s->tok[i]);
	ev.addr = v[0];
	switch (k->args) {
	case A_ADDR_SIZE:
		ev.size = v[1];
		break;
	case A_ADDR_NMEMB_SIZE:
		if (v[2] && v[1] > UINT64_MAX / v[2])
			fail(s, "calloc size overflows: no event happens");
		ev.size = v[1] * v[2];
		break;
	case A_ADDR_ALIGN_SIZE:
		ev.align = v[1];
		ev.size = v[2];
		break;
	case A_NEW_OLD_SIZE:
		ev.old_addr = v[1];
		ev.size = v[2];
		break;
	case A_ADDR:
		break;
	case A_MREMAP:
		ev.old_addr = v[0];
		ev.old_size = v[1];
		ev.addr = v[2];
		ev.size = v[3];
		break;
	case A_OLD_NEW:
		ev.old_addr = v[0];
		ev.addr = v[1];
		break;
	case A_TID_SIZE:
		ev.tid = (uint32_t)v[0];
		ev.size = v[1];
		break;
	case A_TID:
		ev.tid = (uint32_t)v[0];
		break;
	}
	ev.npcs = (uint32_t)build_stack(sc, s, s->tok + na, s->n_tok - na);
	ev.pcs = sc->pcs;
	snap_engine_feed(sc->eng, &ev);
}

static void
do_cmd(struct script *sc, const struct stmt *s)
{
	sc->cmd = s->tok;
	sc->n_cmd = s->n_tok;
}

static void run(struct script *sc, size_t from, size_t to);

static void
do_repeat(struct script *sc, const struct stmt *s, size_t at)
{
	uint64_t count = eval(sc, s, s->tok[0]);

	ht_xgrow((void **)&sc->vars, &sc->cap_vars, sc->n_vars + 1,
		 sizeof(*sc->vars));
	sc->vars[sc->n_vars].name = s->tok[1];
	sc->n_vars++;
	for (uint64_t i = 0; i < count; i++) {
		sc->vars[sc->n_vars - 1].value = i;
		run(sc, at + 1, s->end);
	}
	sc->n_vars--;
}

/* Execute statements [FROM, TO). */
static void
run(struct script *sc, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++) {
		const struct stmt *s = &sc->stmts[i];

		switch (s->op) {
		case OP_CMD:
			do_cmd(sc, s);
			break;
		case OP_SYM:
			do_sym(sc, s);
			break;
		case OP_STACK:
			do_stack(sc, s);
			break;
		case OP_PYFRAME:
			do_pyframe(sc, s);
			break;
		case OP_TIME:
			sc->clock = eval(sc, s, s->tok[0]);
			break;
		case OP_REPEAT:
			do_repeat(sc, s, i);
			i = s->end;
			break;
		case OP_END:
			break;
		case OP_START:
			snap_engine_start(sc->eng, sc->clock);
			break;
		case OP_EVENT:
			do_event(sc, s);
			break;
		}
	}
}

static void
script_fini(struct script *sc)
{
	for (size_t i = 0; i < sc->n_stmts; i++) {
		struct stmt *s = &sc->stmts[i];

		for (size_t j = 0; j <= s->n_tok; j++)
			free(s->word[j]);
		free(s->word);
		free(s->rest);
	}
	free(sc->stmts);
	for (size_t i = 0; i < sc->n_files; i++)
		free(sc->files[i]);
	free(sc->files);
	for (size_t i = 0; i < sc->n_stacks; i++) {
		free(sc->stacks[i].name);
		free(sc->stacks[i].pcs);
	}
	free(sc->stacks);
	free(sc->vars);
	free(sc->pcs);
}

static bool
has_start(const struct script *sc)
{
	for (size_t i = 0; i < sc->n_stmts; i++)
		if (sc->stmts[i].op == OP_START)
			return true;
	return false;
}

static int
usage(void)
{
	fputs("usage: replay [MASSIF-OPTIONS...] EVENTS-FILE OUT-FILE\n",
	      stderr);
	return EXIT_HARNESS;
}

static void
parse_options(struct ht_options *opt, int argc, char **argv)
{
	char err[256];
	int rc;

	ht_options_init(opt);
	for (int i = 1; i < argc; i++) {
		rc = ht_options_apply(opt, argv[i], err, sizeof(err));
		if (rc == 1)
			fail(NULL, "unknown option '%s'", argv[i]);
		if (rc < 0)
			fail(NULL, "%s", err);
	}
	if (ht_options_finish(opt, err, sizeof(err)) < 0)
		fail(NULL, "%s", err);
}

int
main(int argc, char **argv)
{
	struct script sc = { 0 };
	struct ht_options opt;
	struct ht_symbolizer sym;
	struct out_header h;
	int rc;

	if (argc < 3)
		return usage();
	parse_options(&opt, argc - 2, argv);
	read_file(&sc, argv[argc - 2], 0);
	match_blocks(&sc);

	sc.syms = sym_table_new();
	sym = sym_table_symbolizer(sc.syms);
	sc.eng = snap_engine_new(&opt, &sym,
				 snap_extra_new(opt.massif_compat ?
							SNAP_EXTRA_VALGRIND :
							SNAP_EXTRA_GLIBC,
						&opt));
	/* The start-up snapshot comes where a "start" line says (after the
	   start-up mappings of --pages-as-heap), else before everything. */
	if (!has_start(&sc))
		snap_engine_start(sc.eng, 0);
	run(&sc, 0, sc.n_stmts);
	if (!sc.cmd)
		fail(NULL, "%s: no 'cmd' line", argv[argc - 2]);

	h = (struct out_header){
		.desc_args = opt.desc_args,
		.n_desc_args = opt.n_desc_args,
		.cmd_argv = sc.cmd,
		.cmd_argc = sc.n_cmd,
		.time_unit = opt.time_unit,
		.pages_as_heap = opt.pages_as_heap,
		.threshold = opt.threshold,
	};
	rc = out_massif_write(argv[argc - 1], &h, sc.eng, &sym);
	if (rc < 0)
		fprintf(stderr, "replay: %s: %s\n", argv[argc - 1],
			ht_strerror(-rc));
	/* REPLAY_SITES=1: the .sites file beside it, as heaptrace writes */
	if (rc >= 0 && getenv("REPLAY_SITES")) {
		char *sites = out_sites_path(argv[argc - 1]);
		rc = out_sites_write(sites, 1, &h, sc.eng, &sym, NULL);
		if (rc < 0)
			fprintf(stderr, "replay: %s: %s\n", sites,
				ht_strerror(-rc));
		free(sites);
	}

	snap_engine_free(sc.eng);
	sym_table_free(sc.syms);
	script_fini(&sc);
	ht_options_fini(&opt);
	return rc < 0 ? 1 : 0;
}
