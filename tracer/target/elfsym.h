/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding symbols in an ELF file on disk, for planting probes: which of a
   list of names an object defines, at which address relative to its load
   base, preferring .dynsym and falling back to .symtab (static
   executables), and the arithmetic between file offsets, link-time
   addresses and where the object is mapped. */
#ifndef HT_TRACER_ELFSYM_H
#define HT_TRACER_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_object;

/* A defined function symbol, as found by elf_object_find. */
struct elf_symbol {
	uint64_t vaddr; /* st_value, in the object's own address space */
	uint64_t size;  /* st_size, 0 when unknown */
	bool ifunc;     /* STT_GNU_IFUNC: VADDR is the resolver, which returns
			   the implementation; a probe there sees no calls */
	bool dynamic;   /* found in .dynsym (else .symtab) */
};

/* Open the ELF file PATH. Returns NULL with errno set on failure
   (ENOEXEC when it is not an ELF file). */
struct elf_object *elf_object_open(const char *path);
/* Close OBJ; NULL is a no-op. */
void elf_object_close(struct elf_object *obj);
/* True for ET_DYN (PIE or shared object): addresses need the load bias. */
bool elf_object_is_dyn(const struct elf_object *obj);
/* True when OBJ has a PT_INTERP (dynamically linked executable). */
bool elf_object_has_interp(const struct elf_object *obj);
/* The defined STT_FUNC or STT_GNU_IFUNC symbol NAME (a base name, mangled,
   without @VERSION) into *OUT. Looks in .dynsym first, then .symtab. Among
   versions of NAME the default one (name@@V, or unversioned) wins over
   hidden ones (name@V), and global or weak over local. Returns 0, or
   -ENOENT. */
int elf_object_find(const struct elf_object *obj, const char *name,
		    struct elf_symbol *out);
/* elf_object_find for a defined STT_OBJECT symbol (a variable: _PyRuntime,
   PyCode_Type), with the same preferences. Returns 0 or -ENOENT. */
int elf_object_find_data(const struct elf_object *obj, const char *name,
			 struct elf_symbol *out);
/* elf_object_find for a plain function: sets *VADDR (in OBJ's own address
   space; add the load bias for ET_DYN) and returns 0, -ENOENT, or -ENOTSUP
   when NAME is an IFUNC (its address is the resolver, not the function). */
int elf_object_lookup(const struct elf_object *obj, const char *name,
		      uint64_t *vaddr);
/* The file offset of virtual address VADDR (through the PT_LOAD whose file
   bytes cover it), or -ENOENT. */
int elf_object_vaddr_to_offset(const struct elf_object *obj, uint64_t vaddr,
			       uint64_t *offset);
/* Read up to LEN bytes of the file at virtual address VADDR into BUF,
   stopping at the end of the covering PT_LOAD's file bytes. Returns the
   count read (> 0), -ENOENT when no PT_LOAD covers VADDR, or -errno. */
int elf_object_read(const struct elf_object *obj, uint64_t vaddr, void *buf,
		    size_t len);
/* The lowest PT_LOAD's p_vaddr rounded down to a page, so that a mapping of
   file offset 0 at address A has load bias A - this. */
uint64_t elf_object_first_vaddr(const struct elf_object *obj);
/* e_entry, so that a PIE whose AT_ENTRY is E has load bias E - this. */
uint64_t elf_object_entry(const struct elf_object *obj);
/* The load bias of OBJ given one of its mappings, START mapping file offset
   OFFSET (a /proc/PID/maps line): sets *BIAS and returns 0, -ENOENT when
   no PT_LOAD maps that offset, or -ENOTUNIQ when two PT_LOADs share the
   file page at OFFSET and disagree (small objects: use the lowest mapping,
   or START - elf_object_first_vaddr for the mapping of offset 0). The bias
   is 0 for ET_EXEC. */
int elf_object_bias_from_mapping(const struct elf_object *obj, uint64_t start,
				 uint64_t offset, uint64_t *bias);

#endif
