/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What every fuzz target shares (fuzz/README in the top README's
   "Fuzzing" section): libFuzzer's entry point, which the replay driver
   (replay.c) calls too, and a file holding the input, for readers that
   open files by name. */
#ifndef HT_FUZZ_FUZZ_H
#define HT_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run one input through the target; always returns 0 (a crash or a
   sanitizer report is the failure). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The path of a file holding exactly DATA (SIZE bytes): an in-memory
   file, rewritten at each call. Exits with a message when none can be
   made. */
const char *fuzz_file(const uint8_t *data, size_t size);

#endif
