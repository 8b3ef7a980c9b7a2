/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `heaptrace report [--format=text|json|html] [--top=N] [-o FILE] PROFILE`:
   the per-site statistics of a profile (its .sites file) in
   heaptrack_print's sections, or as JSON; on a Massif file without one,
   what the Massif file holds. Also the reading of a profile and the
   printing of stacks that `heaptrace diff` shares. */
#ifndef HT_CLI_REPORT_H
#define HT_CLI_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "output/massif_read.h"
#include "output/sites_read.h"

/* Exit status of report and diff for bad usage or unreadable input. */
#define REPORT_EXIT_ERROR 2

/* Run the command with ARGV[0] "report". Returns the exit status: 0
   printed, 2 the command line was wrong, a file was missing, unreadable
   or malformed, or the output could not be written (one line on
   stderr). */
int report_cmd(int argc, char **argv);

/* One profile: its Massif file, and its .sites file when there is one. */
struct report_profile {
	const char *path;
	struct mf_file massif;
	bool has_sites;
	struct sites_file sites;
	char *sites_path;
};

/* Whether P is sampled (its .sites file's sampling: line, else its
   Massif desc:'s --sampling-interval=), and how, into *OUT. */
bool report_sampling(const struct report_profile *p,
		     struct sites_sampling *out);

/* When P is sampled, its "sampled every ...: figures are estimated" line
   on OUT after PREFIX (a newline ends it); nothing when exact. */
void report_sampling_text(FILE *out, const struct report_profile *p,
			  const char *prefix);

/* When P is sampled, `, "sampling": {"interval": N, "seed": S,
   "estimated": true}` on OUT (seed null when not known); nothing when
   exact. */
void report_sampling_json(FILE *out, const struct report_profile *p);

/* The HTML page of the profile PROFILE (and its .sites) written beside
   it as PROFILE.html (--html=yes of run and attach). Returns 0, or -1
   with a one-line reason in ERR. */
int report_html_beside(const char *profile, char *err, size_t errlen);

/* Read PATH and PATH.sites (absent: has_sites false) into *P. Returns 0,
   or -1 with a one-line reason in ERR and *P empty. */
int report_profile_load(const char *path, struct report_profile *p,
			char *err, size_t errlen);

/* Free what report_profile_load read. */
void report_profile_free(struct report_profile *p);

/* The profile's peak heap in bytes: the .sites file's peak: line, else
   the Massif file's peak snapshot's, else 0. */
uint64_t report_peak_heap(const struct report_profile *p);

/* A tree node's label without the "0xADDR: " Massif puts before it. */
const char *report_label_text(const char *label);

/* The frame that names P's site S in one line (site_name_frame: the
   first outside the allocator and the C library that has a name). NULL
   for a site without frames. */
const struct sites_frame *report_site_frame(const struct report_profile *p,
					    const struct sites_site *s);

/* "FUNCTION (file:line)", "FUNCTION (in object)", "FUNCTION" ("???
   [0xADDR]" for an unknown one) on OUT, without a newline. */
void report_frame_text(FILE *out, const struct sites_frame *fr);

/* Site S's frames on OUT, one a line, innermost first, after INDENT,
   down to main. */
void report_stack_text(FILE *out, const struct sites_site *s,
		       const char *indent);

/* S as a JSON string (NULL: null), quoted and escaped (control
   characters, and bytes that are not UTF-8 as \u00XX). */
void report_json_string(FILE *out, const char *s);

/* Site S's frames as a JSON array of {"function", "file", "line",
   "object", "address"} (null where unknown), innermost first. */
void report_json_stack(FILE *out, const struct sites_site *s);

/* Whether ARGV[*I] is option NAME of command CMD, "NAME=VALUE" or
   "NAME VALUE" (then *I moves on to the value): 1 with *VALUE set, 0 when
   it is another word, -1 (said on stderr) when the value is missing. */
int report_option_value(const char *cmd, int argc, char **argv, int *i,
			const char *name, const char **value);

/* Close OUT (stdout is flushed, not closed): 0, or -1 after saying on
   stderr why the output NAME could not be written. */
int report_output_close(FILE *out, const char *name);

#endif
