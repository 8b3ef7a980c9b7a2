/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the session keeps per module, as the module's libdwfl userdata:
   its function symbols, sorted once so that each lookup is a binary search
   (libdwfl's own lookup scans the whole table: 50-250 us per address in a
   libc with debug symbols) and cut into disjoint ranges named the way
   Valgrind names them; and, for DWARF without .debug_aranges (clang's),
   which libdw 0.188 cannot search by address, the address ranges of its
   compilation units. */
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

/* The function symbols of a module as disjoint ranges, sorted. */
struct sym_symtab {
	struct sym_range *r;
	size_t n;
	bool built;
};

/* Addresses [LO, HI) belong to compilation unit CU. */
struct cu_range {
	uint64_t lo, hi;
	Dwarf_Die *cu; /* libdwfl's, valid while the module is reported */
};

struct sym_module {
	struct sym_symtab symtab;   /* built on the first name lookup */
	struct cu_range *cus;       /* built on the first failed CU lookup */
	size_t n_cus;
	bool cus_built;
	Dwarf_Addr cu_bias;
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
		/* Moved past its successor earlier in this pass: leave it
		   for the next round, after sorting. */
		if (a->start > b->start)
			continue;
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
static void
build_symtab(struct sym_symtab *t, Dwfl_Module *mod)
{
	int count = dwfl_module_getsymtab(mod);
	size_t cap = 0;

	t->built = true;
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
	if (t->n == 0)
		return;
	do {
		qsort(t->r, t->n, sizeof(*t->r), by_start_then_size);
		merge_aliases(t);
	} while (split_overlaps(t));
}

static int
by_lo(const void *pa, const void *pb)
{
	const struct cu_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

/* The address ranges of every compilation unit of MOD into M. Reads each
   unit's first DIE only; the line tables are left for when asked. */
static void
build_cus(struct sym_module *m, Dwfl_Module *mod)
{
	Dwarf_Die *cu = NULL;
	size_t cap = 0;

	m->cus_built = true;
	while ((cu = dwfl_module_nextcu(mod, cu, &m->cu_bias))) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		while ((off = dwarf_ranges(cu, off, &base, &lo, &hi)) > 0) {
			if (lo >= hi)
				continue;
			ht_xgrow((void **)&m->cus, &cap, m->n_cus + 1,
				 sizeof(*m->cus));
			m->cus[m->n_cus++] = (struct cu_range){ lo, hi, cu };
		}
	}
	if (m->n_cus)
		qsort(m->cus, m->n_cus, sizeof(*m->cus), by_lo);
}

void
sym_module_free(struct sym_module *m)
{
	if (!m)
		return;
	free(m->symtab.r);
	free(m->cus);
	free(m);
}

static struct sym_module *
module_of(Dwfl_Module *mod)
{
	void **userdata;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*userdata)
		*userdata = ht_xcalloc(1, sizeof(struct sym_module));
	return *userdata;
}

const char *
sym_module_function(Dwfl_Module *mod, uint64_t pc)
{
	struct sym_symtab *t = &module_of(mod)->symtab;
	size_t lo = 0, hi;

	if (!t->built)
		build_symtab(t, mod);
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

Dwarf_Die *
sym_module_cu(Dwfl_Module *mod, uint64_t pc, Dwarf_Addr *bias)
{
	struct sym_module *m;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, pc, bias);
	size_t lo = 0, hi;
	uint64_t addr;

	if (cu)
		return cu;
	m = module_of(mod);
	if (!m->cus_built)
		build_cus(m, mod);
	addr = pc - m->cu_bias;
	hi = m->n_cus;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->cus[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Ranges of different units do not overlap in sane DWARF; where they
	   do, the unit starting last before ADDR is taken. */
	if (lo == 0 || addr >= m->cus[lo - 1].hi)
		return NULL;
	*bias = m->cu_bias;
	return m->cus[lo - 1].cu;
}
