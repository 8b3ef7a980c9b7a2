/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The test programs that wait for heaptrace, or stop it, learn of it from
   /proc/self/status; C and C++ include this alike. */
#ifndef HT_TESTS_RUN_TRACER_PID_H
#define HT_TESTS_RUN_TRACER_PID_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pid of the process tracing this one; 0 when none or unreadable. */
static inline long
self_tracer_pid(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long pid = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, "TracerPid:", 10) == 0)
			pid = atol(line + 10);
	fclose(f);
	return pid;
}

#endif
