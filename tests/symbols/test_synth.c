/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Python frames (common/synthframe.h) through both symbolizers: the live
   session's, here on this very process, and the replay table's. Each must
   name an interned frame by its function, describe it Massif's way with
   its file and line, know no mapping for it, and leave native addresses
   named as before. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/synthframe.h"
#include "symbols/session.h"
#include "symbols/table.h"

static int failures;

static void
expect_str(const char *what, const char *got, const char *want)
{
	if (got == want || (got && want && strcmp(got, want) == 0))
		return;
	fprintf(stderr, "FAIL %s: got \"%s\", want \"%s\"\n", what,
		got ? got : "(null)", want ? want : "(null)");
	failures++;
}

static void
expect(const char *what, bool ok)
{
	if (ok)
		return;
	fprintf(stderr, "FAIL %s\n", what);
	failures++;
}

/* The checks every symbolizer must pass on Python frames. */
static void
check_synth(const char *who, struct ht_symbolizer sym)
{
	uint64_t method = synth_frame_intern("sleeper.K.method", "sleeper.py", 6);
	uint64_t nolines = synth_frame_intern("<module>", "<string>", 0);
	uint64_t stray = SYNTH_FRAME_BASE | 0x7fffffffu; /* never interned */
	const char *lines[HT_MAX_INLINE];
	struct ht_mapping m;
	unsigned n;
	char what[128];

	snprintf(what, sizeof(what), "%s: name", who);
	expect_str(what, sym.function_name(sym.ctx, method),
		   "sleeper.K.method");
	snprintf(what, sizeof(what), "%s: describe", who);
	n = sym.describe(sym.ctx, method, lines, HT_MAX_INLINE);
	expect(what, n == 1);
	expect_str(what, lines[0], "sleeper.K.method (sleeper.py:6)");
	/* asked twice, the same answer (cached, not re-made wrong) */
	n = sym.describe(sym.ctx, method, lines, HT_MAX_INLINE);
	expect_str(what, n == 1 ? lines[0] : NULL,
		   "sleeper.K.method (sleeper.py:6)");
	snprintf(what, sizeof(what), "%s: no line", who);
	n = sym.describe(sym.ctx, nolines, lines, HT_MAX_INLINE);
	expect_str(what, n == 1 ? lines[0] : NULL, "<module> (<string>:0)");
	expect_str(what, sym.function_name(sym.ctx, nolines), "<module>");
	snprintf(what, sizeof(what), "%s: never interned", who);
	expect_str(what, sym.function_name(sym.ctx, stray), NULL);
	n = sym.describe(sym.ctx, stray, lines, HT_MAX_INLINE);
	expect_str(what, n == 1 ? lines[0] : NULL, "???");
	snprintf(what, sizeof(what), "%s: no mapping", who);
	expect(what, !sym.mapping || !sym.mapping(sym.ctx, method, &m));
}

int
main(void)
{
	struct sym_session *ss = sym_session_new(getpid());
	struct sym_table *t = sym_table_new();
	const char *native_desc[] = { "main (t.c:3)" };
	const char *lines[HT_MAX_INLINE];
	struct ht_symbolizer sym;

	if (!ss) {
		perror("sym_session_new");
		return 99;
	}
	sym = sym_session_symbolizer(ss);
	check_synth("session", sym);
	/* a native address still named by its symbol */
	expect_str("session: native", sym.function_name(sym.ctx,
		   (uint64_t)(uintptr_t)main), "main");

	sym_table_add(t, 0x401000, "main", native_desc, 1);
	sym = sym_table_symbolizer(t);
	check_synth("table", sym);
	expect_str("table: native", sym.function_name(sym.ctx, 0x401000),
		   "main");
	sym.describe(sym.ctx, 0x401000, lines, HT_MAX_INLINE);
	expect_str("table: native describe", lines[0], "main (t.c:3)");

	sym_table_free(t);
	sym_session_free(ss);
	synth_frame_reset();
	return failures ? 1 : 0;
}
