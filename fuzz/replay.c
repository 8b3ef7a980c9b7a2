/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay driver: every file of the directories (or the files) named
   on the command line run once through a fuzz target's
   LLVMFuzzerTestOneInput, for builds without libFuzzer (gcc, the plain
   and the sanitizer builds of the test suite). A crash or a sanitizer
   report fails the test; a directory with no file fails it too, so that
   a corpus moved away cannot pass unseen. */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz.h"

/* Run the file at PATH through the target. Returns whether it was read. */
static bool
replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		perror(path);
		return false;
	}
	do {
		if (len == cap) {
			cap = cap ? 2 * cap : 65536;
			data = realloc(data, cap);
			if (!data) {
				fprintf(stderr, "%s: out of memory\n", path);
				exit(1);
			}
		}
		n = fread(data + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return true;
}

static int
by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

/* Replay the files of directory DIR in name order; their count, or -1
   when one could not be read. */
static long
replay_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, by_name);
	long done = 0;

	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (!replay_file(path))
				done = -1;
			else if (done >= 0)
				done++;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

int
main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long n;

		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 1;
		}
		n = S_ISDIR(st.st_mode) ? replay_dir(argv[i])
					: replay_file(argv[i]) ? 1 : -1;
		if (n <= 0) {
			fprintf(stderr, "%s: %s\n", argv[i],
				n ? "unreadable" : "no input in it");
			return 1;
		}
		printf("%s: %ld inputs replayed\n", argv[i], n);
	}
	return 0;
}
