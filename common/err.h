/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Errors as values and the one message module: every line heaptrace prints
   about itself goes through here, prefixed "heaptrace: ", in one write. */
#ifndef HT_COMMON_ERR_H
#define HT_COMMON_ERR_H

#include <stdarg.h>
#include <stdbool.h>

/* heaptrace's own error codes. Values sit above 4095 so that -HT_E_* is never
   mistaken for -errno. */
#define HT_ERRORS(X) \
	X(HT_E_BADOPT, "bad option") \
	X(HT_E_NOSYM, "no symbol covers this address") \
	X(HT_E_FORMAT, "malformed input") \
	X(HT_E_UNKNOWN_BLOCK, "block not known") \
	X(HT_E_NOTIMPL, "not implemented yet") \
	X(HT_E_SECCOMP, "it has a seccomp filter of its own, which " \
	  "heaptrace's system calls in it pass only with CAP_SYS_ADMIN")

enum ht_error {
	HT_E_BASE = 4096,
#define HT_ERR_ENUM(name, msg) name,
	HT_ERRORS(HT_ERR_ENUM)
#undef HT_ERR_ENUM
};

/* Message for ERR, a positive errno value or an HT_E_* code. Never NULL. */
const char *ht_strerror(int err);

/* Print "heaptrace: MSG\n" on stderr. */
void ht_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "heaptrace: MSG: strerror(errno)\n" on stderr. */
void ht_perror(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "heaptrace: warning: MSG\n" on stderr, unless quiet (-q). */
void ht_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "heaptrace: MSG\n" on stderr, unless quiet (-q): what heaptrace
   says of its own accord that is no error (the summary line). */
void ht_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Keep MSG for the end of the session: the summary line, the one line a
   run prints of its own, ends with "; MSG" for each (cli/profile.c takes
   them with ht_notes_take); what no summary line took is printed by
   ht_notes_flush as one line. For remarks that would otherwise be lines
   of their own in a normal run (an exec not followed, a signal
   forwarded). Silenced by -q like ht_info. */
void ht_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ht_note for a remark the same on every run on this machine (no
   hardware instruction counter): said when the function given to
   ht_set_note_first_time says the machine has not heard it (or none was
   given), and always with -v. */
void ht_note_once(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* IS_FIRST(TEXT): whether TEXT is new to this machine, then remembered
   as heard (common/said.h's ht_said_first_time). */
void ht_set_note_first_time(bool (*is_first)(const char *text));
/* The notes due, "; MSG; MSG" ("" if none, or with -q), and forget them
   all. The text stays valid until the next call. */
const char *ht_notes_take(void);
/* Forget the notes unsaid (a session ending in an error says that
   instead); none is remembered as said. */
void ht_notes_discard(void);
/* Print the notes due, as one "heaptrace: MSG; MSG" line (unless -q),
   and forget them. */
void ht_notes_flush(void);
/* Print "heaptrace: MSG\n" only when ht_verbose is set. */
void ht_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ht_error, then the registered emergency cleanup, then exit(STATUS). */
void ht_die(int status, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), noreturn));

/* Register the function ht_die runs before exiting (restores tracees). */
void ht_set_die_cleanup(void (*cleanup)(void));
/* Enables ht_debug output. */
void ht_set_verbose(int verbose);
/* -q: ht_warn and ht_info print nothing; ht_error, ht_perror and ht_die
   still do. */
void ht_set_quiet(int quiet);

#endif
