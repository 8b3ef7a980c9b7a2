/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ELF symbol lookup with libelf: an open object keeps its file, its PT_LOAD
   headers and where its .dynsym (with .gnu.version) and .symtab are, and
   answers name lookups from a hash index of each table, built on the
   first lookup. Probing asks an object for some forty names (the malloc
   family, C++'s twenty operators, other allocators' and Python's), most
   of them absent: scanning libc's 3000 symbols for each was a tenth of a
   cached `heaptrace run ls /`, and node's 182,000 for each 66 ms (sorting
   them by name instead cost 100 ms). */
#include "tracer/target/elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"

/* One symbol table and, for .dynsym, its version indexes. */
struct symtab {
	Elf_Data *syms;
	size_t count;
	size_t strndx;       /* section of the names */
	Elf_Data *versym;    /* NULL: every symbol has the default version */
	/* A hash index by base name (without @VERSION), built on the first
	   lookup: BUCKETS[hash & MASK] is a bucket's first symbol, CHAIN[i]
	   the next after symbol I (0 ends a chain: symbol 0 is no symbol). */
	uint32_t *buckets, *chain;
	uint32_t mask;
	bool indexed;
};

struct elf_object {
	int fd;
	Elf *elf;
	uint16_t type;       /* e_type */
	uint64_t entry;
	bool interp;
	GElf_Phdr *loads;    /* the PT_LOAD headers, in file order */
	size_t nloads;
	struct symtab dynsym, symtab;
};

static void
load_phdrs(struct elf_object *obj)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(obj->elf, &n) != 0)
		return;
	obj->loads = ht_xcalloc(n ? n : 1, sizeof(*obj->loads));
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(obj->elf, (int)i, &ph))
			continue;
		if (ph.p_type == PT_INTERP)
			obj->interp = true;
		else if (ph.p_type == PT_LOAD)
			obj->loads[obj->nloads++] = ph;
	}
}

static void
load_symtab(struct symtab *t, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);

	if (!data || sh->sh_entsize == 0 || t->syms)
		return;
	t->syms = data;
	t->count = sh->sh_size / sh->sh_entsize;
	t->strndx = sh->sh_link;
}

/* Find .dynsym, .symtab and .gnu.version. The version section is kept
   only if it has one entry per .dynsym symbol, as the format requires. */
static void
load_sections(struct elf_object *obj)
{
	Elf_Scn *scn = NULL, *versym = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(obj->elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_DYNSYM)
			load_symtab(&obj->dynsym, scn, &sh);
		else if (sh.sh_type == SHT_SYMTAB)
			load_symtab(&obj->symtab, scn, &sh);
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
	}
	if (versym && obj->dynsym.syms) {
		Elf_Data *data = elf_getdata(versym, NULL);

		if (data && data->d_size / sizeof(GElf_Versym) ==
				    obj->dynsym.count)
			obj->dynsym.versym = data;
	}
}

struct elf_object *
elf_object_open(const char *path)
{
	struct elf_object *obj;
	struct stat st;
	GElf_Ehdr eh;
	int fd, saved;

	if (elf_version(EV_CURRENT) == EV_NONE) {
		errno = ENOSYS;
		return NULL;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		saved = errno;
	else if (!S_ISREG(st.st_mode))
		saved = S_ISDIR(st.st_mode) ? EISDIR : ENOEXEC;
	else
		saved = 0;
	if (saved) {
		close(fd);
		errno = saved;
		return NULL;
	}
	obj = ht_xcalloc(1, sizeof(*obj));
	obj->fd = fd;
	obj->elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!obj->elf || elf_kind(obj->elf) != ELF_K_ELF ||
	    !gelf_getehdr(obj->elf, &eh)) {
		elf_object_close(obj);
		errno = ENOEXEC;
		return NULL;
	}
	obj->type = eh.e_type;
	obj->entry = eh.e_entry;
	load_phdrs(obj);
	load_sections(obj);
	return obj;
}

void
elf_object_close(struct elf_object *obj)
{
	if (!obj)
		return;
	if (obj->elf)
		elf_end(obj->elf);
	close(obj->fd);
	free(obj->loads);
	free(obj->dynsym.buckets);
	free(obj->dynsym.chain);
	free(obj->symtab.buckets);
	free(obj->symtab.chain);
	free(obj);
}

bool
elf_object_is_dyn(const struct elf_object *obj)
{
	return obj->type == ET_DYN;
}

bool
elf_object_has_interp(const struct elf_object *obj)
{
	return obj->interp;
}

/* How well NAMED matches the wanted base name NAME: 0 not at all, else
   higher is better. In .symtab a version may be spelled into the name
   (name@V hidden, name@@V default); in .dynsym it is in .gnu.version. */
static int
name_rank(const char *named, const char *name, size_t namelen,
	  bool hidden)
{
	if (strncmp(named, name, namelen) != 0)
		return 0;
	named += namelen;
	if (named[0] == '@')
		hidden = named[1] != '@';
	else if (named[0] != '\0')
		return 0;
	return hidden ? 1 : 2;
}

/* The rank of symbol I of table T as a definition of NAME, 0 if it is
   not one; the best rank comes first, then global or weak binding. */
static int
sym_rank(const struct elf_object *obj, const struct symtab *t, size_t i,
	 const char *name, size_t namelen, bool object, GElf_Sym *sym)
{
	GElf_Versym ver = 1;
	int type, rank;
	const char *named;

	if (!gelf_getsym(t->syms, (int)i, sym) || sym->st_shndx == SHN_UNDEF)
		return 0;
	type = GELF_ST_TYPE(sym->st_info);
	if (object ? type != STT_OBJECT
		   : type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	named = elf_strptr(obj->elf, t->strndx, sym->st_name);
	if (!named)
		return 0;
	if (t->versym && !gelf_getversym(t->versym, (int)i, &ver))
		return 0;
	/* VER_NDX_LOCAL: reduced to local by a version script, not bound by
	   ld.so from outside. */
	if ((ver & 0x7fff) == VER_NDX_LOCAL && t->versym)
		return 0;
	rank = name_rank(named, name, namelen, ver & 0x8000);
	if (!rank)
		return 0;
	return rank * 2 + (GELF_ST_BIND(sym->st_info) != STB_LOCAL);
}

/* Symbol I's name in T, "" when it has none. */
static const char *
sym_name(const struct elf_object *obj, const struct symtab *t, size_t i)
{
	GElf_Sym sym;
	const char *named;

	if (!gelf_getsym(t->syms, (int)i, &sym))
		return "";
	named = elf_strptr(obj->elf, t->strndx, sym.st_name);
	return named ? named : "";
}

/* A and B compared as base names: up to their '@' or end. */
static bool
same_base(const char *a, const char *b)
{
	for (;; a++, b++) {
		char ca = *a == '@' ? 0 : *a, cb = *b == '@' ? 0 : *b;

		if (ca != cb)
			return false;
		if (!ca)
			return true;
	}
}

/* FNV-1a of NAME's base name. */
static uint32_t
base_hash(const char *name)
{
	uint32_t h = 2166136261u;

	for (; *name && *name != '@'; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

/* Build T's hash index of names: a bucket's chain lists its symbols in
   index order, so that ties go as in a scan of the whole table. */
static void
index_names(const struct elf_object *obj, struct symtab *t)
{
	size_t n = t->count < INT_MAX ? t->count : INT_MAX;
	size_t cap = 16;

	t->indexed = true;
	while (cap < 2 * n)
		cap *= 2;
	t->buckets = ht_xcalloc(cap, sizeof(*t->buckets));
	t->chain = ht_xcalloc(n ? n : 1, sizeof(*t->chain));
	t->mask = cap - 1;
	/* Backwards, each pushed in front: chains come out in index order. */
	for (size_t i = n; i-- > 1;) {
		const char *name = sym_name(obj, t, i);
		uint32_t *head;

		if (!*name)
			continue;
		head = &t->buckets[base_hash(name) & t->mask];
		t->chain[i] = *head;
		*head = (uint32_t)i;
	}
}

/* The best definition of NAME in T: its versions, in index order, are
   next to each other in the index (a first one wins a tie, as in a scan
   of the whole table). */
static int
find_in(const struct elf_object *obj, struct symtab *t, const char *name,
	bool object, struct elf_symbol *out)
{
	size_t namelen = strlen(name);
	int best = 0;
	GElf_Sym sym, bsym = { 0 };

	if (!t->syms)
		return -ENOENT;
	if (!t->indexed)
		index_names(obj, t);
	for (uint32_t i = t->buckets[base_hash(name) & t->mask]; i;
	     i = t->chain[i]) {
		if (!same_base(sym_name(obj, t, i), name))
			continue;
		int r = sym_rank(obj, t, i, name, namelen, object, &sym);

		if (r > best) {
			best = r;
			bsym = sym;
		}
	}
	if (!best)
		return -ENOENT;
	out->vaddr = bsym.st_value;
	out->size = bsym.st_size;
	out->ifunc = GELF_ST_TYPE(bsym.st_info) == STT_GNU_IFUNC;
	out->dynamic = t == &obj->dynsym;
	return 0;
}

/* elf_object_find for functions (OBJECT false) or data objects. */
static int
find_kind(const struct elf_object *obj, const char *name, bool object,
	  struct elf_symbol *out)
{
	/* Versions are chosen here, not named by the caller. */
	if (!name[0] || strchr(name, '@'))
		return -ENOENT;
	/* The index is a cache: building it changes no answer. */
	struct elf_object *o = (struct elf_object *)obj;

	if (find_in(obj, &o->dynsym, name, object, out) == 0)
		return 0;
	return find_in(obj, &o->symtab, name, object, out);
}

int
elf_object_find(const struct elf_object *obj, const char *name,
		struct elf_symbol *out)
{
	return find_kind(obj, name, false, out);
}

int
elf_object_find_data(const struct elf_object *obj, const char *name,
		     struct elf_symbol *out)
{
	return find_kind(obj, name, true, out);
}

int
elf_object_lookup(const struct elf_object *obj, const char *name,
		  uint64_t *vaddr)
{
	struct elf_symbol s;
	int ret = elf_object_find(obj, name, &s);

	if (ret)
		return ret;
	if (s.ifunc)
		return -ENOTSUP;
	*vaddr = s.vaddr;
	return 0;
}

/* The PT_LOAD whose file bytes hold VADDR, or NULL. */
static const GElf_Phdr *
load_of_vaddr(const struct elf_object *obj, uint64_t vaddr)
{
	for (size_t i = 0; i < obj->nloads; i++) {
		const GElf_Phdr *ph = &obj->loads[i];

		if (vaddr >= ph->p_vaddr && vaddr - ph->p_vaddr < ph->p_filesz)
			return ph;
	}
	return NULL;
}

int
elf_object_vaddr_to_offset(const struct elf_object *obj, uint64_t vaddr,
			   uint64_t *offset)
{
	const GElf_Phdr *ph = load_of_vaddr(obj, vaddr);

	if (!ph)
		return -ENOENT;
	*offset = ph->p_offset + (vaddr - ph->p_vaddr);
	return 0;
}

int
elf_object_read(const struct elf_object *obj, uint64_t vaddr, void *buf,
		size_t len)
{
	const GElf_Phdr *ph = load_of_vaddr(obj, vaddr);
	uint64_t room;
	ssize_t n;

	if (!ph)
		return -ENOENT;
	room = ph->p_filesz - (vaddr - ph->p_vaddr);
	if (len > room)
		len = room;
	if (len > INT_MAX)
		len = INT_MAX;
	do
		n = pread(obj->fd, buf, len,
			  (off_t)(ph->p_offset + (vaddr - ph->p_vaddr)));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n ? (int)n : -EIO;
}

static uint64_t
page_size(void)
{
	long ps = sysconf(_SC_PAGESIZE);

	return ps > 0 ? (uint64_t)ps : 4096;
}

uint64_t
elf_object_first_vaddr(const struct elf_object *obj)
{
	uint64_t lowest = UINT64_MAX;

	for (size_t i = 0; i < obj->nloads; i++)
		if (obj->loads[i].p_vaddr < lowest)
			lowest = obj->loads[i].p_vaddr;
	if (lowest == UINT64_MAX)
		return 0;
	return lowest & ~(page_size() - 1);
}

uint64_t
elf_object_entry(const struct elf_object *obj)
{
	return obj->entry;
}

/* ld.so maps each PT_LOAD from the page holding its p_offset, so a mapping
   whose offset is such a page most likely starts that segment; only when
   none does is it a later piece (split by mprotect) of one covering it.
   Two segments can share a file page, and then one line cannot tell. */
int
elf_object_bias_from_mapping(const struct elf_object *obj, uint64_t start,
			     uint64_t offset, uint64_t *bias)
{
	uint64_t mask = ~(page_size() - 1);

	for (int exact = 1; exact >= 0; exact--) {
		uint64_t found = 0;
		int n = 0;

		for (size_t i = 0; i < obj->nloads; i++) {
			const GElf_Phdr *ph = &obj->loads[i];
			uint64_t first = ph->p_offset & mask, b;

			if (offset < first ||
			    offset >= ph->p_offset + ph->p_filesz ||
			    (exact && offset != first))
				continue;
			/* The vaddr at OFFSET may lie before p_vaddr: unsigned
			   arithmetic wraps back correctly. */
			b = start - (ph->p_vaddr + offset - ph->p_offset);
			if (n++ && b != found)
				return -ENOTUNIQ;
			found = b;
		}
		if (n) {
			*bias = found;
			return 0;
		}
	}
	return -ENOENT;
}
