/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a process's mappings from /proc/PID/maps, one parsed line at a
   time, for everything the tracer needs to know about where things are:
   an object's extent, the file at an address, a thread's stack, code to
   borrow a syscall instruction from. */
#include "tracer/target/target.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

bool
maps_parse_line(char *line, struct mapping *m)
{
	unsigned long lo, hi, off;
	int name = 0;
	memset(m, 0, sizeof(*m));
	if (sscanf(line, "%lx-%lx %4s %lx %*s %*s %n", &lo, &hi, m->perms,
		   &off, &name) < 4)
		return false;
	m->lo = lo;
	m->hi = hi;
	m->offset = off;
	m->path = name ? line + name : "";
	line[strcspn(line, "\n")] = 0;
	return true;
}

int
maps_foreach(pid_t pid, maps_fn fn, void *arg)
{
	char path[64], line[PATH_MAX + 128];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	int rc = 0;
	while (!rc && fgets(line, sizeof(line), f)) {
		struct mapping m;
		if (maps_parse_line(line, &m))
			rc = fn(arg, &m);
	}
	fclose(f);
	return rc > 0 ? 0 : rc;
}

static int
snap_add(void *arg, const struct mapping *m)
{
	struct maps_snap *s = arg;
	ht_xgrow((void **)&s->r, &s->cap, s->n + 1, sizeof(*s->r));
	s->r[s->n++] = (struct maps_range){
		.lo = m->lo, .hi = m->hi,
		.main_stack = strcmp(m->path, "[stack]") == 0,
	};
	return 0;
}

int
maps_snap_load(pid_t pid, struct maps_snap *s)
{
	*s = (struct maps_snap){ 0 };
	int err = maps_foreach(pid, snap_add, s);
	if (err)
		maps_snap_free(s);
	return err;
}

const struct maps_range *
maps_snap_find(const struct maps_snap *s, uint64_t addr)
{
	/* /proc lists mappings in address order, without overlaps. */
	size_t lo = 0, hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (addr < s->r[mid].lo)
			hi = mid;
		else if (addr >= s->r[mid].hi)
			lo = mid + 1;
		else
			return &s->r[mid];
	}
	return NULL;
}

void
maps_snap_free(struct maps_snap *s)
{
	free(s->r);
	*s = (struct maps_snap){ 0 };
}

struct extent {
	const char *path;
	uint64_t lo, hi;
};

static int
extend(void *arg, const struct mapping *m)
{
	struct extent *e = arg;
	if (strcmp(m->path, e->path) == 0) {
		if (m->lo < e->lo)
			e->lo = m->lo;
		if (m->hi > e->hi)
			e->hi = m->hi;
	}
	return 0;
}

/* /proc/PID/maps names a file by its real path, the link map by the name
   ld.so opened: "/lib/x86_64-linux-gnu/libc.so.6" is mapped as
   "/usr/lib/x86_64-linux-gnu/libc.so.6" where /lib links to usr/lib, as
   is an LD_PRELOAD given through /lib. */
void
maps_extent(pid_t pid, const char *path, uint64_t *lo, uint64_t *hi)
{
	char real[PATH_MAX];
	if (realpath(path, real))
		path = real;
	struct extent e = { .path = path, .lo = UINT64_MAX };
	maps_foreach(pid, extend, &e);
	*lo = e.lo == UINT64_MAX ? 0 : e.lo;
	*hi = e.lo == UINT64_MAX ? 0 : e.hi;
}
