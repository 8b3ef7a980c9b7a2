/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace print`: ms_print's options, with ms_print's ranges, read
   anywhere on the line as ms_print reads them; a bad one gets one line
   and exit status 2, as heaptrace's other commands do. */
#include "print.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "output/massif_read.h"
#include "output/msprint.h"

#define EXIT_USAGE 2
#define GRAPH_MIN 4
#define GRAPH_MAX 1000

static void
usage(FILE *out)
{
	fputs("usage: heaptrace print [--threshold=X] [--x=N] [--y=N] FILE\n"
	      "\n"
	      "Print the massif.out FILE as ms_print 3.19 prints it.\n"
	      "  --threshold=<m.n>  significance threshold, in percent, 0..100 "
	      "[1.0]\n"
	      "  --x=<4..1000>      graph width, in columns [72]\n"
	      "  --y=<4..1000>      graph height, in rows [20]\n"
	      "  --version          print heaptrace's version\n", out);
}

/* The value after PREFIX in ARG, or NULL when ARG is another option. */
static const char *
value_of(const char *arg, const char *prefix)
{
	size_t n = strlen(prefix);
	return strncmp(arg, prefix, n) == 0 ? arg + n : NULL;
}

/* Digits and at most one '.', a '%' allowed at the end, 0..100. */
static int
threshold_parse(const char *v, double *out)
{
	size_t digits = strspn(v, "0123456789.");
	size_t dots = 0;

	for (size_t i = 0; i < digits; i++)
		dots += v[i] == '.';
	if (digits == dots || dots > 1 ||
	    (v[digits] && strcmp(v + digits, "%") != 0)) {
		ht_error("print: --threshold needs a percentage like 0.5 or "
			 "10%%, not '%s'", v);
		return -1;
	}
	*out = strtod(v, NULL);
	if (*out > 100) {
		ht_error("print: --threshold must be 0..100, not '%s'", v);
		return -1;
	}
	return 0;
}

/* Decimal digits only, within ms_print's 4..1000. */
static int
graph_size_parse(const char *name, const char *v, unsigned *out)
{
	size_t n = strspn(v, "0123456789");
	unsigned long x = 0;

	if (n == 0 || v[n]) {
		ht_error("print: --%s needs a number of %s, 4..1000, not '%s'",
			 name, !strcmp(name, "x") ? "columns" : "rows", v);
		return -1;
	}
	for (const char *p = v; *p && x <= GRAPH_MAX; p++)
		x = x * 10 + (unsigned long)(*p - '0');
	if (x < GRAPH_MIN || x > GRAPH_MAX) {
		ht_error("print: --%s must be 4..1000, not '%s'", name, v);
		return -1;
	}
	*out = (unsigned)x;
	return 0;
}

/* What an option asks for besides its value. */
enum { OPT_VALUE, OPT_USAGE, OPT_VERSION };

/* One option into O; OPT_USAGE or OPT_VERSION when it asks for them, -1
   when it is wrong. */
static int
option_parse(const char *arg, struct msprint_opts *o)
{
	const char *v;

	if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
		return OPT_USAGE;
	if (!strcmp(arg, "--version"))
		return OPT_VERSION;
	if ((v = value_of(arg, "--threshold=")))
		return threshold_parse(v, &o->threshold);
	if ((v = value_of(arg, "--x=")))
		return graph_size_parse("x", v, &o->x);
	if ((v = value_of(arg, "--y=")))
		return graph_size_parse("y", v, &o->y);
	ht_error("print: unknown option '%s' (heaptrace print --help lists "
		 "them)", arg);
	return -1;
}

int
print_cmd(int argc, char **argv)
{
	struct msprint_opts o = {
		.threshold = 1.0, .x = 72, .y = 20,
		.argv = argv + 1, .argc = (size_t)(argc - 1),
	};
	const char *path = NULL;

	for (int i = 1; i < argc; i++) {
		if (argv[i][0] != '-') {
			if (path) {
				ht_error("print: one FILE only, not '%s' and "
					 "'%s'", path, argv[i]);
				return EXIT_USAGE;
			}
			path = argv[i];
			continue;
		}
		int rc = option_parse(argv[i], &o);
		if (rc == OPT_USAGE || rc == OPT_VERSION) {
			if (rc == OPT_USAGE)
				usage(stdout);
			else
				printf("heaptrace %s (ms_print 3.19.0's output)\n",
				       HT_VERSION);
			return fflush(stdout) ? EXIT_FAILURE : EXIT_SUCCESS;
		}
		if (rc < 0)
			return EXIT_USAGE;
	}
	if (!path) {
		ht_error("print: missing the massif.out FILE (heaptrace print "
			 "[--threshold=X] [--x=N] [--y=N] FILE)");
		return EXIT_USAGE;
	}

	struct mf_file f;
	char err[512];
	if (mf_read(path, &f, err, sizeof(err))) {
		ht_error("print: %s", err);
		return EXIT_USAGE;
	}
	int rc = msprint_render(stdout, &f, &o, err, sizeof(err));
	mf_free(&f);
	if (rc) {
		ht_error("print: %s: %s", path, err);
		return EXIT_USAGE;
	}
	if (fflush(stdout) || ferror(stdout)) {
		ht_perror("print: error writing to standard output");
		return EXIT_FAILURE;
	}
	return EXIT_SUCCESS;
}
