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
#include "output/site_name.h"
#include "output/site_wrappers.h"
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
	bool pages;        /* --pages-as-heap: figures are pages mapped */
	bool stacks;       /* --stacks=yes: snapshots count stack bytes */
	bool sites_empty;  /* a .sites file without sites was set aside
			      (--pages-as-heap records none) */
	struct site_naming naming; /* how its sites are named */
};

/* How sites are named when read: report's and diff's --alloc-fn=NAME
   (repeated) and --find-wrappers=yes|no. */
struct report_naming_args {
	char **alloc_fns; /* the words of argv, borrowed; the array malloc'd */
	size_t n_alloc_fns, cap_alloc_fns;
	bool no_wrappers;
};

/* Those two options in report's and diff's --help. */
#define REPORT_NAMING_USAGE                                                  \
	"  --alloc-fn=<name>        name sites by the callers of <name>, as " \
	"if the run\n"                                                        \
	"                           had been given --alloc-fn=<name> "       \
	"(repeatable)\n"                                                      \
	"  --find-wrappers=yes|no   find the program's allocation wrappers "  \
	"in the\n"                                                            \
	"                           stacks and name sites by their callers "  \
	"[yes]\n"

/* Whether ARGV[*I] is --alloc-fn or --find-wrappers of command CMD, into
   *A: 1 taken, 0 another word, -1 (said on stderr) when malformed. */
int report_naming_option(const char *cmd, int argc, char **argv, int *i,
			 struct report_naming_args *a);

/* Free what report_naming_option allocated. */
void report_naming_args_free(struct report_naming_args *a);

/* Name P's sites as A says (NULL: wrappers found, no read-time
   --alloc-fn), before report_site_frame or the HTML page; A outlives P. */
void report_profile_naming(struct report_profile *p,
			   const struct report_naming_args *a);

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

/* Read PATH and PATH.sites (absent: has_sites false) into *P; its sites
   are not named until report_profile_naming. Returns 0,
   or -1 with a one-line reason in ERR and *P empty. */
int report_profile_load(const char *path, struct report_profile *p,
			char *err, size_t errlen);

/* Free what report_profile_load read. */
void report_profile_free(struct report_profile *p);

/* The index in P's Massif snapshots of its peak: the peak snapshot
   (heap_tree=peak, or the one the .sites peak: line names), else the
   largest snapshot (attach, or a program ending at its largest, takes no
   peak snapshot); -1 when there is no snapshot. */
long report_peak_index(const struct report_profile *p);

/* The profile's peak heap in bytes (pages mapped with --pages-as-heap):
   the .sites file's peak: line when it names a snapshot, else that of
   report_peak_index's snapshot, else 0. */
uint64_t report_peak_heap(const struct report_profile *p);

/* What P's heap figures count, for headings: "heap", or "pages mapped
   (--pages-as-heap)". */
const char *report_measure(const struct report_profile *p);

/* Why P has no per-site statistics, one clause (no .sites file, or
   --pages-as-heap records none). */
const char *report_missing_reason(const struct report_profile *p);

/* The top entries of snapshot S's tree (the root's children; under
   --pages-as-heap the callers of the page-call wrappers, largest first),
   preorder indexes into S->tree; returns their number, *IDX malloc'd. */
size_t report_tree_entries(const struct report_profile *p,
			   const struct mf_snapshot *s, size_t **idx);

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
