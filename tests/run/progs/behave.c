/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One program for the behaviour tests; argv[1] picks what it does. Every
   mode first allocates a 1000-byte block from main and keeps it, so each
   profile has something to show.
     out        text and binary bytes on stdout (stdio) and stderr
     stdin      reads stdin line by line, keeps a copy of each line, then
                prints them numbered, and the count of lines and bytes
     args ...   prints each following argument in brackets
     pid        prints its pid
     exit N     prints a line, then exit(N)
     segv       writes through a null pointer
     abort      abort()
     kill       sends itself SIGKILL */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int out(void)
{
	static const char bin[] = { 'b', 0, 'i', '\r', '\n', (char)0xff, '\n' };

	printf("line one on stdout\n");
	fputs("line one on stderr\n", stderr);
	printf("line two on stdout, no newline at the end of the next one\n");
	fwrite(bin, 1, sizeof(bin), stdout);
	fputs("line two on stderr\n", stderr);
	printf("%s", "last");
	return 0;
}

static int read_stdin(void)
{
	char **lines = NULL;
	char *line = NULL;
	size_t cap = 0, n = 0, bytes = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, stdin)) >= 0) {
		char **more = realloc(lines, (n + 1) * sizeof(*lines));

		if (!more)
			return 1;
		lines = more;
		lines[n] = strdup(line);
		if (!lines[n])
			return 1;
		n++;
		bytes += (size_t)len;
	}
	for (size_t i = 0; i < n; i++) {
		printf("%zu: %s", i + 1, lines[i]);
		free(lines[i]);
	}
	printf("read %zu lines, %zu bytes\n", n, bytes);
	free(lines);
	free(line);
	return 0;
}

int main(int argc, char **argv)
{
	void *kept = malloc(1000);

	if (!kept || argc < 2)
		return 2;
	if (strcmp(argv[1], "out") == 0)
		return out();
	if (strcmp(argv[1], "stdin") == 0)
		return read_stdin();
	if (strcmp(argv[1], "args") == 0) {
		for (int i = 2; i < argc; i++)
			printf("[%s]\n", argv[i]);
		return 0;
	}
	if (strcmp(argv[1], "pid") == 0) {
		printf("%ld\n", (long)getpid());
		return 0;
	}
	if (strcmp(argv[1], "exit") == 0 && argc == 3) {
		printf("exiting with %s\n", argv[2]);
		exit(atoi(argv[2]));
	}
	if (strcmp(argv[1], "segv") == 0) {
		*(volatile int *)(volatile void *)NULL = 1;
		return 0;
	}
	if (strcmp(argv[1], "abort") == 0)
		abort();
	if (strcmp(argv[1], "kill") == 0) {
		kill(getpid(), SIGKILL);
		pause();
	}
	return 2;
}
