/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace diff [--format=text|json] [--threshold=PERCENT]
   [--min-bytes=N] A B`: the allocation sites that grew or shrank between
   two profiles of the same program, with diff(1)'s exit statuses so that
   it can gate a CI job. */
#ifndef HT_CLI_DIFF_H
#define HT_CLI_DIFF_H

/* Run the command with ARGV[0] "diff". Returns the exit status: 0 no site
   changed beyond the threshold, 1 some did (they are printed), 2 the
   command line was wrong or a profile missing, unreadable or malformed
   (one line on stderr). */
int diff_cmd(int argc, char **argv);

#endif
