/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace snapshot PID`: ask the heaptrace tracing process PID for a
   snapshot of its profile now, and print the file it was written to. */
#ifndef HT_CLI_SNAPSHOT_CMD_H
#define HT_CLI_SNAPSHOT_CMD_H

#include <stdio.h>

/* Run the command with ARGV[0] "snapshot" and ARGC words. Returns the exit
   status: 0 written (its path printed on stdout), 1 heaptrace could not
   write it or did not answer in time, 2 the command line was wrong or PID
   is not profiled by a heaptrace we may signal. */
int snapshot_cmd(int argc, char **argv);

/* The usage lines of the command, for heaptrace --help. */
void snapshot_cmd_usage(FILE *out);

#endif
