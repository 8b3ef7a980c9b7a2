/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The figures of `heaptrace top`'s view as its cells show them: bytes in
   full or in binary units, rates and shares in a few columns. */
#ifndef HT_CLI_TOP_CELLS_H
#define HT_CLI_TOP_CELLS_H

#include <stdbool.h>
#include <stddef.h>

/* BYTES (maybe negative, signed when SIGNED) into BUF: in full when
   EXACT ("3000000"), else in B, KiB, MiB, GiB or TiB with one decimal
   ("2.9MiB"). */
void top_cells_bytes(char *buf, size_t len, double bytes, bool exact,
		     bool sign);
/* COUNT (calls per second) in at most 7 columns: whole up to 999999,
   then "1.2M", "3.4G". */
void top_cells_count(char *buf, size_t len, double count);

#endif
