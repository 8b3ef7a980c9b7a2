/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace print [--threshold=X] [--x=N] [--y=N] FILE`: a massif.out
   file rendered as ms_print 3.19 renders it, byte for byte. */
#ifndef HT_CLI_PRINT_H
#define HT_CLI_PRINT_H

/* Run the command with ARGV[0] "print" and ARGC words. Returns the exit
   status: 0 printed, 1 standard output could not be written, 2 the
   command line was wrong or FILE cannot be read as a massif.out file. */
int print_cmd(int argc, char **argv);

#endif
