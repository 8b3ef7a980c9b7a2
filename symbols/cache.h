/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What one module's code addresses resolved to, and its unwinding rules,
   kept on disk between runs, so that a program run again (the same
   libraries, the same heaptrace) costs no debug-information reading at
   all. A cache holds for the exact files it was made from: it is found by
   the module's build-id and the identity of its file, its debug file and
   heaptrace's own binary, and ignored as soon as any of them differs.
   Nothing outside symbols/ includes this. */
#ifndef HT_SYMBOLS_CACHE_H
#define HT_SYMBOLS_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <elfutils/libdwfl.h>

struct sym_frame;
struct sym_rule;
struct sym_cache;

/* The cache of MOD (empty when the directory holds none that fits its
   files); NULL when caching is off or MOD cannot be told apart from a
   rebuilt one (no build-id, no file). */
struct sym_cache *sym_cache_open(Dwfl_Module *mod);
/* Write what C learnt this run to disk, merged with what other runs wrote
   meanwhile (atomically: readers see the old file or the new one), then
   free C. NULL is a no-op. */
void sym_cache_close(struct sym_cache *c);

/* The bytes DATA (LEN of them) read as a cache file made for a module
   whose key is KEY, the way sym_cache_open reads one, into a cache freed
   at once: for the fuzzer (fuzz/symcache.c). Returns the number of
   entries (frames and rules) they held, or -1 when they are not a whole
   cache for KEY. */
long sym_cache_parse(const void *data, size_t len, const char *key);

/* The checksum a cache file ends with, of its LEN bytes DATA before it
   (for tools that write or mend cache files: fuzz/). */
uint64_t sym_cache_checksum(const void *data, size_t len);

/* The frame kept for OFF (an address minus the module's start), or NULL.
   Its LINES may be NULL (only its name was needed so far). Valid until
   the next sym_cache_put_frame for OFF or sym_cache_close. */
const struct sym_frame *sym_cache_frame(const struct sym_cache *c,
					uint64_t off);
/* Keep a copy of F for OFF, replacing what was kept. */
void sym_cache_put_frame(struct sym_cache *c, uint64_t off,
			 const struct sym_frame *f);
/* The rule kept for lookup offset OFF into *OUT; false when none is. */
bool sym_cache_rule(const struct sym_cache *c, uint64_t off,
		    struct sym_rule *out);
/* Keep a copy of RU for lookup offset OFF. */
void sym_cache_put_rule(struct sym_cache *c, uint64_t off,
			const struct sym_rule *ru);

/* Call FN with every lookup offset C holds a rule for. */
void sym_cache_rule_offsets(const struct sym_cache *c,
			    void (*fn)(void *ctx, uint64_t off), void *ctx);

/* The offset of the first unit of the module's own DWARF whose
   abbreviations Valgrind's reader cannot size (sym_inline_readable;
   UINT64_MAX: none), into *OUT; false when C does not know it. */
bool sym_cache_stop_at(const struct sym_cache *c, uint64_t *out);
/* Keep AT as that offset. NULL is a no-op. */
void sym_cache_put_stop_at(struct sym_cache *c, uint64_t at);

#endif
