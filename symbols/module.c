/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Function symbols of one module, sorted once so that each lookup is a
   binary search (libdwfl's own lookup scans the whole table: 50-250 us per
   address in a libc with debug symbols), and cut into disjoint ranges with
   one name each, chosen among aliases the way Valgrind chooses, so names
   match Massif's. */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "sym_priv.h"

/* One range of code and its name. NAME points into the module's ELF
   string table, valid while the module is reported. */
struct sym_range {
	uint64_t start;
	uint64_t size;
	const char *name;
};

struct sym_symtab {
	struct sym_range *r;
	size_t n;
};

/* Length of NAME without its symbol version ("malloc@@GLIBC_2.2.5"). */
static size_t
base_len(const char *name)
{
	return strcspn(name, "@");
}

/* Whether A is preferred to B as the name of one range, as Valgrind
   decides: an MPI profiling alias, then the shorter name ignoring the
   version, then the one with a version, then the first in byte order. */
static bool
prefer(const char *a, const char *b)
{
	size_t la = base_len(a), lb = base_len(b);
	bool va = a[la] != '\0', vb = b[lb] != '\0';

	if (strncmp(a, "MPI_", 4) == 0 && strncmp(b, "PMPI_", 5) == 0 &&
	    strcmp(a, b + 1) == 0)
		return false;
	if (strncmp(b, "MPI_", 4) == 0 && strncmp(a, "PMPI_", 5) == 0 &&
	    strcmp(b, a + 1) == 0)
		return true;
	if (la != lb)
		return la < lb;
	if (va != vb)
		return va;
	return strcmp(a, b) <= 0;
}

static int
by_start_then_size(const void *pa, const void *pb)
{
	const struct sym_range *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->size != b->size)
		return a->size < b->size ? -1 : 1;
	return 0;
}

/* Merge entries of T with the same range into one with the preferred
   name. T is sorted. */
static void
merge_aliases(struct sym_symtab *t)
{
	size_t w = 0;

	for (size_t i = 0; i < t->n; i++) {
		struct sym_range *last = w ? &t->r[w - 1] : NULL;

		if (last && last->start == t->r[i].start &&
		    last->size == t->r[i].size) {
			if (!prefer(last->name, t->r[i].name))
				last->name = t->r[i].name;
			continue;
		}
		t->r[w++] = t->r[i];
	}
	t->n = w;
}

/* Make T's ranges disjoint, the inner symbol winning where two overlap:
   the first of two is cut where the second starts, and of two starting
   together the longer one keeps only what lies past the shorter. Returns
   whether anything changed (T then needs sorting again). */
static bool
split_overlaps(struct sym_symtab *t)
{
	bool changed = false;

	for (size_t i = 0; i + 1 < t->n; i++) {
		struct sym_range *a = &t->r[i], *b = &t->r[i + 1];

		if (a->start + a->size <= b->start)
			continue;
		changed = true;
		if (a->start < b->start) {
			a->size = b->start - a->start;
		} else if (b->start + b->size > a->start + a->size) {
			/* Sorted by size: B is the longer one. */
			b->size -= a->size;
			b->start += a->size;
		}
	}
	return changed;
}

/* Every defined function symbol of MOD that has a size, as ranges. Symbols
   without a size would need guessing where they end, which Valgrind does
   not do either. */
static struct sym_symtab *
build(Dwfl_Module *mod)
{
	struct sym_symtab *t = ht_xcalloc(1, sizeof(*t));
	int count = dwfl_module_getsymtab(mod);
	size_t cap = 0;

	for (int i = 1; i < count; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr,
							   &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		if (!name || !*name || sym.st_size == 0 ||
		    shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		ht_xgrow((void **)&t->r, &cap, t->n + 1, sizeof(*t->r));
		t->r[t->n++] = (struct sym_range){ addr, sym.st_size, name };
	}
	/* Cutting ranges can make new equal ones and unsort the table;
	   repeat until stable (one or two rounds in practice). */
	do {
		qsort(t->r, t->n, sizeof(*t->r), by_start_then_size);
		merge_aliases(t);
	} while (split_overlaps(t));
	return t;
}

void
sym_symtab_free(struct sym_symtab *t)
{
	if (!t)
		return;
	free(t->r);
	free(t);
}

const char *
sym_symtab_lookup(Dwfl_Module *mod, uint64_t pc)
{
	void **userdata;
	struct sym_symtab *t;
	size_t lo = 0, hi;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*userdata)
		*userdata = build(mod);
	t = *userdata;
	/* The last range starting at or before PC. */
	hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->r[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || pc - t->r[lo - 1].start >= t->r[lo - 1].size)
		return NULL;
	return t->r[lo - 1].name;
}
