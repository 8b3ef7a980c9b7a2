/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of output/: the massif.out text against the worked example of
   massif-semantics Appendix B (snapshots built by hand, no engine), inline
   chains, aggregates, the pages-as-heap root, ms_print reading what we
   write, replacing files atomically, and --massif-out-file expansion.
   Usage: test_output CASE SRCDIR; exit 0 pass, 1 fail, 77 skip. */
#include "output/output.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"

static int failures;
static const char *srcdir;

#define CHECK(cond)                                                        \
	do {                                                               \
		if (!(cond)) {                                             \
			fprintf(stderr, "%s:%d: %s: CHECK(%s) failed\n",   \
				__FILE__, __LINE__, __func__, #cond);      \
			failures++;                                        \
		}                                                          \
	} while (0)

#define CHECK_RC(expr, want)                                               \
	do {                                                               \
		int r_ = (expr), w_ = (want);                              \
		if (r_ != w_) {                                            \
			fprintf(stderr, "%s:%d: %s: %s = %d (%s), want "   \
				"%d (%s)\n", __FILE__, __LINE__, __func__, \
				#expr, r_, ht_strerror(r_), w_,            \
				ht_strerror(w_));                          \
			failures++;                                        \
		}                                                          \
	} while (0)

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
}

static char *
file_read(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(99);
	}
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		exit(99);
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		fwrite(chunk, 1, n, m);
	fclose(f);
	fclose(m);
	return buf;
}

static char *
srcfile_read(const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", srcdir, name);
	return file_read(path);
}

/* A symbolizer over a fixed table, standing in for libdw. */
struct fake_frame {
	uint64_t pc;
	const char *lines[4]; /* innermost first, NULL-terminated */
};

static const struct fake_frame fake_frames[] = {
	{ 0x109170, { "g (example.c:3)" } },
	{ 0x10918A, { "f (example.c:4)" } },
	{ 0x1091A7, { "main (example.c:10)" } },
	{ 0x1091C8, { "main (example.c:11)" } },
	{ 0x1091D6, { "main (example.c:12)" } },
	{ 0x109203, { "main (example.c:15)" } },
	{ 0x10906D, { "inner (inl.c:2)", "outer (inl.c:3)", "main (inl.c:6)" } },
	{ 0x109100, { "leaf_inl (x.h:1)", "leaf (x.c:9)" } },
	{ 0x109200, { "deep (x.c:20)" } },
	{ 0x401000, { "??? (in /bin/x)" } },
	{ 0x4020CA3, { "__mmap64 (mmap64.c:58)" } },
};

static const char *
fake_function_name(void *ctx, uint64_t pc)
{
	(void)ctx;
	(void)pc;
	return NULL;
}

static unsigned
fake_describe(void *ctx, uint64_t pc, const char **lines, unsigned max)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(fake_frames) / sizeof(*fake_frames);
	     i++) {
		if (fake_frames[i].pc != pc)
			continue;
		unsigned k = 0;
		while (k < max && k < 4 && fake_frames[i].lines[k]) {
			lines[k] = fake_frames[i].lines[k];
			k++;
		}
		return k;
	}
	lines[0] = "???";
	return 1;
}

static const struct ht_symbolizer fake_sym = {
	.ctx = NULL,
	.function_name = fake_function_name,
	.describe = fake_describe,
};

/* Appendix B.1, built by hand. */
static struct snap_node tree3[] = {
	{ .bytes = 3000, .n_children = 1 },
	{ .pc = 0x1091A7, .bytes = 3000 },
};
static struct snap_node tree7[] = {
	{ .bytes = 11010, .n_children = 3 },
	{ .pc = 0x109170, .bytes = 8000, .n_children = 2 },
	{ .pc = 0x10918A, .bytes = 4000, .n_children = 1 },
	{ .pc = 0x1091C8, .bytes = 4000 },
	{ .pc = 0x1091D6, .bytes = 4000 },
	{ .pc = 0x1091A7, .bytes = 3000 },
	{ .bytes = 10, .places = 1 },
};
static struct snap_node tree11[] = {
	{ .bytes = 2133, .n_children = 3 },
	{ .pc = 0x1091A7, .bytes = 2000 },
	{ .pc = 0x109203, .bytes = 123 },
	{ .bytes = 10, .places = 2 },
};
static struct snap_node tree15[] = {
	{ .bytes = 0, .n_children = 1 },
	{ .bytes = 0, .places = 4 },
};

#define TREE(t) .tree = t, .n_tree = sizeof(t) / sizeof(*t)

static const struct snap_snapshot example_snaps[] = {
	{ SNAP_EMPTY, 0, 0, 0, 0, NULL, 0 },
	{ SNAP_EMPTY, 1016, 1000, 16, 0, NULL, 0 },
	{ SNAP_EMPTY, 2032, 2000, 32, 0, NULL, 0 },
	{ .kind = SNAP_DETAILED, .time = 3048, .heap = 3000, .extra = 48,
	  TREE(tree3) },
	{ SNAP_EMPTY, 7056, 7000, 56, 0, NULL, 0 },
	{ SNAP_EMPTY, 11064, 11000, 64, 0, NULL, 0 },
	{ SNAP_EMPTY, 11088, 11010, 78, 0, NULL, 0 },
	{ .kind = SNAP_PEAK, .time = 11088, .heap = 11010, .extra = 78,
	  TREE(tree7) },
	{ SNAP_EMPTY, 12104, 10010, 62, 0, NULL, 0 },
	{ SNAP_EMPTY, 12240, 10133, 75, 0, NULL, 0 },
	{ SNAP_EMPTY, 16248, 6133, 67, 0, NULL, 0 },
	{ .kind = SNAP_DETAILED, .time = 20256, .heap = 2133, .extra = 59,
	  TREE(tree11) },
	{ SNAP_EMPTY, 20392, 2010, 46, 0, NULL, 0 },
	{ SNAP_EMPTY, 20416, 2000, 32, 0, NULL, 0 },
	{ SNAP_EMPTY, 21432, 1000, 16, 0, NULL, 0 },
	{ .kind = SNAP_DETAILED, .time = 22448, TREE(tree15) },
};

static char *example_desc[] = {
	"--time-unit=B", "--detailed-freq=4",
	"--massif-out-file=massif.out.example",
};
static char *example_cmd[] = { "./example" };

static const struct out_header example_header = {
	.desc_args = example_desc, .n_desc_args = 3,
	.cmd_argv = example_cmd, .cmd_argc = 1,
	.time_unit = HT_TIME_B, .threshold = 1.0,
};

/* Render SNAPS into a malloc'd string; *RC gets the writer's result. */
static char *
render(const struct out_header *h, const struct snap_snapshot *snaps,
       size_t n, int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		exit(99);
	*rc = out_massif_fprint_snapshots(f, h, snaps, n, &fake_sym);
	fclose(f);
	return buf;
}

static void
case_example(void)
{
	int rc;
	char *got = render(&example_header, example_snaps,
			   sizeof(example_snaps) / sizeof(*example_snaps),
			   &rc);
	char *want = srcfile_read("example.massif.exp");

	CHECK_RC(rc, 0);
	text_check("example", got, want);
	free(got);
	free(want);
}

/* An inlined frame whose children include another inlined frame. */
static struct snap_node inline_tree[] = {
	{ .bytes = 1000, .n_children = 2 },
	{ .pc = 0x10906D, .bytes = 900, .n_children = 2 },
	{ .pc = 0x109100, .bytes = 600, .n_children = 1 },
	{ .pc = 0x109200, .bytes = 600 },
	{ .bytes = 300, .places = 2 },
	{ .pc = 0x401000, .bytes = 100 },
};
static const struct snap_snapshot inline_snaps[] = {
	{ .kind = SNAP_PEAK, .time = 5, .heap = 1000, .extra = 24,
	  TREE(inline_tree) },
};
static char *inline_cmd[] = { "./inl", "a b", "c" };
static const struct out_header inline_header = {
	.cmd_argv = inline_cmd, .cmd_argc = 3,
	.time_unit = HT_TIME_I, .threshold = 2.5,
};
static const char inline_want[] =
	"desc: (none)\n"
	"cmd: ./inl a b c\n"
	"time_unit: i\n"
	"#-----------\n"
	"snapshot=0\n"
	"#-----------\n"
	"time=5\n"
	"mem_heap_B=1000\n"
	"mem_heap_extra_B=24\n"
	"mem_stacks_B=0\n"
	"heap_tree=peak\n"
	"n2: 1000 (heap allocation functions) malloc/new/new[], --alloc-fns, "
	"etc.\n"
	" n1: 900 0x10906D: inner (inl.c:2)\n"
	"  n1: 900 0x10906D: outer (inl.c:3)\n"
	"   n2: 900 0x10906D: main (inl.c:6)\n"
	"    n1: 600 0x109100: leaf_inl (x.h:1)\n"
	"     n1: 600 0x109100: leaf (x.c:9)\n"
	"      n0: 600 0x109200: deep (x.c:20)\n"
	"    n0: 300 in 2 places, all below massif's threshold (2.50%)\n"
	" n0: 100 0x401000: ??? (in /bin/x)\n";

static void
case_inline(void)
{
	int rc;
	char *got = render(&inline_header, inline_snaps, 1, &rc);

	CHECK_RC(rc, 0);
	text_check("inline", got, inline_want);
	free(got);
}

/* Singular and plural aggregates, and the threshold's two decimals. */
static void
case_aggregate(void)
{
	static struct snap_node one[] = {
		{ .bytes = 7, .n_children = 1 },
		{ .bytes = 7, .places = 1 },
	};
	static struct snap_node many[] = {
		{ .bytes = 12345, .n_children = 1 },
		{ .bytes = 12345, .places = 60 },
	};
	static const struct {
		struct snap_node *tree;
		double threshold;
		const char *line;
	} cases[] = {
		{ one, 1.0, " n0: 7 in 1 place, below massif's threshold "
			    "(1.00%)\n" },
		{ one, 2.5, " n0: 7 in 1 place, below massif's threshold "
			    "(2.50%)\n" },
		{ many, 0.125, " n0: 12345 in 60 places, all below massif's "
			       "threshold (0.12%)\n" },
		{ many, 100.0, " n0: 12345 in 60 places, all below massif's "
			       "threshold (100.00%)\n" },
		{ many, 33.333, " n0: 12345 in 60 places, all below massif's "
				"threshold (33.33%)\n" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		struct out_header h = inline_header;
		struct snap_snapshot s = {
			.kind = SNAP_DETAILED, .heap = cases[i].tree[0].bytes,
			.tree = cases[i].tree, .n_tree = 2,
		};
		int rc;

		h.threshold = cases[i].threshold;
		char *got = render(&h, &s, 1, &rc);
		CHECK_RC(rc, 0);
		const char *last = got + strlen(got) - 1;
		while (last > got && last[-1] != '\n')
			last--;
		text_check("aggregate", last, cases[i].line);
		free(got);
	}
}

static struct snap_node pages_tree[] = {
	{ .bytes = 266240, .n_children = 2 },
	{ .pc = 0, .bytes = 258048 },
	{ .pc = 0x4020CA3, .bytes = 8192 },
};
static const struct snap_snapshot pages_snaps[] = {
	{ .kind = SNAP_EMPTY, .time = 4096, .heap = 4096 },
	{ .kind = SNAP_DETAILED, .time = 266240, .heap = 266240,
	  TREE(pages_tree) },
};
static char *pages_desc[] = { "--pages-as-heap=yes", "--time-unit=B" };
static char *pages_cmd[] = { "./pg" };
static const struct out_header pages_header = {
	.desc_args = pages_desc, .n_desc_args = 2,
	.cmd_argv = pages_cmd, .cmd_argc = 1,
	.time_unit = HT_TIME_B, .pages_as_heap = true, .threshold = 1.0,
};
static const char pages_want[] =
	"desc: --pages-as-heap=yes --time-unit=B\n"
	"cmd: ./pg\n"
	"time_unit: B\n"
	"#-----------\n"
	"snapshot=0\n"
	"#-----------\n"
	"time=4096\n"
	"mem_heap_B=4096\n"
	"mem_heap_extra_B=0\n"
	"mem_stacks_B=0\n"
	"heap_tree=empty\n"
	"#-----------\n"
	"snapshot=1\n"
	"#-----------\n"
	"time=266240\n"
	"mem_heap_B=266240\n"
	"mem_heap_extra_B=0\n"
	"mem_stacks_B=0\n"
	"heap_tree=detailed\n"
	"n2: 266240 (page allocation syscalls) mmap/mremap/brk, --alloc-fns, "
	"etc.\n"
	" n0: 258048 0x0: ???\n"
	" n0: 8192 0x4020CA3: __mmap64 (mmap64.c:58)\n";

static void
case_pages(void)
{
	int rc;
	char *got = render(&pages_header, pages_snaps, 2, &rc);

	CHECK_RC(rc, 0);
	text_check("pages", got, pages_want);
	free(got);
}

/* desc: (none), cmd: arguments verbatim, the three time units, stacks,
   a root without children, no snapshots at all. */
static void
case_header(void)
{
	static char *cmd[] = { "/bin/true", "x  y", "" };
	static struct snap_node bare[] = { { .bytes = 0 } };
	struct snap_snapshot s = {
		.kind = SNAP_DETAILED, .time = 18446744073709551615ULL,
		.stacks = 2000, TREE(bare),
	};
	struct out_header h = {
		.cmd_argv = cmd, .cmd_argc = 3, .time_unit = HT_TIME_MS,
		.threshold = 1.0,
	};
	int rc;

	char *got = render(&h, NULL, 0, &rc);
	CHECK_RC(rc, 0);
	text_check("header", got,
		   "desc: (none)\ncmd: /bin/true x  y \ntime_unit: ms\n");
	free(got);

	got = render(&h, &s, 1, &rc);
	CHECK_RC(rc, 0);
	text_check("header", got,
		   "desc: (none)\ncmd: /bin/true x  y \ntime_unit: ms\n"
		   "#-----------\nsnapshot=0\n#-----------\n"
		   "time=18446744073709551615\nmem_heap_B=0\n"
		   "mem_heap_extra_B=0\nmem_stacks_B=2000\n"
		   "heap_tree=detailed\n"
		   "n0: 0 (heap allocation functions) malloc/new/new[], "
		   "--alloc-fns, etc.\n");
	free(got);
}

/* Trees that are not well-formed preorder arrays are refused. */
static void
case_malformed(void)
{
	static struct snap_node short_tree[] = {
		{ .bytes = 10, .n_children = 2 },
		{ .pc = 0x109170, .bytes = 10 },
	};
	static struct snap_node long_tree[] = {
		{ .bytes = 10, .n_children = 1 },
		{ .pc = 0x109170, .bytes = 10 },
		{ .pc = 0x109170, .bytes = 10 },
	};
	static struct snap_node agg_children[] = {
		{ .bytes = 10, .n_children = 1 },
		{ .bytes = 10, .places = 2, .n_children = 1 },
		{ .pc = 0x109170, .bytes = 10 },
	};
	static struct snap_node agg_root[] = {
		{ .bytes = 10, .places = 1 },
	};
	const struct snap_snapshot bad[] = {
		{ .kind = SNAP_DETAILED },
		{ .kind = SNAP_PEAK, TREE(short_tree) },
		{ .kind = SNAP_DETAILED, TREE(long_tree) },
		{ .kind = SNAP_DETAILED, TREE(agg_children) },
		{ .kind = SNAP_DETAILED, TREE(agg_root) },
		{ .kind = (enum snap_kind)77 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		int rc;
		free(render(&inline_header, &bad[i], 1, &rc));
		CHECK_RC(rc, -HT_E_FORMAT);
	}
}

/* ms_print reads what we write: the example renders exactly as
   Appendix B.2, the other files at least parse. */
static void
case_ms_print(void)
{
	char dir[] = "/tmp/ht-msprint-XXXXXX";
	char cmd[512];
	static const struct {
		const char *name;
		const struct out_header *h;
		const struct snap_snapshot *snaps;
		size_t n;
	} files[] = {
		{ "massif.out.example", &example_header, example_snaps,
		  sizeof(example_snaps) / sizeof(*example_snaps) },
		{ "massif.out.inline", &inline_header, inline_snaps, 1 },
		{ "massif.out.pages", &pages_header, pages_snaps, 2 },
	};

	if (system("command -v ms_print >/dev/null 2>&1")) {
		printf("ms_print not found: skipped\n");
		exit(77);
	}
	if (!mkdtemp(dir))
		exit(99);
	for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i].name);
		FILE *f = fopen(path, "w");
		if (!f)
			exit(99);
		CHECK_RC(out_massif_fprint_snapshots(f, files[i].h,
						     files[i].snaps,
						     files[i].n, &fake_sym),
			 0);
		fclose(f);
		snprintf(cmd, sizeof(cmd),
			 "cd %s && ms_print %s >%s.ms 2>%s.err", dir,
			 files[i].name, files[i].name, files[i].name);
		int st = system(cmd);
		if (st) {
			fprintf(stderr, "ms_print %s: status %d\n",
				files[i].name, st);
			failures++;
		}
	}

	char path[256];
	snprintf(path, sizeof(path), "%s/massif.out.example.ms", dir);
	char *got = file_read(path);
	char *want = srcfile_read("example.ms_print.exp");
	text_check("ms_print example", got, want);
	free(got);
	free(want);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
}

/* Write errors surface as -errno. */
static void
case_write_error(void)
{
	FILE *f = fopen("/dev/full", "w");

	if (!f) {
		printf("/dev/full missing: skipped\n");
		exit(77);
	}
	CHECK_RC(out_massif_fprint_snapshots(f, &example_header, example_snaps,
					     16, &fake_sym), -ENOSPC);
	fclose(f);
}

/* out_file_write's fill callbacks. */
static int
fill_text(FILE *f, void *arg)
{
	return fputs(arg, f) < 0 ? -EIO : 0;
}

static int
fill_fail(FILE *f, void *arg)
{
	(void)arg;
	fputs("partial", f);
	return -EIO;
}

static int
fill_example(FILE *f, void *arg)
{
	(void)arg;
	return out_massif_fprint_snapshots(f, &example_header, example_snaps,
					   16, &fake_sym);
}

static char *
path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);

	if (!p)
		exit(99);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int
entries_count(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return -1;
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void
file_put(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) || chmod(path, mode))
		exit(99);
}

static void
content_check(const char *path, const char *want)
{
	char *got = file_read(path);

	text_check(path, got, want);
	free(got);
}

/* Regular files are replaced by rename: new inode, all or nothing. */
static void
case_atomic(void)
{
	char dir[] = "/tmp/ht-atomic-XXXXXX";
	struct stat st, st2;

	if (!mkdtemp(dir))
		exit(99);
	char *fresh = path_join(dir, "fresh");
	char *old = path_join(dir, "old");
	char *link = path_join(dir, "link");

	/* A new file: 0644 less the umask, like any created file. */
	mode_t saved = umask(022);
	CHECK_RC(out_file_write(fresh, fill_example, NULL), 0);
	CHECK(stat(fresh, &st) == 0 && (st.st_mode & 07777) == 0644);
	char *want = srcfile_read("example.massif.exp");
	content_check(fresh, want);
	free(want);
	unlink(fresh);
	umask(077);
	CHECK_RC(out_file_write(fresh, fill_text, "x\n"), 0);
	CHECK(stat(fresh, &st) == 0 && (st.st_mode & 07777) == 0600);
	umask(saved);

	/* An existing file: replaced (new inode), permission bits kept. */
	file_put(old, "old\n", 0640);
	CHECK(stat(old, &st) == 0);
	CHECK_RC(out_file_write(old, fill_text, "new\n"), 0);
	CHECK(stat(old, &st2) == 0);
	CHECK(st.st_ino != st2.st_ino);
	CHECK((st2.st_mode & 07777) == 0640);
	content_check(old, "new\n");

	/* A failing writer leaves the old contents and no temporary file. */
	CHECK_RC(out_file_write(old, fill_fail, NULL), -EIO);
	content_check(old, "new\n");
	char *gone = path_join(dir, "gone");
	CHECK_RC(out_file_write(gone, fill_fail, NULL), -EIO);
	CHECK(access(gone, F_OK) != 0);
	CHECK(entries_count(dir) == 2);

	/* Through a symlink: the target is replaced, the link stays. */
	CHECK(symlink("old", link) == 0);
	CHECK_RC(out_file_write(link, fill_text, "via link\n"), 0);
	CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
	content_check(old, "via link\n");
	CHECK(entries_count(dir) == 3);

	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	free(fresh);
	free(old);
	free(link);
	free(gone);
}

/* Devices are written, never replaced. */
static void
case_dev_null(void)
{
	struct stat st;

	CHECK_RC(out_file_write("/dev/null", fill_example, NULL), 0);
	CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
	CHECK_RC(out_file_write("/dev/full", fill_example, NULL), -ENOSPC);
	CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
}

/* A FIFO is written into: a reader gets the whole profile. */
static void
case_fifo(void)
{
	char dir[] = "/tmp/ht-fifo-XXXXXX";
	struct stat st;

	if (!mkdtemp(dir))
		exit(99);
	char *fifo = path_join(dir, "fifo");
	if (mkfifo(fifo, 0600))
		exit(99);
	alarm(20);
	pid_t pid = fork();
	if (pid < 0)
		exit(99);
	if (pid == 0) {
		char *got = file_read(fifo);
		char *want = srcfile_read("example.massif.exp");
		_exit(strcmp(got, want) ? 1 : 0);
	}
	CHECK_RC(out_file_write(fifo, fill_example, NULL), 0);
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode));
	CHECK(entries_count(dir) == 1);
	unlink(fifo);
	rmdir(dir);
	free(fifo);
}

/* Paths that cannot be written give -errno and leave nothing behind. */
static void
case_errors(void)
{
	char dir[] = "/tmp/ht-errors-XXXXXX";

	if (!mkdtemp(dir))
		exit(99);
	char *reg = path_join(dir, "reg");
	char *missing = path_join(dir, "no/such/file");
	char *under = path_join(dir, "reg/x");
	file_put(reg, "keep\n", 0666);

	CHECK_RC(out_file_write(missing, fill_text, "x"), -ENOENT);
	CHECK_RC(out_file_write(under, fill_text, "x"), -ENOTDIR);
	CHECK_RC(out_file_write(dir, fill_text, "x"), -EISDIR);
	CHECK(entries_count(dir) == 1);

	/* A directory we may not write to. Root may write anywhere, so the
	   check runs as nobody when we are root. */
	if (chmod(dir, 0755))
		exit(99);
	pid_t pid = fork();
	if (pid < 0)
		exit(99);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) || setuid(65534)))
			_exit(77);
		char *fresh = path_join(dir, "fresh");
		struct stat a, b;
		int bad = 0;
		if (out_file_write(fresh, fill_text, "x") != -EACCES)
			bad |= 1;
		/* The file is writable though: rewritten in place. */
		stat(reg, &a);
		if (out_file_write(reg, fill_text, "in place\n"))
			bad |= 2;
		stat(reg, &b);
		if (a.st_ino != b.st_ino)
			bad |= 4;
		_exit(bad);
	}
	int status;
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
	if (WEXITSTATUS(status) == 77) {
		printf("cannot drop privileges: unwritable directory not "
		       "checked\n");
	} else {
		if (WEXITSTATUS(status))
			fprintf(stderr, "unwritable directory: failures %#x\n",
				WEXITSTATUS(status));
		CHECK(WEXITSTATUS(status) == 0);
		content_check(reg, "in place\n");
	}
	CHECK(entries_count(dir) == 1);

	unlink(reg);
	rmdir(dir);
	free(reg);
	free(missing);
	free(under);
}

static void
expand_ok(const char *pattern, long pid, const char *cwd, const char *want)
{
	char err[256] = "";
	char *out = NULL;

	int rc = out_filename_expand(pattern, pid, cwd, &out, err,
				     sizeof(err));
	if (rc) {
		fprintf(stderr, "expand '%s': %d %s\n", pattern, rc, err);
		failures++;
		return;
	}
	text_check(pattern, out, want);
	free(out);
}

static void
expand_bad(const char *pattern, const char *want)
{
	char err[256] = "";
	char *out = NULL;

	CHECK_RC(out_filename_expand(pattern, 1, "/d", &out, err, sizeof(err)),
		 -HT_E_BADOPT);
	CHECK(!out);
	CHECK(!strchr(err, '\n'));
	text_check(pattern, err, want);
}

static void
case_expand(void)
{
	setenv("HT_TEST_DIR", "/var/tmp", 1);
	setenv("HT_TEST_EMPTY", "", 1);
	unsetenv("HT_TEST_UNSET");

	expand_ok("massif.out.%p", 4242, "/home/u", "/home/u/massif.out.4242");
	expand_ok("massif.out.%p", 4242, "/", "/massif.out.4242");
	expand_ok("massif.out.%p", 4242, "/home/u/", "/home/u/massif.out.4242");
	expand_ok("massif.out.%p", 4242, NULL, "massif.out.4242");
	expand_ok("/abs/%p.%n", 7, "/home/u", "/abs/7.1");
	expand_ok("a%%b%%%p", 7, "/c", "/c/a%b%7");
	expand_ok("sub/x", 7, "/c", "/c/sub/x");
	expand_ok("%q{HT_TEST_DIR}/m.%p", 9, "/c", "/var/tmp/m.9");
	expand_ok("m%q{HT_TEST_EMPTY}.%p", 9, "/c", "/c/m.9");
	expand_ok("%p%p", 12, "/c", "/c/1212");

	expand_bad("m.%q{HT_TEST_UNSET}", "--massif-out-file: environment "
		   "variable HT_TEST_UNSET (in %q{HT_TEST_UNSET}) is not set");
	const char *malformed = "--massif-out-file: %q must be followed by "
				"{VARIABLE}";
	expand_bad("m.%q", malformed);
	expand_bad("m.%qHOME", malformed);
	expand_bad("m.%q{HOME", malformed);
	expand_bad("m.%q{}", malformed);
	expand_bad("m.%x", "--massif-out-file: unknown %x in 'm.%x' (use %p, "
		   "%n, %q{VAR} or %%)");
	expand_bad("m.%", "--massif-out-file: 'm.%' ends with a lone %");
	expand_bad("~/m.%p", "--massif-out-file: '~' is not expanded in "
		   "'~/m.%p' (%q{HOME} is)");
	expand_bad("", "--massif-out-file: the file name is empty");
	expand_bad("%q{HT_TEST_EMPTY}", "--massif-out-file: "
		   "'%q{HT_TEST_EMPTY}' expands to an empty name");
}

static const struct {
	const char *name;
	void (*fn)(void);
} cases[] = {
	{ "example", case_example },
	{ "inline", case_inline },
	{ "aggregate", case_aggregate },
	{ "pages", case_pages },
	{ "header", case_header },
	{ "malformed", case_malformed },
	{ "ms_print", case_ms_print },
	{ "write-error", case_write_error },
	{ "atomic", case_atomic },
	{ "dev-null", case_dev_null },
	{ "fifo", case_fifo },
	{ "errors", case_errors },
	{ "expand", case_expand },
};

int
main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: test_output CASE SRCDIR\n");
		return 99;
	}
	srcdir = argv[2];
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		if (strcmp(argv[1], cases[i].name))
			continue;
		cases[i].fn();
		if (failures)
			fprintf(stderr, "%d check(s) failed\n", failures);
		return failures ? 1 : 0;
	}
	fprintf(stderr, "unknown case '%s'\n", argv[1]);
	return 99;
}
