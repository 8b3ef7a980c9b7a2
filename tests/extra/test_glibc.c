/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Checks the glibc model's size rules against this process's own malloc:
   the chunk size glibc writes in the word before each block. Runs only on
   x86-64 glibc 2.36 (Debian 12), the version the rules were written for,
   and not under a sanitizer, whose allocator replaces glibc's (exit 77,
   skipped, otherwise). Blocks are never freed before the end, so each comes
   fresh from the top of the heap or from a mapping, where the rules are
   exact; reuse of freed chunks is not modelled. */
#include "snapshot/extra.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <gnu/libc-version.h>
#endif

#include "common/options.h"
#include "snapshot/extra_priv.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define UNDER_SANITIZER 1
#endif

#define MAX_KEPT 20000

static void *kept[MAX_KEPT];
static int n_kept, failures, checked;

/* The size word before the block, flags masked. The empty asm hides where
   the pointer came from: to the compiler, the word lies outside the object
   malloc returned. */
static uint64_t
chunk_size(void *p)
{
	const size_t *word;

	__asm__("" : "+r"(p));
	word = (const size_t *)p - 1;
	return *word & ~(size_t)7;
}

static void
keep(void *p)
{
	if (n_kept < MAX_KEPT)
		kept[n_kept++] = p;
}

/* Compare what the model says for a block of REQ bytes with the real
   chunk size CHUNK. SLACK allows the 16 or 32 bytes _int_memalign leaves at the
   tail of a heap chunk when too little was left to split. */
static void
compare(const char *what, uint64_t req, uint64_t model_extra, uint64_t chunk,
	uint64_t slack)
{
	uint64_t real = chunk - req;

	checked++;
	if (real < model_extra || real > model_extra + slack) {
		fprintf(stderr, "%s(%" PRIu64 "): model extra %" PRIu64
			", real chunk %" PRIu64 "\n", what, req, model_extra,
			chunk);
		failures++;
	}
}

static void
check_malloc(struct snap_extra *x, uint64_t n)
{
	struct snap_extra_block b;
	void *p = malloc(n);

	snap_extra_alloc(x, n, 0, 0, &b);
	compare("malloc", n, b.extra, chunk_size(p), 0);
	keep(p);
}

static void
check_memalign(struct snap_extra *x, uint64_t a, uint64_t n, uint64_t slack)
{
	struct snap_extra_block b;
	void *p = memalign(a, n);

	snap_extra_alloc(x, n, a, 0, &b);
	compare("memalign", n, b.extra, chunk_size(p), slack);
	keep(p);
}

static void
check_realloc(struct snap_extra *x, uint64_t n0, uint64_t n1)
{
	struct snap_extra_block b;
	void *p = malloc(n0);

	snap_extra_alloc(x, n0, 0, 0, &b);
	p = realloc(p, n1);
	snap_extra_realloc(x, &b, n0, n1, 0);
	compare("realloc", n1, b.extra, chunk_size(p), 0);
	keep(p);
}

/* Why this process's malloc is not the one the rules describe, or NULL. */
static const char *
skip_reason(void)
{
#if defined(UNDER_SANITIZER)
	return "a sanitizer replaces glibc's malloc";
#elif !defined(__x86_64__)
	return "the rules are for x86-64";
#elif !defined(__GLIBC__)
	return "the rules are for glibc";
#else
	if (strcmp(gnu_get_libc_version(), "2.36"))
		return "the rules are for glibc 2.36";
	return NULL;
#endif
}

int
main(void)
{
	struct ht_options opt;
	struct snap_extra *x;
	const char *skip = skip_reason();

	if (skip) {
		printf("skipped: %s\n", skip);
		return 77;
	}
	memset(&opt, 0, sizeof(opt));
	opt.heap_admin = 8;
	opt.alignment = 16;
	x = snap_extra_new(SNAP_EXTRA_GLIBC, &opt);

	/* Heap chunks, fresh from the top. */
	for (uint64_t n = 0; n <= 5000; n++)
		check_malloc(x, n);
	/* Mapped chunks: well above the threshold, so that the top (at most
	   the 128 KiB pad plus a page here) cannot serve them. */
	for (uint64_t n = 140000; n < 3000000; n += 77777)
		check_malloc(x, n);
	/* Aligned chunks on the heap, and mapped ones up to a page (above,
	   the lead depends on the mapping's address). */
	for (uint64_t a = 32; a <= 4096; a *= 2) {
		for (uint64_t n = 0; n < 3000; n += 37)
			check_memalign(x, a, n, 32);
		for (uint64_t n = 140000; n < 1000000; n += 99991)
			check_memalign(x, a, n, 0);
	}
	/* Realloc of heap chunks in place, and of mapped chunks. */
	for (uint64_t n = 24; n < 2000; n += 13) {
		check_realloc(x, n, n - 10);
		check_realloc(x, n, n / 2);
	}
	check_realloc(x, 200000, 10);
	check_realloc(x, 200000, 300000);
	check_realloc(x, 300000, 150000);

	/* The dynamic threshold: a freed 400 KB mapping lifts it, the next
	   400 KB block comes from the heap. */
	struct snap_extra_block b;
	void *p = malloc(400000);

	snap_extra_alloc(x, 400000, 0, 0, &b);
	compare("malloc", 400000, b.extra, chunk_size(p), 0);
	free(p);
	snap_extra_release(x, &b);
	check_malloc(x, 400000);

	for (int i = 0; i < n_kept; i++)
		free(kept[i]);
	snap_extra_free(x);
	printf("%d chunk sizes checked, %d wrong\n", checked, failures);
	return failures ? 1 : 0;
}
