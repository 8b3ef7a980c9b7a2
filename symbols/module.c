/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the session keeps per module, as the module's libdwfl userdata:
   its function symbols, sorted once so that each lookup is a binary search
   (libdwfl's own lookup scans the whole table: 50-250 us per address in a
   libc with debug symbols) and cut into disjoint ranges named the way
   Valgrind names them; and, for DWARF without .debug_aranges (clang's),
   which libdw 0.188 cannot search by address, the address ranges of its
   compilation units; and the file names of the line tables asked for, as
   the tables record them. */
#include "module.h"

#include <dwarf.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "common/u64map.h"
#include "common/xalloc.h"

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

/* The sections a line table header refers to, of one Dwarf. */
struct line_sections {
	Dwarf *dbg;               /* whose sections these are; NULL: none yet */
	Elf_Data *line, *line_str, *str;
	bool msb;                 /* big-endian data */
};

/* One range of code of a subprogram of a unit, and the subprogram. */
struct fn_range {
	uint64_t lo, hi;
	uint64_t max_hi; /* the highest HI of this entry and those before */
	Dwarf_Die die;
	int level;
};

/* The subprograms with code of one unit, sorted by address. */
struct unit_fns {
	struct fn_range *r;
	size_t n;
	struct sym_fn_at *loose; /* inlined instances outside them */
	size_t n_loose;
};

struct sym_module {
	struct sym_symtab symtab;   /* built on the first name lookup */
	struct cu_range *cus;       /* built on the first failed CU lookup */
	size_t n_cus;
	bool cus_built;
	Dwarf_Addr cu_bias;
	struct line_sections secs;  /* of the last Dwarf asked about */
	struct u64map srcfiles;     /* .debug_line offset ->
				       struct sym_srcfiles * (owned) */
	struct u64map unit_fns;     /* unit DIE's address ->
				       struct unit_fns * (owned) */
	struct sym_cache *cache;    /* opened on the first look-up */
	bool cache_opened;
	Dwarf *stop_dbg;            /* whose STOP_AT is known; NULL: none */
	Dwarf_Off stop_at;          /* see sym_inline_readable */
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
	uint64_t key, val;

	if (!m)
		return;
	sym_cache_close(m->cache);
	for (size_t i = 0; u64map_next(&m->srcfiles, &i, &key, &val);) {
		struct sym_srcfiles *sf = (struct sym_srcfiles *)(uintptr_t)val;

		free(sf->names);
		free(sf);
	}
	u64map_fini(&m->srcfiles);
	for (size_t i = 0; u64map_next(&m->unit_fns, &i, &key, &val);) {
		struct unit_fns *u = (struct unit_fns *)(uintptr_t)val;

		free(u->r);
		free(u->loose);
		free(u);
	}
	u64map_fini(&m->unit_fns);
	free(m->symtab.r);
	free(m->cus);
	free(m);
}

static struct sym_module *
module_of(Dwfl_Module *mod)
{
	void **userdata;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*userdata) {
		struct sym_module *m = ht_xcalloc(1, sizeof(*m));

		u64map_init(&m->srcfiles);
		u64map_init(&m->unit_fns);
		*userdata = m;
	}
	return *userdata;
}

struct sym_cache *
sym_module_cache(Dwfl_Module *mod)
{
	struct sym_module *m = module_of(mod);

	if (!m->cache_opened) {
		m->cache_opened = true;
		m->cache = sym_cache_open(mod);
	}
	return m->cache;
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

/* The data of ELF's section NAME (decompressed), or NULL. */
static Elf_Data *
section_data(Elf *elf, size_t shstrndx, const char *name)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *n;

		if (!sh || sh->sh_type == SHT_NOBITS)
			continue;
		n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (!n || strcmp(n, name) != 0)
			continue;
		/* libdw decompresses the sections it opens in place; a
		   section it left alone is done here. */
		if ((sh->sh_flags & SHF_COMPRESSED) &&
		    elf_compress(scn, 0, 0) < 0)
			return NULL;
		return elf_getdata(scn, NULL);
	}
	return NULL;
}

/* S made to hold DBG's sections. */
static void
find_sections(struct line_sections *s, Dwarf *dbg)
{
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;

	memset(s, 0, sizeof(*s));
	s->dbg = dbg;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	s->msb = elf_getident(elf, NULL)[EI_DATA] == ELFDATA2MSB;
	s->line = section_data(elf, shstrndx, ".debug_line");
	s->line_str = section_data(elf, shstrndx, ".debug_line_str");
	s->str = section_data(elf, shstrndx, ".debug_str");
}

/* Reading a line table header: P up to END; BAD once anything ran past
   END or made no sense, after which every read gives 0. */
struct cursor {
	const uint8_t *p, *end;
	bool msb, bad;
};

static uint64_t
read_n(struct cursor *c, unsigned n)
{
	uint64_t v = 0;

	if (c->bad || (size_t)(c->end - c->p) < n) {
		c->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[c->msb ? n - 1 - i : i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t
read_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;

	while (!c->bad) {
		uint8_t b;

		if (c->p >= c->end) {
			c->bad = true;
			break;
		}
		b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
	return 0;
}

/* The NUL-terminated string at OFF in D, or NULL. */
static const char *
string_at(const Elf_Data *d, uint64_t off)
{
	const char *base;

	if (!d || !d->d_buf || off >= d->d_size)
		return NULL;
	base = (const char *)d->d_buf + off;
	return memchr(base, '\0', d->d_size - off) ? base : NULL;
}

/* The inline string at C, stepping past it; NULL when unterminated. */
static const char *
read_cstr(struct cursor *c)
{
	const uint8_t *nul;
	const char *s = (const char *)c->p;

	if (c->bad || !(nul = memchr(c->p, '\0', (size_t)(c->end - c->p)))) {
		c->bad = true;
		return NULL;
	}
	c->p = nul + 1;
	return s;
}

/* Read one DWARF 5 entry field of FORM at C: its string for the string
   forms, else NULL (skipped). OSZ: the unit's offset size. */
static const char *
read_form(struct cursor *c, uint64_t form, unsigned osz,
	  const struct line_sections *s)
{
	uint64_t n;

	switch (form) {
	case DW_FORM_string:
		return read_cstr(c);
	case DW_FORM_strp:
		n = read_n(c, osz);
		return c->bad ? NULL : string_at(s->str, n);
	case DW_FORM_line_strp:
		n = read_n(c, osz);
		return c->bad ? NULL : string_at(s->line_str, n);
	case DW_FORM_sec_offset:
		read_n(c, osz);
		return NULL;
	case DW_FORM_block:
		n = read_uleb(c);
		break;
	case DW_FORM_block1:
		n = read_n(c, 1);
		break;
	case DW_FORM_block2:
		n = read_n(c, 2);
		break;
	case DW_FORM_block4:
		n = read_n(c, 4);
		break;
	case DW_FORM_flag:
	case DW_FORM_data1:
	case DW_FORM_strx1:
		n = 1;
		break;
	case DW_FORM_data2:
	case DW_FORM_strx2:
		n = 2;
		break;
	case DW_FORM_strx3:
		n = 3;
		break;
	case DW_FORM_data4:
	case DW_FORM_strx4:
		n = 4;
		break;
	case DW_FORM_data8:
		n = 8;
		break;
	case DW_FORM_data16:
		n = 16;
		break;
	case DW_FORM_udata:
	case DW_FORM_sdata:
	case DW_FORM_strx:
		read_uleb(c); /* an sdata's bytes end the same way */
		return NULL;
	default:
		c->bad = true;
		return NULL;
	}
	if (c->bad || (uint64_t)(c->end - c->p) < n)
		c->bad = true;
	else
		c->p += n;
	return NULL;
}

static void
add_name(struct sym_srcfiles *sf, size_t *cap, const char *name)
{
	ht_xgrow((void **)&sf->names, cap, sf->n + 1, sizeof(*sf->names));
	sf->names[sf->n++] = name;
}

/* A DWARF 5 entry table (directories or file names) at C: the path of
   each entry added to SF when SF, else skipped. The path is the field
   the format names DW_LNCT_path (the first field when none does). */
static void
read_entries(struct cursor *c, unsigned osz, const struct line_sections *s,
	     struct sym_srcfiles *sf, size_t *cap)
{
	uint64_t forms[256];
	unsigned nfmt = (unsigned)read_n(c, 1), path = 0;
	uint64_t count;

	for (unsigned i = 0; i < nfmt; i++) {
		if (read_uleb(c) == DW_LNCT_path)
			path = i;
		forms[i] = read_uleb(c);
	}
	count = read_uleb(c);
	for (uint64_t e = 0; e < count && !c->bad; e++) {
		const char *name = NULL;

		for (unsigned i = 0; i < nfmt; i++) {
			const char *v = read_form(c, forms[i], osz, s);

			if (i == path)
				name = v;
		}
		if (sf && !c->bad)
			add_name(sf, cap, name);
	}
}

/* The file names of the line table header at OFF in S->line into SF. */
static void
read_srcfiles(struct sym_srcfiles *sf, const struct line_sections *s,
	      uint64_t off)
{
	struct cursor c = { .msb = s->msb };
	uint64_t len;
	unsigned osz = 4, opcode_base;
	size_t cap = 0;

	if (!s->line || !s->line->d_buf || off >= s->line->d_size)
		return;
	c.p = (const uint8_t *)s->line->d_buf + off;
	c.end = (const uint8_t *)s->line->d_buf + s->line->d_size;
	len = read_n(&c, 4);
	if (len == 0xffffffff) {
		len = read_n(&c, 8);
		osz = 8;
	}
	if (c.bad || len > (uint64_t)(c.end - c.p))
		return;
	c.end = c.p + len;
	sf->version = (unsigned)read_n(&c, 2);
	if (sf->version < 2 || sf->version > 5)
		return;
	if (sf->version >= 5)
		read_n(&c, 2); /* address size, segment selector size */
	read_n(&c, osz);      /* header length */
	read_n(&c, sf->version >= 4 ? 5 : 4); /* up to line_range */
	opcode_base = (unsigned)read_n(&c, 1);
	for (unsigned i = 1; i < opcode_base; i++) /* standard_opcode_lengths */
		read_n(&c, 1);
	if (sf->version >= 5) {
		read_entries(&c, osz, s, NULL, NULL);
		read_entries(&c, osz, s, sf, &cap);
		return;
	}
	/* DWARF 2-4 count the files from 1. */
	add_name(sf, &cap, NULL);
	while (!c.bad && c.p < c.end && *c.p) /* the directories */
		read_cstr(&c);
	read_n(&c, 1);
	while (!c.bad && c.p < c.end && *c.p) {
		const char *name = read_cstr(&c);

		read_uleb(&c); /* directory, time, size */
		read_uleb(&c);
		read_uleb(&c);
		if (!c.bad)
			add_name(sf, &cap, name);
	}
}

const struct sym_srcfiles *
sym_module_srcfiles(Dwfl_Module *mod, Dwarf_Die *cu)
{
	struct sym_module *m = module_of(mod);
	Dwarf *dbg = dwarf_cu_getdwarf(cu->cu);
	Dwarf_Attribute attr;
	Dwarf_Word off;
	struct sym_srcfiles *sf;
	uint64_t *slot;
	bool fresh;

	if (!dbg || !dwarf_attr(cu, DW_AT_stmt_list, &attr) ||
	    dwarf_formudata(&attr, &off) != 0)
		return NULL;
	slot = u64map_slot(&m->srcfiles, off, &fresh);
	if (!fresh) {
		sf = (struct sym_srcfiles *)(uintptr_t)*slot;
		/* Tables are kept for one Dwarf of the module, its first
		   asked about (the only one with line tables in practice). */
		return sf->dbg == dbg ? sf : NULL;
	}
	if (m->secs.dbg != dbg)
		find_sections(&m->secs, dbg);
	sf = ht_xcalloc(1, sizeof(*sf));
	sf->dbg = dbg;
	read_srcfiles(sf, &m->secs, off);
	*slot = (uint64_t)(uintptr_t)sf;
	return sf;
}

static bool
has_code(Dwarf_Die *die)
{
	return dwarf_hasattr(die, DW_AT_low_pc) ||
	       dwarf_hasattr(die, DW_AT_ranges);
}

/* Add to U the subprograms with code below PARENT (at depth LEVEL), looking
   where sym_fns_at's callers look for inlined instances (module.h); an
   inlined instance met outside such a subprogram goes to U's loose ones
   (code of its own, in no function: not met in practice). */
static void
collect_fns(struct unit_fns *u, size_t *cap, size_t *loose_cap,
	    Dwarf_Die *parent, int level)
{
	Dwarf_Die child;

	if (dwarf_child(parent, &child) != 0)
		return;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			if (!has_code(&child))
				break;
			while ((off = dwarf_ranges(&child, off, &base, &lo,
						   &hi)) > 0) {
				if (lo >= hi)
					continue;
				ht_xgrow((void **)&u->r, cap, u->n + 1,
					 sizeof(*u->r));
				u->r[u->n++] = (struct fn_range){
					.lo = lo, .hi = hi, .die = child,
					.level = level + 1 };
			}
			continue;
		case DW_TAG_inlined_subroutine:
			ht_xgrow((void **)&u->loose, loose_cap, u->n_loose + 1,
				 sizeof(*u->loose));
			u->loose[u->n_loose++] =
				(struct sym_fn_at){ child, level + 1 };
			continue;
		case DW_TAG_namespace:
		case DW_TAG_lexical_block:
			break;
		default:
			continue;
		}
		if (dwarf_haschildren(&child))
			collect_fns(u, cap, loose_cap, &child, level + 1);
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int
by_range_lo(const void *pa, const void *pb)
{
	const struct fn_range *a = pa, *b = pb;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return 0;
}

static struct unit_fns *
unit_fns_of(struct sym_module *m, Dwarf_Die *cu)
{
	struct unit_fns *u;
	size_t cap = 0, loose_cap = 0;
	uint64_t *slot;
	bool fresh;

	slot = u64map_slot(&m->unit_fns, (uint64_t)(uintptr_t)cu->addr,
			   &fresh);
	if (!fresh)
		return (struct unit_fns *)(uintptr_t)*slot;
	u = ht_xcalloc(1, sizeof(*u));
	*slot = (uint64_t)(uintptr_t)u;
	collect_fns(u, &cap, &loose_cap, cu, 0);
	if (u->n)
		qsort(u->r, u->n, sizeof(*u->r), by_range_lo);
	for (size_t i = 0; i < u->n; i++)
		u->r[i].max_hi = i && u->r[i - 1].max_hi > u->r[i].hi
					 ? u->r[i - 1].max_hi
					 : u->r[i].hi;
	return u;
}

size_t
sym_fns_at(Dwfl_Module *mod, Dwarf_Die *cu, Dwarf_Addr addr,
	   struct sym_fn_at **out)
{
	struct unit_fns *u = unit_fns_of(module_of(mod), cu);
	size_t lo = 0, hi = u->n, n = 0;

	*out = NULL;
	/* The last range starting at or before ADDR, then back for as long
	   as a range before can reach ADDR. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (u->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && u->r[i - 1].max_hi > addr; i--) {
		if (u->r[i - 1].hi <= addr)
			continue;
		*out = ht_xreallocarray(*out, n + 1, sizeof(**out));
		(*out)[n++] = (struct sym_fn_at){ u->r[i - 1].die,
						  u->r[i - 1].level };
	}
	for (size_t i = 0; i < u->n_loose; i++) {
		*out = ht_xreallocarray(*out, n + 1, sizeof(**out));
		(*out)[n++] = u->loose[i];
	}
	return n;
}

/* Whether Valgrind 3.19's DIE reader can size an attribute of FORM. It
   gives up on the first unit whose abbreviations hold any other (DWARF 5's
   strx, addrx, loclistx and rnglistx forms among them: clang's default). */
static bool
form_known(unsigned form)
{
	switch (form) {
	case DW_FORM_data1: case DW_FORM_data2: case DW_FORM_data4:
	case DW_FORM_data8: case DW_FORM_data16: case DW_FORM_sec_offset:
	case DW_FORM_sdata: case DW_FORM_udata: case DW_FORM_addr:
	case DW_FORM_ref_addr: case DW_FORM_strp: case DW_FORM_line_strp:
	case DW_FORM_string: case DW_FORM_ref1: case DW_FORM_ref2:
	case DW_FORM_ref4: case DW_FORM_ref8: case DW_FORM_ref_udata:
	case DW_FORM_flag: case DW_FORM_flag_present: case DW_FORM_block1:
	case DW_FORM_block2: case DW_FORM_block4: case DW_FORM_exprloc:
	case DW_FORM_block: case DW_FORM_ref_sig8: case DW_FORM_indirect:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
	case DW_FORM_implicit_const:
		return true;
	default:
		return false;
	}
}

/* Whether every abbreviation of the unit of CUDIE has forms form_known. */
static bool
abbrevs_known(Dwarf_Die *cudie)
{
	Dwarf_Abbrev *ab;
	size_t off = 0, len, cnt;

	while ((ab = dwarf_getabbrev(cudie, off, &len)) &&
	       ab != DWARF_END_ABBREV && len > 0) {
		if (dwarf_getattrcnt(ab, &cnt) != 0)
			return true;
		for (size_t i = 0; i < cnt; i++) {
			unsigned int name, form;
			Dwarf_Sword data;
			Dwarf_Off aoff;

			if (dwarf_getabbrevattr_data(ab, i, &name, &form,
						     &data, &aoff) != 0)
				break;
			if (!form_known(form))
				return false;
		}
		off += len;
	}
	return true;
}

bool
sym_inline_readable(Dwfl_Module *mod, Dwarf_Die *cu)
{
	struct sym_module *m = module_of(mod);
	Dwarf *dbg = dwarf_cu_getdwarf(cu->cu);
	Dwarf_Off off = 0, next;
	size_t hsize;

	if (!dbg)
		return true;
	if (m->stop_dbg != dbg) {
		/* The module's own DWARF: its answer is kept in the symbol
		   cache, since finding it reads every unit's abbreviations
		   (5-8 ms for a libc with its debug file), which a sampled
		   run meeting one new frame paid again each time. */
		Dwarf_Addr bias;
		bool own = dwfl_module_getdwarf(mod, &bias) == dbg;
		struct sym_cache *c = own ? sym_module_cache(mod) : NULL;
		uint64_t kept;

		m->stop_dbg = dbg;
		m->stop_at = (Dwarf_Off)-1;
		if (sym_cache_stop_at(c, &kept)) {
			m->stop_at = (Dwarf_Off)kept;
			return dwarf_dieoffset(cu) < m->stop_at;
		}
		while (dwarf_next_unit(dbg, off, &next, &hsize, NULL, NULL,
				       NULL, NULL, NULL, NULL) == 0) {
			Dwarf_Die cudie;

			if (dwarf_offdie(dbg, off + hsize, &cudie) &&
			    !abbrevs_known(&cudie)) {
				m->stop_at = off;
				break;
			}
			off = next;
		}
		sym_cache_put_stop_at(c, (uint64_t)m->stop_at);
	}
	return dwarf_dieoffset(cu) < m->stop_at;
}
