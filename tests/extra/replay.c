/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The target run under real Massif to record the extra-bytes goldens: it
   performs the operations of an .ops file (format in ops.h) and, after the
   last one, prints the address each operation returned, one per line. It
   reads and writes with plain system calls and keeps everything in static
   storage, so that the only heap blocks Massif sees are the operations'
   own. Not run by the test suite; see regen.sh. */
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "ops.h"

static char text[1 << 20];
static struct op ops[OPS_MAX];
static void *slot[OPS_SLOTS];
static uintptr_t result[OPS_MAX];

static void
die(const char *msg)
{
	ssize_t r = write(2, msg, ops_strlen(msg));

	(void)r;
	_exit(99);
}

static void *
perform(const struct op *o)
{
	void *p = NULL;

	switch (o->kind) {
	case 'm':
		return slot[o->id] = malloc(o->size);
	case 'c':
		return slot[o->id] = calloc(o->count, o->size);
	case 'a':
		return slot[o->id] = memalign(o->align, o->size);
	case 'p':
		if (posix_memalign(&p, o->align, o->size))
			p = NULL;
		return slot[o->id] = p;
	case 'A':
		return slot[o->id] = aligned_alloc(o->align, o->size);
	case 'v':
		return slot[o->id] = valloc(o->size);
	case 'r':
		p = realloc(slot[o->id], o->size);
		if (p || o->size == 0)
			slot[o->id] = p;
		return p;
	case 'f':
		free(slot[o->id]);
		slot[o->id] = NULL;
		return NULL;
	}
	die("replay: bad op\n");
	return NULL;
}

static void
print_hex(uintptr_t v)
{
	char buf[24];
	int n = sizeof(buf);
	ssize_t r;

	buf[--n] = '\n';
	do {
		buf[--n] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	buf[--n] = 'x';
	buf[--n] = '0';
	r = write(1, buf + n, sizeof(buf) - (size_t)n);
	(void)r;
}

int
main(int argc, char **argv)
{
	int fd, n_ops;
	ssize_t len;

	if (argc != 2)
		die("usage: replay OPS-FILE\n");
	fd = open(argv[1], O_RDONLY);
	if (fd < 0)
		die("replay: cannot open the ops file\n");
	len = read(fd, text, sizeof(text) - 1);
	if (len < 0 || len == (ssize_t)sizeof(text) - 1)
		die("replay: cannot read the ops file\n");
	close(fd);
	text[len] = '\0';
	n_ops = ops_parse(text, ops, OPS_MAX);
	if (n_ops < 0)
		die("replay: malformed ops file\n");
	for (int i = 0; i < n_ops; i++)
		result[i] = (uintptr_t)perform(&ops[i]);
	for (int i = 0; i < n_ops; i++)
		print_hex(result[i]);
	return 0;
}
