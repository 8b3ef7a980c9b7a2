/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a massif.out file from anyone, read as `heaptrace print`
   reads it (output/massif_read.c) and rendered as ms_print would
   (output/msprint.c), to /dev/null. */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz/fuzz.h"
#include "output/massif_read.h"
#include "output/msprint.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *sink;
	struct mf_file f;
	char err[512];
	const struct msprint_opts o = { .threshold = 1.0, .x = 72, .y = 20 };

	if (!sink && !(sink = fopen("/dev/null", "we"))) {
		perror("fuzz: /dev/null");
		exit(1);
	}
	if (mf_read(fuzz_file(data, size), &f, err, sizeof(err)) != 0)
		return 0;
	(void)mf_peak_index(&f);
	(void)msprint_render(sink, &f, &o, err, sizeof(err));
	mf_free(&f);
	return 0;
}
