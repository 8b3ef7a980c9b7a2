/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The massif.out reader (output/massif_read.h): the fields of a real
   Massif file, what it tolerates as ms_print does, and what it refuses,
   with the file and line named.
   usage: test_read CASE CASES-DIR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output/massif_read.h"
#include "tests/check.h"

static char tmp_path[64];

/* The N bytes of TEXT as a new file; its path. */
static const char *
file_of_n(const char *text, size_t n)
{
	strcpy(tmp_path, "/tmp/ht-test-read-XXXXXX");
	int fd = mkstemp(tmp_path);
	if (fd < 0) {
		perror("mkstemp");
		exit(EXIT_HARNESS);
	}
	if (write(fd, text, n) != (ssize_t)n) {
		perror("write");
		exit(EXIT_HARNESS);
	}
	close(fd);
	return tmp_path;
}

static const char *
file_of(const char *text)
{
	return file_of_n(text, strlen(text));
}

/* Massif's example (examples/example.c) run by real Massif 3.19. */
static void
case_example(const char *dir)
{
	char path[4096], err[512];
	struct mf_file f;

	snprintf(path, sizeof(path), "%s/cases/example.out", dir);
	CHECK(mf_read(path, &f, err, sizeof(err)) == 0, "%s", err);
	CHECK(!strcmp(f.desc, "--massif-out-file=m1.out"), "desc '%s'", f.desc);
	CHECK(!strcmp(f.cmd, "./ex"), "cmd '%s'", f.cmd);
	CHECK(!strcmp(f.time_unit, "i"), "unit '%s'", f.time_unit);
	CHECK(f.n_snaps == 30, "%zu snapshots", f.n_snaps);
	if (f.n_snaps != 30)
		return;
	const struct mf_snapshot *s = &f.snaps[1];
	CHECK(s->number == 1 && s->time == 135328 && s->heap == 1000 &&
	      s->extra == 16 && s->stacks == 0 && s->kind == MF_EMPTY &&
	      !s->tree && !s->n_tree, "snapshot 1");
	s = &f.snaps[14];
	CHECK(s->kind == MF_PEAK && s->n_tree == 7, "peak: %d, %zu lines",
	      s->kind, s->n_tree);
	if (s->n_tree != 7)
		return;
	const struct mf_node *t = s->tree;
	CHECK(t[0].bytes == 18010 && t[0].n_children == 3 && !t[0].addr &&
	      !t[0].aggregate && !strcmp(t[0].label, "(heap allocation "
	      "functions) malloc/new/new[], --alloc-fns, etc."), "root '%s'",
	      t[0].label);
	CHECK(t[1].bytes == 10000 && t[1].addr == 0x1091A7 &&
	      !t[1].n_children && !strcmp(t[1].label,
	      "0x1091A7: main (example.c:14)"), "line 1 '%s'", t[1].label);
	CHECK(t[3].n_children == 1 && t[3].addr == 0x10918A, "line 3");
	CHECK(t[6].aggregate && !t[6].addr && t[6].bytes == 10 &&
	      !strcmp(t[6].label, "in 1 place, below massif's threshold "
	      "(1.00%)"), "aggregate '%s'", t[6].label);
	CHECK(f.snaps[9].kind == MF_DETAILED, "snapshot 9 detailed");
	mf_free(&f);
	CHECK(!f.snaps && !f.desc && !f.n_snaps, "mf_free clears");
	mf_free(&f);    /* twice is harmless */
}

/* What ms_print reads too: blank and comment lines anywhere, several
   desc: lines, indentation and blanks free, a last line without '\n'. */
static void
case_tolerated(void)
{
	char err[512];
	struct mf_file f;
	const char *path = file_of(
		"desc: --a=1\ndesc: --b=2\n\n# a comment\ncmd:   ./p x\n"
		"time_unit:  ms\nsnapshot=0\ntime=5  # five\nmem_heap_B=10\n"
		"mem_heap_extra_B=2\n   \nmem_stacks_B=0\nheap_tree=detailed\n"
		"n2: 10 (heap allocation functions) x\n"
		"\t n0:   6 0xABc: f #tag\n  n0: 4 in 3 places, all below x");

	CHECK(mf_read(path, &f, err, sizeof(err)) == 0, "%s", err);
	unlink(path);
	CHECK(!strcmp(f.desc, "--a=1\n --b=2"), "desc '%s'", f.desc);
	CHECK(!strcmp(f.cmd, "./p x"), "cmd '%s'", f.cmd);
	CHECK(!strcmp(f.time_unit, "ms"), "unit '%s'", f.time_unit);
	CHECK(f.n_snaps == 1 && f.snaps[0].time == 5 &&
	      f.snaps[0].n_tree == 3, "one snapshot, 3 lines");
	if (f.n_snaps == 1 && f.snaps[0].n_tree == 3) {
		const struct mf_node *t = f.snaps[0].tree;
		CHECK(t[1].bytes == 6 && t[1].addr == 0xABC &&
		      !strcmp(t[1].label, "0xABc: f #tag"), "'%s'", t[1].label);
		CHECK(t[2].aggregate, "aggregate");
	}
	mf_free(&f);
}

/* TEXT is refused, the reason holding WANT (file name and line). */
static void
refused(const char *text, const char *want)
{
	char err[512], full[600];
	struct mf_file f;
	const char *path = file_of(text);

	int rc = mf_read(path, &f, err, sizeof(err));
	snprintf(full, sizeof(full), want, path);
	CHECK(rc == -1 && strstr(err, full), "want '%s', got rc %d '%s'",
	      full, rc, rc ? err : "");
	CHECK(!f.snaps && !f.desc, "nothing kept");
	unlink(path);
}

#define HEAD "desc: (none)\ncmd: ./p\ntime_unit: B\n"
#define SNAP "snapshot=0\ntime=0\nmem_heap_B=5\nmem_heap_extra_B=0\n" \
	     "mem_stacks_B=0\n"

static void
case_refused(void)
{
	char err[512];
	struct mf_file f;

	refused("", "%s:0: expected \"desc:\", got the end");
	refused("cmd: x\n", "%s:1: expected \"desc:\"");
	refused("desc: a\ntime_unit: B\n", "%s:2: expected \"cmd:\"");
	refused("desc: a\ncmd: x\ntime_unit: KB\n", "%s:3: time_unit:");
	refused(HEAD "snapshot=0\ntime=x\n", "%s:5: time= needs a number");
	refused(HEAD "snapshot=0\ntime=18446744073709551616\n",
		"%s:5: time= needs a number below 2^64");
	refused(HEAD "snapshot=0\nmem_heap_B=1\n", "%s:5: expected \"time=\"");
	refused(HEAD SNAP "heap_tree=big\n", "%s:9: heap_tree= must be");
	refused(HEAD SNAP "heap_tree=peak\nn2: 5 root\n n0: 5 x\n",
		"%s:11: the file ends inside snapshot 0's tree");
	refused(HEAD SNAP "heap_tree=peak\nn4294967296: 5 root\n",
		"%s:10: expected a tree line");
	refused(HEAD SNAP "heap_tree=peak\nn0: 5x root\n",
		"%s:10: expected a tree line");
	refused(HEAD SNAP "heap_tree=peak\n m0: 5 root\n",
		"%s:10: expected a tree line");
	refused(HEAD SNAP "heap_tree=empty\ntime=4\n",
		"%s:10: expected \"snapshot=\"");
	static const char nul[] = HEAD SNAP "heap_tree=empty\0\n";
	const char *path = file_of_n(nul, sizeof(nul) - 1);
	CHECK(mf_read(path, &f, err, sizeof(err)) == -1 &&
	      strstr(err, "NUL byte"), "a NUL byte: '%s'", err);
	unlink(path);
	CHECK(mf_read("/nonexistent/x", &f, err, sizeof(err)) == -1 &&
	      strstr(err, "/nonexistent/x"), "missing file: '%s'", err);
	/* a short buffer is cut, not overrun */
	char small[8];
	CHECK(mf_read("/nonexistent/x", &f, small, sizeof(small)) == -1 &&
	      strlen(small) == 7, "short err");
}

int
main(int argc, char **argv)
{
	if (argc != 3)
		return EXIT_HARNESS;
	if (!strcmp(argv[1], "example"))
		case_example(argv[2]);
	else if (!strcmp(argv[1], "tolerated"))
		case_tolerated();
	else if (!strcmp(argv[1], "refused"))
		case_refused();
	else
		return EXIT_HARNESS;
	return failures ? 1 : 0;
}
