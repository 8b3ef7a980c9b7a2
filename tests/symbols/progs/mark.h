/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How the stack test programs tell the test driver where they are: each
   call worth checking goes through CALL, which first writes "function line"
   to stdout, so the driver knows the line every frame must print. */
#ifndef HT_TESTS_SYMBOLS_MARK_H
#define HT_TESTS_SYMBOLS_MARK_H

#ifdef __cplusplus
extern "C" {
#endif

#define NOINLINE __attribute__((noinline))

/* Write "FN LINE\n" to stdout in one write. */
void mark(const char *fn, int line);

/* Something to do after a call, so that the call is never a tail call and
   its frame stays on the stack. */
extern volatile int mark_sink;

#ifdef __cplusplus
}
#endif

/* CALL and the call it wraps expand on one line, so the line marked is the
   line of the call instruction. */
#define CALL(call)                              \
	do {                                    \
		mark(__func__, __LINE__);       \
		call;                           \
		mark_sink++;                    \
	} while (0)

#endif
