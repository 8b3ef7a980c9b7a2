/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of output/sites_read.c: the hand-written data/a.massif.sites read
   figure by figure, version 2's numbered frames and stacks (its file of
   data/c.massif read as the version-1 one), unknown keys and line types
   skipped, each kind of malformed line refused with its file and line,
   and random damage to valid files of both versions never crashing the
   reader (run it under ASan).
   Usage: test_sites_read CASE SRCDIR; exit 0 pass, 1 fail, 99 harness. */
#include "output/sites_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

static char tmpdir[] = "/tmp/ht-sites-read-XXXXXX";
static const char *srcdir;

/* Write TEXT to a file of the temporary directory; its path. */
static const char *
write_file(const char *text, size_t len)
{
	static char path[64];
	snprintf(path, sizeof(path), "%s/t.sites", tmpdir);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(EXIT_HARNESS);
	}
	return path;
}

static void
test_valid(void)
{
	char path[4096], err[512];
	struct sites_file sf;
	snprintf(path, sizeof(path), "%s/data/a.massif.sites", srcdir);
	int rc = sites_read(path, &sf, NULL, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(sf.version == 1 && sf.has_pid && sf.pid == 1234, "header");
	CHECK(strcmp(sf.cmd, "./prog") == 0, "cmd '%s'", sf.cmd);
	CHECK(strcmp(sf.time_unit, "B") == 0, "time_unit");
	CHECK(sf.has_peak && sf.peak_snapshot == 1 && sf.peak_time == 4000 &&
	      sf.peak_heap == 3000, "peak");
	CHECK(sf.has_totals && sf.total_sites == 4 && sf.total_calls == 123 &&
	      sf.total_allocated == 9448 && sf.total_temporary == 101 &&
	      sf.total_leaked == 1016 && sf.total_leaked_blocks == 2,
	      "totals");
	CHECK(!sf.has_leak_check, "no leak check");
	CHECK(sf.n_sites == 4, "%zu sites", sf.n_sites);
	const struct sites_site *s = &sf.sites[0];
	CHECK(s->id == 1 && s->calls == 100 && s->allocated == 6400 &&
	      s->peak == 0 && s->temporary == 100 && s->n_frames == 3,
	      "site 1");
	CHECK(strcmp(s->frames[0].function, "malloc") == 0 &&
	      !s->frames[0].file && s->frames[0].addr == 0x48407B4 &&
	      strcmp(s->frames[0].object,
		     "/usr/lib/x86_64-linux-gnu/libc.so.6") == 0, "malloc");
	CHECK(strcmp(s->frames[1].file, "prog.c") == 0 &&
	      s->frames[1].line == 4 && !s->frames[1].object, "scratch");
	s = &sf.sites[3];
	CHECK(s->leaked == 16 && s->leaked_blocks == 1 && s->n_frames == 4,
	      "site 4");
	CHECK(strcmp(s->frames[0].function, "operator new(unsigned long)") == 0,
	      "a name with blanks: '%s'", s->frames[0].function);
	CHECK(strcmp(s->frames[1].function, "???") == 0 &&
	      !s->frames[1].file && !s->frames[1].object, "no place");
	CHECK(strcmp(s->frames[2].file, "we\"ird\\dir/x.c") == 0 &&
	      s->frames[2].line == 3, "odd file '%s'", s->frames[2].file);
	sites_free(&sf);
}

static void
test_unknown(void)
{
	static const char text[] =
		"heaptrace-sites: 1\n"
		"# a comment\n"
		"\n"
		"later_line: a=1 b=2\n"
		"peak: snapshot=-1 time=0 heap=0 later=3\n"
		"totals: sites=1 calls=2 allocated=3 temporary=0 leaked=3 "
		"leaked_blocks=1 later=x\n"
		"leak_check: full definite=3/1 indirect=0/0 possible=0/0 "
		"reachable=0/0 later=1/2\n"
		"site: 7 calls=2 allocated=3 peak=0 leaked=3 leaked_blocks=1 "
		"temporary=0 definite=3 indirect=0 possible=0 reachable=0 "
		"later=9 word\n"
		"frame: 0xABC f\tf.c:1\n"
		"other: frame-like\n"
		"frame: 0xDEF main\n";
	char err[512];
	struct sites_file sf;
	int rc = sites_read(write_file(text, sizeof(text) - 1), &sf, NULL,
			    err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(sf.has_peak && sf.peak_snapshot == -1, "peak -1");
	CHECK(sf.has_leak_check && strcmp(sf.leak_mode, "full") == 0 &&
	      sf.leak_bytes[SITES_DEFINITE] == 3 &&
	      sf.leak_blocks[SITES_DEFINITE] == 1, "leak check");
	CHECK(sf.n_sites == 1 && sf.sites[0].id == 7 &&
	      sf.sites[0].has_kinds &&
	      sf.sites[0].kind_bytes[SITES_DEFINITE] == 3, "site");
	CHECK(sf.sites[0].n_frames == 2 &&
	      strcmp(sf.sites[0].frames[1].function, "main") == 0 &&
	      sf.sites[0].frames[0].addr == 0xABC, "frames");
	sites_free(&sf);
}

/* The lines and keys issue 25 added: sampling:, peak_blocks=, mapping:. */
static void
test_mappings(void)
{
	static const char text[] =
		"heaptrace-sites: 1\n"
		"time_unit: B\n"
		"sampling: interval=524288 seed=42\n"
		"site: 1 calls=2 allocated=3 peak=3 peak_blocks=2 leaked=0 "
		"leaked_blocks=0 temporary=0\n"
		"frame: 0x55550010 f\tf.c:1\n"
		"site: 2 calls=1 allocated=1 peak=0 leaked=0 leaked_blocks=0 "
		"temporary=0\n"
		"frame: 0x7FFF0020 g\tg.c:2\n"
		/* out of order: the reader sorts them */
		"mapping: start=0x7fff0000 end=0x7FFF8000 offset=0x1000 "
		"later=1\n"
		"mapping: start=0x55550000 end=0x55560000 offset=0x0 "
		"build_id=00ff3e file=/tmp/a dir/prog\n";
	char err[512];
	struct sites_file sf;
	int rc = sites_read(write_file(text, sizeof(text) - 1), &sf, NULL,
			    err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(sf.has_sampling && sf.sampling_interval == 524288 &&
	      sf.sampling_seed == 42, "sampling");
	struct sites_sampling smp;
	CHECK(sites_sampling_of(&sf, NULL, &smp) && smp.interval == 524288 &&
	      smp.has_seed && smp.seed == 42, "sites_sampling_of");
	CHECK(sites_sampling_of(NULL, "--depth=3 --sampling-interval=4096",
				&smp) && smp.interval == 4096 && !smp.has_seed,
	      "from desc");
	char line[256];
	sites_sampling_text(&smp, line, sizeof(line));
	CHECK(strncmp(line, "sampled every 4.0 KiB: figures are estimated",
		      44) == 0, "'%s'", line);
	CHECK(!sites_sampling_of(NULL, "--depth=3", &smp), "exact desc");
	CHECK(sf.n_sites == 2 && sf.sites[0].has_peak_blocks &&
	      sf.sites[0].peak_blocks == 2 && !sf.sites[1].has_peak_blocks,
	      "peak_blocks");
	CHECK(sf.n_mappings == 2, "%zu mappings", sf.n_mappings);
	if (sf.n_mappings == 2) {
		const struct sites_mapping *m = &sf.mappings[0];
		CHECK(m->start == 0x55550000 && m->end == 0x55560000 &&
		      m->offset == 0 && strcmp(m->build_id, "00ff3e") == 0 &&
		      strcmp(m->file, "/tmp/a dir/prog") == 0, "mapping 1");
		m = &sf.mappings[1];
		CHECK(m->start == 0x7FFF0000 && m->end == 0x7FFF8000 &&
		      m->offset == 0x1000 && !m->build_id && !m->file,
		      "mapping 2");
		CHECK(sites_mapping_of(&sf, 0x55550010) == &sf.mappings[0] &&
		      sites_mapping_of(&sf, 0x7FFF0020) == &sf.mappings[1] &&
		      !sites_mapping_of(&sf, 0x55560000) &&
		      !sites_mapping_of(&sf, 0x1000), "mapping of");
	}
	sites_free(&sf);
}

/* Version 2: frames and stacks numbered once, a site's frames expanded
   from its stack (inlined lines kept together, innermost first), figures
   of 0 left out; and data/c.massif.sites-v2 read as its version-1 twin
   data/c.massif.sites, frame by frame. */
static void
test_version2(void)
{
	static const char text[] =
		"heaptrace-sites: 2\n"
		"frame: 1 0x10 main\tm.c:9\n"
		"frame: 2 0x20 inl\ti.h:2\n"
		"frame: 2 0x20 outer\to.c:3\n"
		"frame: 3 0x30 malloc\t(in /lib/libc.so.6)\n"
		"stack: 1 0 1 2 3\n"
		"site: 1 stack=3 calls=2 allocated=30 leaked=10\n"
		"frame: 4 0x40 g\t\n"
		"stack: 4 1 4 3\n"
		"site: 2 stack=5 calls=1 allocated=5 peak=5 temporary=1\n"
		"site: 3 stack=0 calls=1 allocated=1\n"
		"site: 4 stack=1 calls=1 allocated=1 later=2\n";
	char err[512];
	struct sites_file sf;
	int rc = sites_read(write_file(text, sizeof(text) - 1), &sf, NULL,
			    err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	if (rc)
		return;
	CHECK(sf.version == 2 && sf.n_sites == 4, "%u, %zu sites", sf.version,
	      sf.n_sites);
	const struct sites_site *s = &sf.sites[0];
	CHECK(s->calls == 2 && s->allocated == 30 && s->leaked == 10 &&
	      s->peak == 0 && s->temporary == 0 && s->has_peak_blocks &&
	      s->peak_blocks == 0 && !s->has_kinds, "site 1 figures");
	static const char *const want1[] = { "malloc", "inl", "outer",
					     "main" };
	CHECK(s->n_frames == 4, "site 1: %zu frames", s->n_frames);
	for (size_t i = 0; i < 4 && i < s->n_frames; i++)
		CHECK(strcmp(s->frames[i].function, want1[i]) == 0,
		      "site 1 frame %zu: %s", i, s->frames[i].function);
	CHECK(s->n_frames == 4 && s->frames[1].addr == 0x20 &&
	      s->frames[2].addr == 0x20 && s->frames[1].line == 2 &&
	      strcmp(s->frames[2].file, "o.c") == 0 &&
	      strcmp(s->frames[0].object, "/lib/libc.so.6") == 0,
	      "site 1 places");
	s = &sf.sites[1];
	CHECK(s->n_frames == 3 && strcmp(s->frames[0].function, "malloc") == 0 &&
	      strcmp(s->frames[1].function, "g") == 0 && !s->frames[1].file &&
	      !s->frames[1].object && strcmp(s->frames[2].function, "main") == 0,
	      "site 2 frames");
	CHECK(s->peak == 5 && s->temporary == 1, "site 2 figures");
	CHECK(sf.sites[2].n_frames == 0 && sf.sites[3].n_frames == 1 &&
	      strcmp(sf.sites[3].frames[0].function, "main") == 0,
	      "sites 3 and 4");
	sites_free(&sf);

	char p1[4096], p2[4096];
	struct sites_file a, b;
	snprintf(p1, sizeof(p1), "%s/data/c.massif.sites", srcdir);
	snprintf(p2, sizeof(p2), "%s/data/c.massif.sites-v2", srcdir);
	if (sites_read(p1, &a, NULL, err, sizeof(err)) ||
	    sites_read(p2, &b, NULL, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		exit(EXIT_HARNESS);
	}
	CHECK(a.version == 1 && b.version == 2 && a.n_sites == 4 &&
	      b.n_sites == 4 && a.n_mappings == 2 && b.n_mappings == 2,
	      "c.massif.sites: versions %u %u, %zu %zu sites", a.version,
	      b.version, a.n_sites, b.n_sites);
	for (size_t i = 0; i < a.n_sites && i < b.n_sites; i++) {
		const struct sites_site *x = &a.sites[i], *y = &b.sites[i];
		CHECK(x->calls == y->calls && x->allocated == y->allocated &&
		      x->peak == y->peak && x->peak_blocks == y->peak_blocks &&
		      x->leaked == y->leaked &&
		      x->leaked_blocks == y->leaked_blocks &&
		      x->temporary == y->temporary &&
		      x->has_kinds == y->has_kinds &&
		      !memcmp(x->kind_bytes, y->kind_bytes,
			      sizeof(x->kind_bytes)) &&
		      x->n_frames == y->n_frames, "site %zu figures", i + 1);
		for (size_t j = 0; j < x->n_frames && j < y->n_frames; j++) {
			const struct sites_frame *f = &x->frames[j],
						 *g = &y->frames[j];
			CHECK(f->addr == g->addr && f->line == g->line &&
			      !strcmp(f->function, g->function) &&
			      !f->file == !g->file &&
			      (!f->file || !strcmp(f->file, g->file)) &&
			      !f->object == !g->object &&
			      (!f->object || !strcmp(f->object, g->object)),
			      "site %zu frame %zu", i + 1, j);
		}
	}
	sites_free(&a);
	sites_free(&b);
}

/* A stack deeper than the reader takes (SITES_MAX_STACK_LINES frame
   lines, far beyond what the writer makes) is refused, so that a small
   file cannot make the reader build huge sites. */
static void
test_deep(void)
{
	size_t cap = 64 + 3 * 8200;
	char *text = malloc(cap);
	if (!text)
		exit(EXIT_HARNESS);
	int n = snprintf(text, cap, "heaptrace-sites: 2\nframe: 1 0x1 f\t\n"
			 "stack: 1 0");
	for (int i = 0; i < 8193; i++)
		n += snprintf(text + n, cap - (size_t)n, " 1");
	n += snprintf(text + n, cap - (size_t)n, "\n");
	char err[512];
	struct sites_file sf;
	int rc = sites_read(write_file(text, (size_t)n), &sf, NULL, err,
			    sizeof(err));
	CHECK(rc == -1 && strstr(err, ":3: stack: deeper than 8192"),
	      "deep: %d %s", rc, rc ? err : "");
	if (!rc)
		sites_free(&sf);
	free(text);
}

/* One malformed text and the words its error must hold. */
struct bad_case {
	const char *text;
	const char *want;
};

static const struct bad_case bad_cases[] = {
	{ "", "empty" },
	{ "heaptrace-massif: 1\n", ":1: not a heaptrace sites file" },
	{ "heaptrace-sites: 3\n", ":1: version 3" },
	{ "heaptrace-sites: one\n", ":1: version 'one'" },
	{ "heaptrace-sites: 1\nno colon here\n", ":2: not a 'type: ...'" },
	{ "heaptrace-sites: 1\nfoo:bar\n", ":2: not a 'type: ...'" },
	{ "heaptrace-sites: 1\npid: x\n", ":2: pid 'x'" },
	{ "heaptrace-sites: 1\npeak: snapshot=1 time=2\n",
	  ":2: peak: line without heap=" },
	{ "heaptrace-sites: 1\npeak: snapshot=1 time=-2 heap=3\n",
	  ":2: time=-2 is not a decimal number" },
	{ "heaptrace-sites: 1\ntotals: sites=1 calls=99999999999999999999 "
	  "allocated=0 temporary=0 leaked=0\n", ":2: calls=9999" },
	{ "heaptrace-sites: 1\nsite: calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\n", ":2: site: line without its decimal ID" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 "
	  "temporary=0\n", ":2: site: line without leaked=" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1x peak=0 "
	  "leaked=0 temporary=0\n", ":2: allocated=1x" },
	{ "heaptrace-sites: 1\n# c\nframe: 0x1 f\tf.c:1\n",
	  ":3: frame: line before any site" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\nframe: 12 f\tf.c:1\n", ":3: frame: address" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\nframe: 0xZZ f\tf.c:1\n", ":3: frame: not" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\nframe: 0x12\n", ":3: frame: not" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\nframe: 0x12345678901234567 f\n", ":3: frame: not" },
	{ "heaptrace-sites: 1\nsite: 1 calls=1 allocated=1 peak=0 leaked=0 "
	  "temporary=0\nframe: 0x12 f\tf.c:x\n", ":3: frame: place 'f.c:x'" },
	{ "heaptrace-sites: 1\nleak_check: definite=1/1\n",
	  ":2: leak_check: line without its mode" },
	{ "heaptrace-sites: 1\nleak_check: full definite=1\n",
	  ":2: leak_check: definite=1 is not" },
	{ "heaptrace-sites: 1\nheaptrace-sites: 1\n", ":2: a second" },
	{ "heaptrace-sites: 1\nsampling: seed=1\n",
	  ":2: sampling: line without interval=" },
	{ "heaptrace-sites: 1\nmapping: start=0xZZ end=0x10\n",
	  ":2: mapping: start=0xZZ is not 0xHEX" },
	{ "heaptrace-sites: 1\nmapping: start=0x20 end=0x10\n",
	  ":2: mapping: line without start= and a larger end=" },
	/* version 2's numbered frames and stacks */
	{ "heaptrace-sites: 2\nframe: 0x1 f\tf.c:1\n",
	  ":2: frame: line without its number" },
	{ "heaptrace-sites: 2\nframe: 2 0x1 f\tf.c:1\n",
	  ":2: frame: number out of order" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\tf.c:1\nframe: 1 0x2 g\t\n",
	  ":3: frame: a second line of a frame with another address" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 0 1\n"
	  "frame: 1 0x1 g\t\n", ":4: frame: number out of order" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\tf.c:x\n",
	  ":2: frame: place 'f.c:x'" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 2 0 1\n",
	  ":3: stack: number out of order" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 1 1\n",
	  ":3: stack: caller not defined above" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 0 1 2\n",
	  ":3: stack: frame not defined above" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 0 0\n",
	  ":3: stack: frame not defined above" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 0\n",
	  ":3: stack: frame '' is not" },
	{ "heaptrace-sites: 2\nstack: x\n", ":2: stack: not 'NUMBER" },
	{ "heaptrace-sites: 2\nframe: 1 0x1 f\t\nstack: 1 0 1\n"
	  "site: 1 stack=2 calls=1 allocated=1\n",
	  ":4: site: stack not defined above" },
	{ "heaptrace-sites: 2\nsite: 1 calls=1 allocated=1\n",
	  ":2: site: line without stack=" },
	{ "heaptrace-sites: 2\nsite: 1 stack=0 allocated=1\n",
	  ":2: site: line without calls=" },
};

static void
test_malformed(void)
{
	for (size_t i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];
		char err[512];
		struct sites_file sf;
		const char *path = write_file(c->text, strlen(c->text));
		int rc = sites_read(path, &sf, NULL, err, sizeof(err));
		CHECK(rc == -1, "case %zu accepted", i);
		if (rc == 0) {
			sites_free(&sf);
			continue;
		}
		CHECK(strncmp(err, path, strlen(path)) == 0 &&
		      strstr(err, c->want) && !strchr(err, '\n'),
		      "case %zu: '%s', want '%s'", i, err, c->want);
		CHECK(sf.n_sites == 0 && !sf.sites && !sf.cmd, "case %zu: "
		      "not emptied", i);
	}
	/* a NUL byte inside a line */
	static const char nul[] = "heaptrace-sites: 1\ncmd: a\0b\n";
	char err[512];
	struct sites_file sf;
	CHECK(sites_read(write_file(nul, sizeof(nul) - 1), &sf, NULL, err,
			 sizeof(err)) == -1 && strstr(err, ":2: NUL byte"),
	      "NUL: %s", err);
}

static void
test_missing(void)
{
	char path[128], err[512];
	int e;
	struct sites_file sf;
	snprintf(path, sizeof(path), "%s/none.sites", tmpdir);
	CHECK(sites_read(path, &sf, &e, err, sizeof(err)) == -1 &&
	      e == ENOENT && strstr(err, "none.sites: "), "%s", err);
	char *p = sites_path_of("massif.out.12");
	CHECK(strcmp(p, "massif.out.12.sites") == 0, "%s", p);
	free(p);
}

/* Flip, delete and insert bytes of the valid file NAME of data/ at
   random: the reader must return 0 or -1 with a one-line error, and never
   crash (ASan). */
static void
fuzz_file(const char *name)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/data/%s", srcdir, name);
	FILE *f = fopen(path, "r");
	static char orig[8192], buf[8192 + 64];
	size_t n = f ? fread(orig, 1, sizeof(orig), f) : 0;
	if (!f || n == 0 || n == sizeof(orig))
		exit(EXIT_HARNESS);
	fclose(f);
	static const char alphabet[] = "0x:= \t\n-#/()9aZ\0\377";
	srandom(15);
	for (int round = 0; round < 3000; round++) {
		size_t len = n;
		memcpy(buf, orig, n);
		for (int k = 1 + (int)(random() % 4); k > 0 && len > 1; k--) {
			size_t at = (size_t)random() % len;
			char c = alphabet[random() % (sizeof(alphabet) - 1)];
			switch (random() % 4) {
			case 0: /* replace */
				buf[at] = c;
				break;
			case 1: /* delete */
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
				break;
			case 2: /* insert */
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = c;
				len++;
				break;
			default: /* truncate */
				len = at + 1;
			}
		}
		char err[512] = "";
		struct sites_file sf;
		int rc = sites_read(write_file(buf, len), &sf, NULL, err,
				    sizeof(err));
		if (rc == 0)
			sites_free(&sf);
		else
			CHECK(rc == -1 && err[0] && !strchr(err, '\n'),
			      "round %d: rc %d '%s'", round, rc, err);
	}
}

static void
test_fuzz(void)
{
	fuzz_file("a.massif.sites");
	fuzz_file("c.massif.sites-v2");
}

int
main(int argc, char **argv)
{
	if (argc != 3 || !mkdtemp(tmpdir))
		return EXIT_HARNESS;
	srcdir = argv[2];
	const char *c = argv[1];
	if (strcmp(c, "valid") == 0)
		test_valid();
	else if (strcmp(c, "unknown") == 0)
		test_unknown();
	else if (strcmp(c, "version2") == 0)
		test_version2();
	else if (strcmp(c, "deep") == 0)
		test_deep();
	else if (strcmp(c, "malformed") == 0)
		test_malformed();
	else if (strcmp(c, "missing") == 0)
		test_missing();
	else if (strcmp(c, "mappings") == 0)
		test_mappings();
	else if (strcmp(c, "fuzz") == 0)
		test_fuzz();
	else
		failures = -1;
	char path[128];
	snprintf(path, sizeof(path), "%s/t.sites", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	if (failures < 0)
		return EXIT_HARNESS;
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
