/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One step of a stack walk, in terms simple enough to be followed inside
   the target by the inline path's stubs (docs/inline-backend.md,
   "Unwinding in the stub"): the CFA is rsp or rbp plus an offset, and the
   caller's rsp, rbp and return address each keep their value, are unknown,
   or are the CFA plus an offset or the word stored there. symbols/ compiles
   these from the CFI; the tracer publishes them to the stubs. */
#ifndef HT_COMMON_UNWIND_RULE_H
#define HT_COMMON_UNWIND_RULE_H

#include <stdbool.h>
#include <stdint.h>

enum ht_unwind_how {
	HT_LOC_UNDEF,  /* unknown in the caller */
	HT_LOC_SAME,   /* the frame's own value (known when it is) */
	HT_LOC_CFA,    /* CFA + OFF */
	HT_LOC_AT_CFA, /* the word at CFA + OFF */
};

struct ht_unwind_loc {
	enum ht_unwind_how how;
	int32_t off;
};

struct ht_unwind_rule {
	bool fp;         /* no CFI: the frame-pointer step (the rest unused) */
	bool cfa_rbp;    /* CFA = rbp + CFA_OFF, else rsp + CFA_OFF */
	int32_t cfa_off;
	struct ht_unwind_loc rsp, rbp, ra;
};

#endif
