/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of output/site_wrappers.c and of naming past the wrappers it
   finds (output/site_name.c), on a profile's stacks made by hand: a C
   program's xmalloc, an sqlite-like wrapper behind a static helper, and
   the functions that must not be taken for wrappers (one or two callers,
   other work than allocating, main); read-time --alloc-fn; diff's union.
   Usage: test_site_wrappers; exit 0 pass, 1 fail. */
#include "output/site_name.h"
#include "output/site_wrappers.h"

#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

#define LIBC 0x7f0000001000u
#define PROG 0x555500001000u

static char libc_path[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
static char prog_path[] = "/usr/bin/prog";

static struct sites_mapping maps[] = {
	{ .start = PROG - 0x1000, .end = PROG + 0x100000, .file = prog_path },
	{ .start = LIBC - 0x1000, .end = LIBC + 0x100000, .file = libc_path },
};

/* A frame of the program by function name (address by its first letter,
   so that unnamed frames differ), libc's malloc, libc's start-up. */
#define P(fn) { PROG + (unsigned char)(fn)[0], (char *)(fn), NULL, 0, NULL }
#define Q(addr) { PROG + (addr), (char *)"???", NULL, 0, NULL }
#define MALLOC { LIBC + 0x10, (char *)"malloc", NULL, 0, NULL }
#define START { LIBC + 0x20, (char *)"(below main)", NULL, 0, NULL }

/* Stacks of a program whose xmalloc is called by load, nodes and names,
   and whose make_node mallocs for two callers only; parse mallocs for
   three callers but also calls xmalloc through tokenize in many stacks. */
static struct sites_frame s_load[] = { MALLOC, P("xmalloc"), P("load"),
				       P("main"), START };
static struct sites_frame s_nodes[] = { MALLOC, P("xmalloc"), P("nodes"),
					P("main"), START };
static struct sites_frame s_names[] = { MALLOC, P("xmalloc"), P("names"),
					P("load"), P("main"), START };
static struct sites_frame s_node1[] = { MALLOC, P("make_node"), P("nodes"),
					P("main"), START };
static struct sites_frame s_node2[] = { MALLOC, P("make_node"), P("graph"),
					P("main"), START };
static struct sites_frame s_parse1[] = { MALLOC, P("parse"), P("load"),
					 P("main"), START };
static struct sites_frame s_parse2[] = { MALLOC, P("parse"), P("graph"),
					 P("main"), START };
static struct sites_frame s_parse3[] = { MALLOC, P("parse"), P("names"),
					 P("main"), START };
static struct sites_frame s_parse4[] = { MALLOC, P("xmalloc"), P("tokenize"),
					 P("parse"), P("main"), START };
static struct sites_frame s_main[] = { MALLOC, P("main"), START };

#define SITE(fr) { .frames = (fr), .n_frames = sizeof(fr) / sizeof((fr)[0]) }

static struct sites_site prog_sites[] = {
	SITE(s_load), SITE(s_nodes), SITE(s_names), SITE(s_node1),
	SITE(s_node2), SITE(s_parse1), SITE(s_parse2), SITE(s_parse3),
	SITE(s_parse4), SITE(s_main),
};
static struct sites_file prog_file = {
	.sites = prog_sites, .n_sites = sizeof(prog_sites) / sizeof(*prog_sites),
	.mappings = maps, .n_mappings = 2,
};

/* Whether NM's wrappers are exactly WANT[0..N), in order. */
static bool
wrappers_are(const struct site_naming *nm, const char *const *want, size_t n)
{
	if (nm->n_wrappers != n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (strcmp(nm->wrappers[i], want[i]) != 0)
			return false;
	return true;
}

static const char *
name_of(const struct site_naming *nm, const struct sites_site *s)
{
	const struct sites_frame *fr = site_name_frame(nm, s);
	return fr ? fr->function : "NULL";
}

#define EXPECT_NAME(nm, site, want)                                         \
	do {                                                                \
		const char *got_ = name_of(nm, site);                       \
		CHECK(strcmp(got_, want) == 0, "got '%s', want '%s'", got_, \
		      want);                                                \
	} while (0)

/* xmalloc is found; make_node (two callers), parse (other work) and
   main are not; sites are named by xmalloc's callers. */
static void
test_program(void)
{
	struct site_naming nm;
	site_naming_init(&nm, &prog_file, NULL, NULL, 0, true);
	static const char *const want[] = { "xmalloc" };
	CHECK(wrappers_are(&nm, want, 1), "%zu wrappers, first %s",
	      nm.n_wrappers, nm.n_wrappers ? nm.wrappers[0] : "-");
	EXPECT_NAME(&nm, &prog_sites[0], "load");
	EXPECT_NAME(&nm, &prog_sites[2], "names");
	EXPECT_NAME(&nm, &prog_sites[3], "make_node");
	EXPECT_NAME(&nm, &prog_sites[5], "parse");
	EXPECT_NAME(&nm, &prog_sites[8], "tokenize");
	EXPECT_NAME(&nm, &prog_sites[9], "main");
	site_naming_free(&nm);

	/* without detection, as before */
	site_naming_init(&nm, &prog_file, NULL, NULL, 0, false);
	CHECK(nm.n_wrappers == 0, "%zu wrappers", nm.n_wrappers);
	EXPECT_NAME(&nm, &prog_sites[0], "xmalloc");
	site_naming_free(&nm);

	/* read-time --alloc-fn, with or without detection */
	char *fns[] = { "make_node" };
	site_naming_init(&nm, &prog_file, NULL, fns, 1, false);
	EXPECT_NAME(&nm, &prog_sites[3], "nodes");
	EXPECT_NAME(&nm, &prog_sites[4], "graph");
	EXPECT_NAME(&nm, &prog_sites[0], "xmalloc");
	site_naming_free(&nm);
	site_naming_init(&nm, &prog_file, NULL, fns, 1, true);
	EXPECT_NAME(&nm, &prog_sites[3], "nodes");
	EXPECT_NAME(&nm, &prog_sites[0], "load");
	site_naming_free(&nm);

	/* the profile's own --alloc-fn=xmalloc: nothing left to find */
	site_naming_init(&nm, &prog_file, "--alloc-fn=xmalloc", NULL, 0, true);
	CHECK(nm.n_wrappers == 0, "%zu wrappers", nm.n_wrappers);
	EXPECT_NAME(&nm, &prog_sites[1], "nodes");
	site_naming_free(&nm);
}

/* sqlite's shape: malloc <- static helper (unnamed) <- sqlite3Malloc <-
   unnamed <- the callers; and a wrapper with only unnamed callers. */
static struct sites_frame q1[] = { MALLOC, Q(0x900), P("sqlite3Malloc"),
				   Q(0x910), P("btreeInsert"), P("main") };
static struct sites_frame q2[] = { MALLOC, Q(0x900), P("sqlite3Malloc"),
				   Q(0x910), P("vdbeExec"), P("main") };
static struct sites_frame q3[] = { MALLOC, Q(0x900), P("sqlite3Malloc"),
				   P("pcacheFetch"), P("main") };
static struct sites_frame u1[] = { MALLOC, P("ualloc"), Q(0x920), START };
static struct sites_frame u2[] = { MALLOC, P("ualloc"), Q(0x930), START };
static struct sites_site sq_sites[] = { SITE(q1), SITE(q2), SITE(q3),
					SITE(u1), SITE(u2) };
static struct sites_file sq_file = {
	.sites = sq_sites, .n_sites = 5, .mappings = maps, .n_mappings = 2,
};

static void
test_unnamed_between(void)
{
	struct site_naming nm;
	site_naming_init(&nm, &sq_file, NULL, NULL, 0, true);
	static const char *const want[] = { "sqlite3Malloc" };
	CHECK(wrappers_are(&nm, want, 1), "%zu wrappers", nm.n_wrappers);
	EXPECT_NAME(&nm, &sq_sites[0], "btreeInsert");
	EXPECT_NAME(&nm, &sq_sites[2], "pcacheFetch");
	EXPECT_NAME(&nm, &sq_sites[3], "ualloc");
	site_naming_free(&nm);
}

/* diff names both profiles alike: the union of their wrappers. */
static void
test_union(void)
{
	struct site_naming a, b;
	site_naming_init(&a, &prog_file, NULL, NULL, 0, true);
	site_naming_init(&b, &sq_file, NULL, NULL, 0, true);
	site_naming_add_wrappers(&a, &b);
	site_naming_add_wrappers(&a, &b);
	static const char *const want[] = { "sqlite3Malloc", "xmalloc" };
	CHECK(wrappers_are(&a, want, 2), "%zu wrappers", a.n_wrappers);
	CHECK(site_naming_is_alloc_fn(&a, "xmalloc", true), "xmalloc");
	CHECK(!site_naming_is_alloc_fn(&a, "xmalloc", false), "no wrappers");
	site_naming_free(&a);
	site_naming_free(&b);
	CHECK(a.n_wrappers == 0 && !a.wrappers, "freed");
}

/* No sites, a site without frames, no file. */
static void
test_empty(void)
{
	struct sites_file none = { 0 };
	struct site_naming nm;
	site_naming_init(&nm, &none, NULL, NULL, 0, true);
	CHECK(nm.n_wrappers == 0, "none");
	struct sites_site empty = { 0 };
	CHECK(site_name_frame(&nm, &empty) == NULL, "no frames");
	site_naming_free(&nm);
	site_naming_init(&nm, NULL, NULL, NULL, 0, true);
	CHECK(nm.n_wrappers == 0, "no file");
	site_naming_free(&nm);
}

int
main(void)
{
	test_program();
	test_unnamed_between();
	test_union();
	test_empty();
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
