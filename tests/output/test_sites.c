/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The .sites writer (output/sites.c, docs/sites-format.md): the whole
   text, byte for byte, of an engine fed by hand whose frames a stub
   symbolizer describes as Massif would ("fn (file:line)", "fn (in /obj)",
   "???", C++ names with parentheses of their own, an inline chain), with
   and without a leak check; out_sites_path; write errors.
   Usage: test_sites CASE; exit 0 pass, 1 fail, 77 skip, 99 harness. */
#include "output/sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/options.h"
#include "snapshot/extra.h"

#include "tests/check.h"

/* Compare two texts, showing the first line that differs. */
static void
text_check(const char *what, const char *got, const char *want)
{
	if (!strcmp(got, want))
		return;
	failures++;
	int line = 1;
	const char *g = got, *w = want;
	while (*g && *g == *w) {
		if (*g == '\n')
			line++;
		g++;
		w++;
	}
	while (g > got && g[-1] != '\n') {
		g--;
		w--;
	}
	fprintf(stderr, "%s: differs at line %d\n  got:  %.*s\n  want: %.*s\n",
		what, line, (int)strcspn(g, "\n"), g, (int)strcspn(w, "\n"),
		w);
	fprintf(stderr, "--- got in full:\n%s--- want in full:\n%s---\n", got,
		want);
}

/* The stub program's code addresses, their symbols and descriptions. */
enum {
	P_NEW = 0x484A2F3,
	P_PUSH = 0x109ABC,
	P_INL = 0x109D0E,
	P_MAIN = 0x1091A2,
	P_UNK = 0x7F00DEAD,
	P_BINX = 0x401F0,
	P_START = 0x29D8F,
};

struct stub_frame {
	uint64_t pc;
	const char *name;     /* function_name(); NULL: no symbol */
	const char *lines[3]; /* describe(), innermost first */
};

static const struct stub_frame stub_frames[] = {
	{ P_NEW, "operator new(unsigned long)",
	  { "operator new(unsigned long) (in /usr/lib/libstdc++.so.6)" } },
	{ P_PUSH, "std::vector<int, std::allocator<int> >::push_back(int const&)",
	  { "std::vector<int, std::allocator<int> >::push_back(int const&) "
	    "(stl_vector.h:1198)" } },
	{ P_INL, "caller", { "inl_get (t.h:2)", "caller (t.c:4)" } },
	{ P_MAIN, "main", { "main (t.c:6)" } },
	{ P_UNK, NULL, { "???" } },
	{ P_BINX, NULL, { "??? (in /bin/x)" } },
	{ P_START, "__libc_start_call_main",
	  { "__libc_start_call_main (libc_start_call_main.h:58)" } },
};

static const struct stub_frame *
stub_find(uint64_t pc)
{
	for (size_t i = 0; i < sizeof(stub_frames) / sizeof(*stub_frames); i++)
		if (stub_frames[i].pc == pc)
			return &stub_frames[i];
	return NULL;
}

static const char *
stub_function_name(void *ctx, uint64_t pc)
{
	(void)ctx;
	const struct stub_frame *f = stub_find(pc);
	return f ? f->name : NULL;
}

static unsigned
stub_describe(void *ctx, uint64_t pc, const char **lines, unsigned max)
{
	(void)ctx;
	const struct stub_frame *f = stub_find(pc);
	if (!f) {
		lines[0] = "???";
		return 1;
	}
	unsigned k = 0;
	while (k < max && k < 3 && f->lines[k]) {
		lines[k] = f->lines[k];
		k++;
	}
	return k;
}

static const struct ht_symbolizer stub_sym = {
	.ctx = NULL,
	.function_name = stub_function_name,
	.describe = stub_describe,
};

struct stack {
	unsigned n;
	uint64_t pcs[8];
};

static const struct stack S1 = { 5, { P_NEW, P_PUSH, P_INL, P_MAIN,
				      P_START } };
static const struct stack S2 = { 4, { P_NEW, P_UNK, P_MAIN, P_START } };
static const struct stack S3 = { 2, { P_NEW, P_BINX } };

static struct ht_options opt;

static struct snap_engine *
engine_new(void)
{
	char err[256];
	ht_options_init(&opt);
	const char *o[] = { "--time-unit=B", "--heap-admin=0", NULL };
	for (const char **p = o; *p; p++)
		if (ht_options_apply(&opt, *p, err, sizeof(err))) {
			fprintf(stderr, "%s: %s\n", *p, err);
			exit(EXIT_HARNESS);
		}
	if (ht_options_finish(&opt, err, sizeof(err))) {
		fprintf(stderr, "options: %s\n", err);
		exit(EXIT_HARNESS);
	}
	struct snap_engine *eng = snap_engine_new(
		&opt, &stub_sym, snap_extra_new(SNAP_EXTRA_ESTIMATE, &opt));
	snap_engine_start(eng, 0);
	return eng;
}

static void
engine_free(struct snap_engine *eng)
{
	snap_engine_free(eng);
	ht_options_fini(&opt);
}

static void
feed(struct snap_engine *eng, enum ht_event_kind kind, uint64_t addr,
     uint64_t size, const struct stack *st)
{
	struct ht_event e = {
		.kind = kind,
		.fn = kind == HT_EV_ALLOC ? HT_FN_NEW : HT_FN_DELETE,
		.addr = addr, .size = size, .tid = 1,
		.pcs = st ? st->pcs : NULL, .npcs = st ? st->n : 0,
	};
	snap_engine_feed(eng, &e);
}

/* Worked out by hand (--time-unit=B, no extra bytes; a snapshot after
   each event: 0 the start, 1-3 the allocations, 4 the first peak):
     a = new 64 (S1), b = new 32 (S1), c = new 16 (S2)       112 B
     delete c: temporary of S2; peak at 112 B (snapshot 4), 5 after
     d = new 48 (S3)                                         144 B, snap 6
     delete b: peak at 144 B, time 176 (112 + 16 + 48): snapshot 7;
               8 after it
   S1: 2 calls, 96 B, 96 at the peak, 64 B (1 block) left;
   S2: 1 call, 16 B, 0 at the peak, 1 temporary; S3: 48 B in all. */
static struct snap_engine *
engine_fed(void)
{
	struct snap_engine *eng = engine_new();
	feed(eng, HT_EV_ALLOC, 0x100000, 64, &S1);
	feed(eng, HT_EV_ALLOC, 0x200000, 32, &S1);
	feed(eng, HT_EV_ALLOC, 0x300000, 16, &S2);
	feed(eng, HT_EV_FREE, 0x300000, 0, &S2);
	feed(eng, HT_EV_ALLOC, 0x400000, 48, &S3);
	feed(eng, HT_EV_FREE, 0x200000, 0, &S1);
	long pi = snap_engine_peak_index(eng);
	const struct snap_snapshot *s =
		pi >= 0 ? snap_engine_snapshot(eng, (size_t)pi) : NULL;
	if (pi != 7 || !s || s->time != 176 || s->heap != 144) {
		fprintf(stderr, "the engine's peak is not the one worked out "
			"(%ld)\n", pi);
		exit(EXIT_HARNESS);
	}
	return eng;
}

static char *const cmd_argv[] = { "./prog", "arg1", "arg two" };

static const struct out_header header = {
	.cmd_argv = cmd_argv,
	.cmd_argc = 3,
	.time_unit = HT_TIME_B,
	.threshold = 1.0,
};

/* out_sites_fprint's text, and its return code into *RC. */
static char *
print(const struct snap_engine *eng, const struct out_header *h,
      const struct out_sites_leak *leak, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		exit(EXIT_HARNESS);
	*rc = out_sites_fprint(m, 1234, h, eng, &stub_sym, leak);
	fclose(m);
	return buf;
}

/* The frames of S1, numbered outermost first as they are first met
   (version 2 numbers each frame and each stack once), and its stacks. */
#define FRAMES_S1 "frame: 1 0x29D8F __libc_start_call_main\t" \
		  "libc_start_call_main.h:58\n" \
		  "frame: 2 0x1091A2 main\tt.c:6\n" \
		  "frame: 3 0x109D0E inl_get\tt.h:2\n" \
		  "frame: 3 0x109D0E caller\tt.c:4\n" \
		  "frame: 4 0x109ABC std::vector<int, std::allocator<int> >::" \
		  "push_back(int const&)\tstl_vector.h:1198\n" \
		  "frame: 5 0x484A2F3 operator new(unsigned long)\t" \
		  "(in /usr/lib/libstdc++.so.6)\n" \
		  "stack: 1 0 1 2 3 4 5\n"
/* S2 shares S1's two outer stacks (main from __libc_start_call_main)
   and its innermost frame; S3 only the innermost frame. */
#define FRAMES_S2 "frame: 6 0x7F00DEAD ???\t\n" \
		  "stack: 6 2 6 5\n"
#define FRAMES_S3 "frame: 7 0x401F0 ???\t(in /bin/x)\n" \
		  "stack: 8 0 7 5\n"

static const char want_plain[] =
	"heaptrace-sites: 2\n"
	"pid: 1234\n"
	"cmd: ./prog arg1 arg two\n"
	"time_unit: B\n"
	"peak: snapshot=7 time=176 heap=144\n"
	"totals: sites=3 calls=4 allocated=160 temporary=1 leaked=112 "
	"leaked_blocks=2\n"
	FRAMES_S1
	"site: 1 stack=5 calls=2 allocated=96 peak=96 peak_blocks=2 leaked=64 "
	"leaked_blocks=1\n"
	FRAMES_S2
	"site: 2 stack=7 calls=1 allocated=16 temporary=1\n"
	FRAMES_S3
	"site: 3 stack=9 calls=1 allocated=48 peak=48 peak_blocks=1 leaked=48 "
	"leaked_blocks=1\n";

static void
case_plain(void)
{
	struct snap_engine *eng = engine_fed();
	int rc;
	char *got = print(eng, &header, NULL, &rc);
	CHECK(rc == 0, "out_sites_fprint: %d", rc);
	text_check("plain", got, want_plain);
	free(got);

	/* the header says the header's time unit and command */
	static char *const one_argv[] = { "/bin/prog" };
	struct out_header h = header;
	h.time_unit = HT_TIME_MS;
	h.cmd_argv = one_argv;
	h.cmd_argc = 1;
	got = print(eng, &h, NULL, &rc);
	CHECK(rc == 0 && !strncmp(got, "heaptrace-sites: 2\npid: 1234\n"
				  "cmd: /bin/prog\ntime_unit: ms\npeak: ",
				  strlen("heaptrace-sites: 2\npid: 1234\n"
					 "cmd: /bin/prog\ntime_unit: ms\n"
					 "peak: ")),
	      "ms header: %.120s", got);
	h.time_unit = HT_TIME_I;
	free(got);
	got = print(eng, &h, NULL, &rc);
	CHECK(rc == 0 && strstr(got, "\ntime_unit: i\n"), "i header: %.120s",
	      got);
	free(got);
	engine_free(eng);
}

/* An engine that saw nothing: no peak, no site. */
static void
case_empty(void)
{
	struct snap_engine *eng = engine_new();
	int rc;
	char *got = print(eng, &header, NULL, &rc);
	CHECK(rc == 0, "out_sites_fprint: %d", rc);
	text_check("empty", got,
		   "heaptrace-sites: 2\n"
		   "pid: 1234\n"
		   "cmd: ./prog arg1 arg two\n"
		   "time_unit: B\n"
		   "peak: snapshot=-1 time=0 heap=0\n"
		   "totals: sites=0 calls=0 allocated=0 temporary=0 "
		   "leaked=0 leaked_blocks=0\n");
	free(got);
	engine_free(eng);
}

/* The leak check's verdicts by site id: S1's block definitely lost, S3's
   possibly; S2 has none (no field on its line). */
struct leak_ctx {
	uint32_t s1, s3;
	unsigned calls;
};

static bool
site_bytes(void *ctx, uint32_t site, uint64_t bytes[OUT_SITES_KINDS])
{
	struct leak_ctx *c = ctx;
	c->calls++;
	if (site == c->s1) {
		bytes[0] = 64;
		return true;
	}
	if (site == c->s3) {
		bytes[2] = 40;
		bytes[3] = 8;
		return true;
	}
	return false;
}

static bool
site_is(const struct snap_engine *eng, uint32_t site, const struct stack *st)
{
	uint64_t f[16];
	unsigned n = snap_engine_site_frames(eng, site, f, 16);
	return n == st->n && !memcmp(f, st->pcs, n * sizeof(*f));
}

static void
case_leak(void)
{
	struct snap_engine *eng = engine_fed();
	struct leak_ctx c = { 0, 0, 0 };
	struct snap_site *v;
	size_t n = snap_engine_sites(eng, &v);
	for (size_t i = 0; i < n; i++) {
		if (site_is(eng, v[i].site, &S1))
			c.s1 = v[i].site;
		if (site_is(eng, v[i].site, &S3))
			c.s3 = v[i].site;
	}
	free(v);
	if (!c.s1 || !c.s3) {
		fprintf(stderr, "sites of S1 and S3 not found\n");
		exit(EXIT_HARNESS);
	}
	struct out_sites_leak leak = {
		.mode = "summary",
		.bytes = { 64, 0, 40, 8 },
		.blocks = { 1, 0, 1, 1 },
		.site_bytes = site_bytes,
		.ctx = &c,
	};
	int rc;
	char *got = print(eng, &header, &leak, &rc);
	CHECK(rc == 0, "out_sites_fprint: %d", rc);
	CHECK(c.calls == 3, "site_bytes called %u times", c.calls);
	text_check("leak", got,
		   "heaptrace-sites: 2\n"
		   "pid: 1234\n"
		   "cmd: ./prog arg1 arg two\n"
		   "time_unit: B\n"
		   "peak: snapshot=7 time=176 heap=144\n"
		   "totals: sites=3 calls=4 allocated=160 temporary=1 "
		   "leaked=112 leaked_blocks=2\n"
		   "leak_check: summary definite=64/1 indirect=0/0 "
		   "possible=40/1 reachable=8/1\n"
		   FRAMES_S1
		   "site: 1 stack=5 calls=2 allocated=96 peak=96 peak_blocks=2 "
		   "leaked=64 leaked_blocks=1 definite=64 indirect=0 "
		   "possible=0 reachable=0\n"
		   FRAMES_S2
		   "site: 2 stack=7 calls=1 allocated=16 temporary=1\n"
		   FRAMES_S3
		   "site: 3 stack=9 calls=1 allocated=48 peak=48 peak_blocks=1 "
		   "leaked=48 leaked_blocks=1 definite=0 indirect=0 "
		   "possible=40 reachable=8\n");
	free(got);

	leak.mode = "full";
	got = print(eng, &header, &leak, &rc);
	CHECK(rc == 0 && strstr(got, "\nleak_check: full definite=64/1 "
				"indirect=0/0 possible=40/1 reachable=8/1\n"
				"frame: 1 "),
	      "full: %s", got);
	free(got);
	engine_free(eng);
}

static void
case_path(void)
{
	static const char *const in[][2] = {
		{ "massif.out.1234", "massif.out.1234.sites" },
		{ "/tmp/d/m.7", "/tmp/d/m.7.sites" },
		{ "a b/c%d", "a b/c%d.sites" },
		{ "x.sites", "x.sites.sites" },
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(*in); i++) {
		char *p = out_sites_path(in[i][0]);
		CHECK(!strcmp(p, in[i][1]), "out_sites_path(%s) = %s, want %s",
		      in[i][0], p, in[i][1]);
		free(p);
	}
}

/* A write that fails is -ENOSPC, whether it fails in a write or in the
   final flush; out_sites_write into a file writes the same text. */
static void
case_write(void)
{
	struct snap_engine *eng = engine_fed();
	for (int unbuffered = 0; unbuffered < 2; unbuffered++) {
		FILE *f = fopen("/dev/full", "w");
		if (!f) {
			printf("/dev/full missing: skipped\n");
			exit(EXIT_SKIP);
		}
		if (unbuffered)
			setvbuf(f, NULL, _IONBF, 0);
		int rc = out_sites_fprint(f, 1234, &header, eng, &stub_sym,
					  NULL);
		CHECK(rc == -ENOSPC, "/dev/full%s: %d (%s)",
		      unbuffered ? ", unbuffered" : "", rc, ht_strerror(rc));
		fclose(f);
	}
	int rc = out_sites_write("/dev/full", 1234, &header, eng, &stub_sym,
				 NULL);
	CHECK(rc == -ENOSPC, "out_sites_write(/dev/full): %d", rc);

	char dir[] = "/tmp/test_sites.XXXXXX";
	if (!mkdtemp(dir))
		exit(EXIT_HARNESS);
	char path[64];
	snprintf(path, sizeof(path), "%s/m.1234.sites", dir);
	rc = out_sites_write(path, 1234, &header, eng, &stub_sym, NULL);
	CHECK(rc == 0, "out_sites_write(%s): %d", path, rc);
	FILE *f = fopen(path, "r");
	char buf[8192];
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
	text_check("out_sites_write", buf, want_plain);
	unlink(path);
	rmdir(dir);
	engine_free(eng);
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "plain", case_plain },
	{ "empty", case_empty },
	{ "leak", case_leak },
	{ "path", case_path },
	{ "write", case_write },
};

int
main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_sites CASE\n");
		return EXIT_HARNESS;
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		if (strcmp(argv[1], cases[i].name))
			continue;
		cases[i].fn();
		if (failures)
			fprintf(stderr, "%d check(s) failed\n", failures);
		return failures ? 1 : 0;
	}
	fprintf(stderr, "unknown case '%s'\n", argv[1]);
	return EXIT_HARNESS;
}
