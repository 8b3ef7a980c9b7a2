/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The memo of spliced stacks (tracer/inline/pymemo.h): a stack put is got
   back for exactly its key (the same native addresses and Python words,
   in the same split), never for another, and not after a clear; keys and
   stacks too long are not remembered; a slot taken by another key gives
   the new one. */
#include <stdbool.h>
#include <string.h>

#include "tests/check.h"
#include "tracer/inline/pymemo.h"
#include "tracer/python/pyword.h"

#define MAX_PCS 8

static bool
got(struct py_memo *m, const uint64_t *pcs, unsigned npcs,
    const uint64_t *words, unsigned nwords, const uint64_t *want,
    unsigned nwant)
{
	unsigned n = 0;
	const uint64_t *s = py_memo_get(m, pcs, npcs, words, nwords, &n);
	if (!want)
		return s == NULL;
	return s && n == nwant && !memcmp(s, want, n * sizeof(*s));
}

int
main(void)
{
	struct py_memo *m = py_memo_new(MAX_PCS);
	uint64_t pcs[] = { 0x401000, 0x401100, 0x402000 };
	uint64_t words[] = { py_word_make(0x7f0000001000, 3, 0),
			     py_word_make(0x7f0000002000, 9, 1) };
	uint64_t out[] = { 0x401000, 0xfff5000000000001, 0xfff5000000000002,
			   0x402000 };

	CHECK(got(m, pcs, 3, words, 2, NULL, 0), "empty");
	py_memo_put(m, pcs, 3, words, 2, out, 4);
	CHECK(got(m, pcs, 3, words, 2, out, 4), "put, got");
	/* The same words split otherwise, one word more or less, another
	   index: other keys. */
	uint64_t all[] = { pcs[0], pcs[1], pcs[2], words[0], words[1] };
	CHECK(got(m, all, 4, all + 4, 1, NULL, 0), "split elsewhere");
	CHECK(got(m, pcs, 3, words, 1, NULL, 0), "a word less");
	CHECK(got(m, pcs, 2, words, 2, NULL, 0), "an address less");
	uint64_t other[] = { words[0], py_word_make(0x7f0000002000, 10, 1) };
	CHECK(got(m, pcs, 3, other, 2, NULL, 0), "another index");
	py_memo_clear(m);
	CHECK(got(m, pcs, 3, words, 2, NULL, 0), "cleared");

	/* Many keys: each got back as put, or not at all. */
	unsigned back = 0;
	for (uint64_t k = 0; k < 500; k++) {
		uint64_t p[] = { 0x401000, 0x500000 + k };
		uint64_t o[] = { 0x401000, 0xfff5000000000000 | k };
		py_memo_put(m, p, 2, words, 2, o, 2);
		CHECK(got(m, p, 2, words, 2, o, 2), "key %llu just put",
		      (unsigned long long)k);
	}
	for (uint64_t k = 0; k < 500; k++) {
		uint64_t p[] = { 0x401000, 0x500000 + k };
		uint64_t o[] = { 0x401000, 0xfff5000000000000 | k };
		unsigned n;
		const uint64_t *s = py_memo_get(m, p, 2, words, 2, &n);
		if (s) {
			back++;
			CHECK(n == 2 && !memcmp(s, o, sizeof(o)),
			      "key %llu: another's stack",
			      (unsigned long long)k);
		}
	}
	CHECK(back > 0 && back < 500, "%u of 500 remembered", back);

	/* Too long to remember. */
	uint64_t longk[MAX_PCS + 1] = { 0 };
	py_memo_put(m, longk, MAX_PCS + 1, words, 2, out, 4);
	CHECK(got(m, longk, MAX_PCS + 1, words, 2, NULL, 0), "key too long");
	uint64_t longo[MAX_PCS + 1] = { 0 };
	py_memo_put(m, pcs, 3, words, 2, longo, MAX_PCS + 1);
	CHECK(got(m, pcs, 3, words, 2, NULL, 0), "stack too long");
	py_memo_free(m);
	py_memo_free(NULL);
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
