/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The per-function trampolines between a patched entry and the stub: they
   load the function's descriptor index into r11 (free at a call) and jump
   to the blob's stub_entry. */
#ifndef HT_TRACER_INLINE_TRAMP_H
#define HT_TRACER_INLINE_TRAMP_H

#include <stddef.h>
#include <stdint.h>

#define TRACER_TRAMP_MAX 24

/* Write into OUT the trampoline for descriptor IDX that will be placed at
   address AT and jump to the stub entry at ENTRY: `mov r11d, IDX` then
   `jmp rel32` (11 bytes), or `jmp [rip]` with ENTRY stored after it (20
   bytes) when ENTRY is out of rel32 reach. Returns its length. */
size_t tracer_tramp_encode(uint8_t out[TRACER_TRAMP_MAX], uint64_t at,
			   uint64_t entry, uint32_t idx);

#endif
