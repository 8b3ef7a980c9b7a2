/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a symbol cache file (symbols/cache.c), read as a run
   reads the cache of one of its modules. A file whose checksum or key
   does not match is dropped at once, so the target makes both match:
   the key is the one the input holds, and its last 8 bytes are replaced
   by the checksum of the rest. A real cache file is thus a seed as it
   is. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz.h"
#include "symbols/cache.h"

/* The key the file's header names (after the 8-byte magic: a u32 length
   and its bytes), malloc'd; "" when it has none. */
static char *
key_of(const uint8_t *data, size_t size)
{
	uint32_t n;

	if (size < 12)
		return calloc(1, 1);
	memcpy(&n, data + 8, sizeof(n));
	if (n > size - 12)
		return calloc(1, 1);
	return strndup((const char *)data + 12, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	char *key;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size >= 16) {
		uint64_t sum = sym_cache_checksum(copy, size - 8);

		memcpy(copy + size - 8, &sum, sizeof(sum));
	}
	key = key_of(copy, size);
	if (key)
		(void)sym_cache_parse(copy, size, key);
	free(key);
	free(copy);
	return 0;
}
