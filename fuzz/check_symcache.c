/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The symbol cache reader refuses rules whose columns the unwinder cannot
   index (symbols/cache.c, rule_valid): a seed cache file (argv[1]) is read
   as it is, with one harmless change to a rule, and with each of three
   bad ones; the bad file is also written to argv[2] when given (the
   regression input of the corpus). Exit 0 when every count is right. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols/cache.h"
#include "symbols/rules.h"

static uint32_t
u32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The offset in DATA of the first rule (past its u64 lookup offset), 0
   when the file has none. Frames: u64 offset, u8 flags, then a name (1),
   lines (2: u32 count, strings), a below-main line (4). */
static size_t
first_rule(const uint8_t *d, size_t len)
{
	size_t p = 8;
	uint32_t n;

	p += 4 + u32_at(d + p); /* key */
	p += 4 + u32_at(d + p); /* debug check */
	n = u32_at(d + p);
	p += 4;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t flags = d[p + 8];

		p += 9;
		if (flags & 1)
			p += 4 + u32_at(d + p);
		if (flags & 2) {
			uint32_t lines = u32_at(d + p);

			p += 4;
			while (lines--)
				p += 4 + u32_at(d + p);
		}
		if (flags & 4)
			p += 4 + u32_at(d + p);
	}
	n = u32_at(d + p);
	p += 4;
	return n && p + 8 + sizeof(struct sym_rule) <= len - 8 ? p + 8 : 0;
}

/* sym_cache_parse of D with its checksum made right. */
static long
parse(uint8_t *d, size_t len, const char *key)
{
	uint64_t sum = sym_cache_checksum(d, len - 8);

	memcpy(d + len - 8, &sum, sizeof(sum));
	return sym_cache_parse(d, len, key);
}

int
main(int argc, char **argv)
{
	static uint8_t d[1 << 20], orig[1 << 20];
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;
	size_t len = f ? fread(orig, 1, sizeof(orig), f) : 0, at;
	struct sym_rule ru;
	char *key;
	long whole, n;
	int bad = 0;

	if (f)
		fclose(f);
	if (len < 20 || !(at = first_rule(orig, len))) {
		fprintf(stderr, "usage: %s SEED.cache [BAD.cache] (a cache "
				"file with a rule)\n", argv[0]);
		return 2;
	}
	key = strndup((const char *)orig + 12, u32_at(orig + 8));
	memcpy(d, orig, len);
	whole = parse(d, len, key);
	printf("seed: %ld entries\n", whole);
	bad |= whole <= 0;
	for (int change = 0; change < 4; change++) {
		memcpy(d, orig, len);
		memcpy(&ru, d + at, sizeof(ru));
		if (change == 0)
			ru.cfa.off += 8; /* harmless */
		else if (change == 1)
			ru.cfa.base = SYM_NREGS;
		else if (change == 2)
			ru.n_set = SYM_NREGS + 1;
		else
			ru.set[0].col = 200, ru.n_set = ru.n_set ? ru.n_set : 1;
		memcpy(d + at, &ru, sizeof(ru));
		n = parse(d, len, key);
		printf("change %d: %ld\n", change, n);
		bad |= n != (change == 0 ? whole : -1);
		if (change == 3 && argc > 2 && (f = fopen(argv[2], "wb"))) {
			fwrite(d, 1, len, f);
			fclose(f);
		}
	}
	free(key);
	return bad;
}
