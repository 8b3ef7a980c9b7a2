/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Units of 1024 with one decimal keep a cell at 9 columns up to TiB;
   bytes in full (the `b` key) are what a test or a script compares. */
#include "top_cells.h"

#include <math.h>
#include <stdio.h>

void
top_cells_bytes(char *buf, size_t len, double bytes, bool exact, bool sign)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB",
					     "TiB" };
	const char *plus = sign && bytes > 0 ? "+" : "";
	if (exact) {
		snprintf(buf, len, "%s%.0f", plus, bytes);
		return;
	}
	double v = bytes;
	size_t u = 0;
	while (fabs(v) >= 1024.0 && u + 1 < sizeof(units) / sizeof(*units)) {
		v /= 1024.0;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%s%.0fB", plus, v);
	else
		snprintf(buf, len, "%s%.1f%s", plus, v, units[u]);
}

void
top_cells_count(char *buf, size_t len, double count)
{
	if (count < 999999.5)
		snprintf(buf, len, "%.0f", count);
	else if (count < 999.95e6)
		snprintf(buf, len, "%.1fM", count / 1e6);
	else
		snprintf(buf, len, "%.1fG", count / 1e9);
}
