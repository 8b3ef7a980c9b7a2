/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The tracer's rules for the stubs, made for this very process: a symbol
   session of our own pid (symbols/) compiles each lookup pc's rule from our
   own CFI, as heaptrace's profiler does for a target (its sink's
   stub_rule), and stubenv publishes it for the stubs when it answers a
   RULE question or unwinds a copy. */
#ifndef HT_TESTS_INLINE_SELFRULE_H
#define HT_TESTS_INLINE_SELFRULE_H

#include <stdbool.h>
#include <stdint.h>

#include "symbols/session.h"
#include "tracer/inline/ring.h"
#include "tracer/tracer.h"

/* Open the session (once). Returns it, or NULL. */
struct sym_session *selfrule_session(void);

/* env.on_rule: the rule for lookup pc PC (RING_RULE_COPY when the stubs
   cannot follow that frame). Any thread may ask: the session is locked
   meanwhile. */
bool selfrule_get(uint64_t pc, struct ring_rule *out);

/* sym_unwind of the copy in IT (a copied record), at most MAX addresses,
   with the session locked against selfrule_get in other threads. */
unsigned selfrule_unwind(const struct tracer_capture *cap, uint64_t *pcs,
			 unsigned max);

/* Rules asked for and refused so far. */
extern uint64_t selfrule_asked, selfrule_refused;

#endif
