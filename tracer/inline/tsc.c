/* SPDX-License-Identifier: GPL-2.0-or-later */
/* TSC readings to CLOCK_MONOTONIC: whether the TSC can be trusted, the
   pairs that calibrate it, and the conversion. */
#include "tracer/inline/tsc.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tracer/inline/ring.h"

/* Tries per sample: a pair whose two TSC reads lie far apart was
   interrupted between them, so the tightest of a few is kept. */
#define SAMPLE_TRIES 3

static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *p = list; (p = strstr(p, word)) != NULL; p += n) {
		bool starts = p == list || p[-1] == ' ' || p[-1] == '\t';
		bool ends = p[n] == '\0' || p[n] == ' ' || p[n] == '\t' ||
			    p[n] == '\n';
		if (starts && ends)
			return true;
	}
	return false;
}

bool
tsc_flags_usable(const char *flags)
{
	return has_word(flags, "constant_tsc") && has_word(flags, "nonstop_tsc");
}

static bool
read_usable(void)
{
	FILE *f = fopen("/proc/cpuinfo", "re");
	if (!f)
		return false;
	char line[8192];
	bool ok = false;
	while (fgets(line, sizeof(line), f)) {
		/* Every CPU has the same flags line; the first one says it. */
		if (strncmp(line, "flags", 5) == 0) {
			const char *colon = strchr(line, ':');
			ok = colon && tsc_flags_usable(colon + 1);
			break;
		}
	}
	fclose(f);
	return ok;
}

bool
tsc_usable(void)
{
	static int known = -1; /* a machine property: asked once */
	if (known < 0)
		known = read_usable();
	return known != 0;
}

void
tsc_clock_add(struct tsc_clock *c, uint64_t tsc, uint64_t ns)
{
	if (c->pairs == 0) {
		c->tsc0 = tsc;
		c->ns0 = ns;
	}
	c->tsc1 = tsc;
	c->ns1 = ns;
	c->pairs++;
	/* The rate over the whole span is the best known one. */
	c->ns_per_tick = c->pairs >= 2 && c->tsc1 > c->tsc0
				 ? (double)(c->ns1 - c->ns0) /
					   (double)(c->tsc1 - c->tsc0)
				 : 0;
}

static uint64_t
monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void
tsc_clock_sample(struct tsc_clock *c)
{
	uint64_t best_tsc = 0, best_ns = 0, best_width = UINT64_MAX;
	for (int i = 0; i < SAMPLE_TRIES; i++) {
		uint64_t before = ring_tsc();
		uint64_t ns = monotonic_ns();
		uint64_t after = ring_tsc();
		if (after - before < best_width) {
			best_width = after - before;
			best_tsc = before + (after - before) / 2;
			best_ns = ns;
		}
	}
	tsc_clock_add(c, best_tsc, best_ns);
}

uint64_t
tsc_clock_ns(const struct tsc_clock *c, uint64_t tsc)
{
	if (c->ns_per_tick == 0)
		return c->ns1;
	/* The rate is tsc_clock_add's; the offset is the anchor's, so that
	   a reading near it is converted exactly. */
	double delta = (double)(int64_t)(tsc - c->tsc1) * c->ns_per_tick;
	int64_t ns = (int64_t)c->ns1 +
		     (int64_t)(delta < 0 ? delta - 0.5 : delta + 0.5);
	return ns > 0 ? (uint64_t)ns : 0;
}
