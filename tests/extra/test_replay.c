/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays recorded workloads through the Valgrind model and compares, per
   operation, the useful and extra totals and the payload address with what
   real Massif produced (cases/NAME.exp, made by regen.sh). Arguments: the
   cases directory, then case names; without names, every NAME.ops there
   that has a NAME.exp. The calls are normalised as the engine normalises
   them (Massif §2.2). */
#include "snapshot/extra.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/options.h"
#include "snapshot/extra_priv.h"
#include "ops.h"

struct slot {
	bool live;
	uint64_t req;
	struct snap_extra_block b;
};

struct totals {
	uint64_t heap, extra, addr;
};

static char text[1 << 20];
static struct op ops[OPS_MAX];
static struct slot slots[OPS_SLOTS];

static int
read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	if (n == size - 1) {
		fprintf(stderr, "%s: too big\n", path);
		return -1;
	}
	buf[n] = '\0';
	return 0;
}

/* The Massif options of a case: --alignment= and --heap-admin=, one per
   word of the .opts file's non-comment lines. */
static int
read_opts(const char *path, struct ht_options *opt)
{
	static char buf[4096];

	memset(opt, 0, sizeof(*opt));
	opt->heap_admin = 8;
	opt->alignment = 16;
	if (read_file(path, buf, sizeof(buf)))
		return -1;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '#')
			continue;
		for (char *w = line; (w = strstr(w, "--")); w += 2) {
			sscanf(w, "--alignment=%u", &opt->alignment);
			sscanf(w, "--heap-admin=%u", &opt->heap_admin);
		}
	}
	return 0;
}

/* memalign's own normalisation of its argument. */
static uint64_t
norm_align(uint64_t a)
{
	uint64_t p = 16;

	while (p < a)
		p <<= 1;
	return p;
}

static void
account(struct totals *t, const struct slot *s, int sign)
{
	t->heap += (uint64_t)sign * s->req;
	t->extra += (uint64_t)sign * s->b.extra;
}

static int
do_alloc(struct snap_extra *x, struct totals *t, const struct op *o,
	 uint64_t req, uint64_t align)
{
	struct slot *s = &slots[o->id];

	if (snap_extra_alloc(x, req, align, 0, &s->b))
		return -1;
	s->live = true;
	s->req = req;
	account(t, s, 1);
	t->addr = extra_valgrind_payload(x, s->b.cookie);
	return 0;
}

static void
do_free(struct snap_extra *x, struct totals *t, struct slot *s)
{
	account(t, s, -1);
	snap_extra_release(x, &s->b);
	s->live = false;
	t->addr = 0;
}

static int
do_realloc(struct snap_extra *x, struct totals *t, const struct op *o)
{
	struct slot *s = &slots[o->id];

	if (!s->live)
		return do_alloc(x, t, o, o->size, 0);
	if (o->size == 0) {
		do_free(x, t, s);
		return 0;
	}
	account(t, s, -1);
	if (snap_extra_realloc(x, &s->b, s->req, o->size, 0)) {
		account(t, s, 1);
		return -1;
	}
	s->req = o->size;
	account(t, s, 1);
	t->addr = extra_valgrind_payload(x, s->b.cookie);
	return 0;
}

/* Apply O as Massif would; -1 when Massif would have recorded nothing. */
static int
apply(struct snap_extra *x, struct totals *t, const struct op *o)
{
	switch (o->kind) {
	case 'm':
		return do_alloc(x, t, o, o->size, 0);
	case 'c':
		if (o->count && o->size > UINT64_MAX / o->count)
			return -1;
		return do_alloc(x, t, o, o->count * o->size, 0);
	case 'a':
	case 'p':
	case 'A':
	case 'v':
		return do_alloc(x, t, o, o->size, norm_align(o->align));
	case 'r':
		return do_realloc(x, t, o);
	case 'f':
		if (!slots[o->id].live)
			return -1;
		do_free(x, t, &slots[o->id]);
		return 0;
	}
	return -1;
}

static int
run_case(const char *dir, const char *name)
{
	char path[4096];
	struct ht_options opt;
	struct snap_extra *x;
	struct totals t = { 0, 0, 0 };
	int n_ops, line = 0, bad = 0;
	char *exp, *save = NULL;

	snprintf(path, sizeof(path), "%s/%s.opts", dir, name);
	if (read_opts(path, &opt))
		return 1;
	snprintf(path, sizeof(path), "%s/%s.ops", dir, name);
	if (read_file(path, text, sizeof(text)))
		return 1;
	n_ops = ops_parse(text, ops, OPS_MAX);
	if (n_ops < 0) {
		fprintf(stderr, "%s: malformed\n", path);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.exp", dir, name);
	if (read_file(path, text, sizeof(text)))
		return 1;
	memset(slots, 0, sizeof(slots));
	x = snap_extra_new(SNAP_EXTRA_VALGRIND, &opt);
	exp = strtok_r(text, "\n", &save);
	for (int i = 0; i < n_ops; i++) {
		uint64_t h, e, a;

		while (exp && exp[0] == '#')
			exp = strtok_r(NULL, "\n", &save);
		if (!exp || sscanf(exp, "%" SCNu64 " %" SCNu64 " %" SCNx64,
				   &h, &e, &a) != 3) {
			fprintf(stderr, "%s: expectation %d missing\n", name,
				i);
			bad = 1;
			break;
		}
		line++;
		if (apply(x, &t, &ops[i])) {
			fprintf(stderr, "%s: op %d failed in the model\n",
				name, i);
			bad = 1;
			break;
		}
		if (t.heap != h || t.extra != e || t.addr != a) {
			fprintf(stderr,
				"%s: op %d (%c %" PRIu32 "): model %" PRIu64
				" %" PRIu64 " 0x%" PRIx64 ", Massif %" PRIu64
				" %" PRIu64 " 0x%" PRIx64 "\n",
				name, i, ops[i].kind, ops[i].id, t.heap,
				t.extra, t.addr, h, e, a);
			bad = 1;
			break;
		}
		exp = strtok_r(NULL, "\n", &save);
	}
	snap_extra_free(x);
	if (!bad)
		printf("%s: %d operations match\n", name, line);
	return bad;
}

static int
by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every case of DIR, in name order. */
static int
run_all(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL, path[4096];
	size_t n = 0, cap = 0;
	int bad = 0;

	if (!d) {
		fprintf(stderr, "%s: %s\n", dir, strerror(errno));
		return 99;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".ops"))
			continue;
		snprintf(path, sizeof(path), "%s/%.*s.exp", dir,
			 (int)(len - 4), e->d_name);
		if (access(path, R_OK))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 32;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n++] = strndup(e->d_name, len - 4);
	}
	closedir(d);
	if (n == 0) {
		fprintf(stderr, "%s: no cases\n", dir);
		return 99;
	}
	qsort(names, n, sizeof(*names), by_name);
	for (size_t i = 0; i < n; i++) {
		bad |= run_case(dir, names[i]);
		free(names[i]);
	}
	free(names);
	return bad;
}

int
main(int argc, char **argv)
{
	int bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test_replay CASES-DIR [NAME...]\n");
		return 99;
	}
	if (argc == 2)
		return run_all(argv[1]);
	for (int i = 2; i < argc; i++)
		bad |= run_case(argv[1], argv[i]);
	return bad;
}
