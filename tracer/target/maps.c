/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a process's mappings from /proc/PID/maps, one parsed line at a
   time, for everything the tracer needs to know about where things are:
   an object's extent, the file at an address, a thread's stack, code to
   borrow a syscall instruction from. */
#include "tracer/target/target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
