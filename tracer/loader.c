/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Finding the allocator the program really uses, once it is mapped.

   A dynamically linked program's libraries are mapped by ld.so after exec,
   so we hook ld.so's _dl_debug_state, which it calls when the link map
   becomes consistent: after the DT_NEEDED objects are mapped but before any
   constructor runs (libstdc++'s constructor already allocates), and again
   after every dlopen. Each allocator symbol is taken from the first object
   of the link map that defines it, which is the dynamic linker's own lookup
   order (executable, LD_PRELOAD, DT_NEEDED breadth first): so an allocator
   interposed by the executable or a preloaded library wins over libc's.
   A statically linked program has everything mapped at exec: its own
   symbol table is used right away. */
#include "tracer_priv.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "elfsym.h"

struct alloc_symbol {
	const char *name;
	enum probe_role role;
	enum ht_alloc_fn fn;
};

static const struct alloc_symbol alloc_symbols[] = {
	{ "malloc", PROBE_ALLOC, HT_FN_MALLOC },
	{ "calloc", PROBE_ALLOC, HT_FN_CALLOC },
	{ "realloc", PROBE_ALLOC, HT_FN_REALLOC },
	{ "reallocarray", PROBE_ALLOC, HT_FN_REALLOCARRAY },
	{ "free", PROBE_FREE, HT_FN_FREE },
	{ "memalign", PROBE_ALLOC, HT_FN_MEMALIGN },
	{ "aligned_alloc", PROBE_ALLOC, HT_FN_ALIGNED_ALLOC },
	{ "posix_memalign", PROBE_ALLOC, HT_FN_POSIX_MEMALIGN },
	{ "valloc", PROBE_ALLOC, HT_FN_VALLOC },
	{ "pvalloc", PROBE_ALLOC, HT_FN_PVALLOC },
};
#define N_ALLOC_SYMBOLS (sizeof(alloc_symbols) / sizeof(*alloc_symbols))

/* The extent of PATH's mappings in P, for telling calls made from inside an
   allocator's object. */
struct extent {
	const char *path;
	uint64_t lo, hi;
};

static int
extend(void *arg, const struct mapping *m)
{
	struct extent *e = arg;
	if (strcmp(m->path, e->path) == 0) {
		if (m->lo < e->lo)
			e->lo = m->lo;
		if (m->hi > e->hi)
			e->hi = m->hi;
	}
	return 0;
}

static void
object_extent(pid_t pid, const char *path, uint64_t *lo, uint64_t *hi)
{
	struct extent e = { .path = path, .lo = UINT64_MAX };
	maps_foreach(pid, extend, &e);
	*lo = e.lo == UINT64_MAX ? 0 : e.lo;
	*hi = e.lo == UINT64_MAX ? 0 : e.hi;
}

/* Record calls to S at ADDR through the inline path when it is wanted and
   the function can be patched; false leaves it to an int3 probe. An alias
   already patched (memalign and aligned_alloc share code) counts as done. */
static bool
patched_inline(struct tracer *t, struct tproc *p, pid_t tid, uint64_t addr,
	       uint64_t size, const struct alloc_symbol *s, uint64_t lo,
	       uint64_t hi)
{
	if (t->opt->backend == HT_BACKEND_PTRACE)
		return false;
	if (!p->inl) {
		int err = inline_setup(t, p, tid, addr);
		if (err) {
			if (!p->inline_refused)
				ht_warn("process %d: inline backend unavailable "
					"(%s); using ptrace breakpoints",
					(int)p->pid, ht_strerror(err));
			p->inline_refused = true;
			return false;
		}
	}
	return inline_patch(t, p, tid, addr, size, s->fn, lo, hi) == 0;
}

/* Plant every allocator symbol OBJ defines that no earlier object did. */
static void
plant_from_object(struct tracer *t, struct tproc *p, pid_t tid,
		  const char *path, uint64_t bias)
{
	struct elf_object *obj = elf_object_open(path);
	if (!obj)
		return;
	uint64_t lo, hi;
	object_extent(p->pid, path, &lo, &hi);
	for (size_t i = 0; i < N_ALLOC_SYMBOLS; i++) {
		const struct alloc_symbol *s = &alloc_symbols[i];
		struct elf_symbol sym;
		if (p->bound[s->fn] || elf_object_find(obj, s->name, &sym) ||
		    sym.ifunc)
			continue;
		p->bound[s->fn] = true;
		uint64_t addr = bias + sym.vaddr;
		if (probe_find(p, addr) || patched_inline(t, p, tid, addr,
							   sym.size, s, lo, hi))
			continue;
		int err = probe_plant(p, tid, addr, s->role, s->fn, lo, hi);
		if (err)
			ht_debug("no probe on %s in %s: %s", s->name, path,
				 ht_strerror(err));
	}
	if (t->opt->massif_compat) {
		uint64_t vaddr;
		if (!p->exit_bound && !elf_object_lookup(obj, "_exit", &vaddr)) {
			p->exit_bound = true;
			probe_plant(p, tid, bias + vaddr, PROBE_EXIT, HT_FN_FREE,
				    lo, hi);
		}
		if (!p->freeres[0] &&
		    !elf_object_lookup(obj, "_ZN9__gnu_cxx9__freeresEv", &vaddr))
			p->freeres[0] = bias + vaddr;
		if (!p->freeres[1] &&
		    !elf_object_lookup(obj, "__libc_freeres", &vaddr))
			p->freeres[1] = bias + vaddr;
	}
	elf_object_close(obj);
}

static int
read_auxv(pid_t pid, uint64_t type, uint64_t *value)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	uint64_t pair[2];
	int rc = -ENOENT;
	while (fread(pair, sizeof(pair), 1, f) == 1 && pair[0] != AT_NULL) {
		if (pair[0] == type) {
			*value = pair[1];
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

struct file_at {
	uint64_t addr;
	char *path;
	size_t len;
};

static int
match_file(void *arg, const struct mapping *m)
{
	struct file_at *f = arg;
	if (f->addr < m->lo || f->addr >= m->hi)
		return 0;
	snprintf(f->path, f->len, "%s", m->path);
	return 1;
}

/* The file mapped at ADDR in PID, into PATH. */
static int
mapping_path(pid_t pid, uint64_t addr, char *path, size_t len)
{
	struct file_at f = { .addr = addr, .path = path, .len = len };
	path[0] = 0;
	int rc = maps_foreach(pid, match_file, &f);
	return rc ? rc : path[0] ? 0 : -ENOENT;
}

static int
hook_ld_so(struct tproc *p, pid_t tid, uint64_t base)
{
	char path[PATH_MAX];
	int err = mapping_path(p->pid, base, path, sizeof(path));
	if (err)
		return err;
	struct elf_object *obj = elf_object_open(path);
	if (!obj)
		return -errno;
	uint64_t bias = base - elf_object_first_vaddr(obj);
	uint64_t state;
	err = elf_object_lookup(obj, "_dl_debug_state", &state);
	elf_object_close(obj);
	if (err)
		return err;
	uint64_t lo, hi;
	object_extent(p->pid, path, &lo, &hi);
	return probe_plant(p, tid, bias + state, PROBE_DEBUG_STATE, HT_FN_FREE,
			   lo, hi);
}

/* A static executable: its own symbols, with the bias of its mapping. */
static void
plant_static(struct tracer *t, struct tproc *p, pid_t tid)
{
	char exe[64], path[PATH_MAX];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)p->pid);
	ssize_t n = readlink(exe, path, sizeof(path) - 1);
	if (n <= 0)
		return;
	path[n] = 0;
	uint64_t entry = 0, bias = 0;
	struct elf_object *obj = elf_object_open(path);
	if (!obj)
		return;
	if (elf_object_is_dyn(obj)) {
		/* static-pie: where the first segment landed */
		uint64_t lo, hi;
		object_extent(p->pid, path, &lo, &hi);
		bias = lo - elf_object_first_vaddr(obj);
	}
	elf_object_close(obj);
	(void)entry;
	plant_from_object(t, p, tid, path, bias);
}

int
loader_setup_exec(struct tracer *t, struct tproc *p, pid_t tid)
{
	int err = inject_step_out(tid);
	if (!err)
		err = inject_find_syscall(p);
	if (!err)
		err = probe_ensure_trampolines(p, tid);
	if (err)
		return err;
	uint64_t base = 0;
	read_auxv(p->pid, AT_BASE, &base);
	if (base)
		return hook_ld_so(p, tid, base);
	plant_static(t, p, tid);
	p->setup_done = true;
	return 0;
}

/* struct r_debug and struct link_map, as laid out on x86-64. */
enum {
	R_MAP_OFF = 8, R_STATE_OFF = 24,
	L_ADDR_OFF = 0, L_NAME_OFF = 8, L_NEXT_OFF = 24,
	RT_CONSISTENT = 0,
};

static int
read_word(pid_t pid, uint64_t addr, uint64_t *out)
{
	return mem_read(pid, addr, out, 8) == 8 ? 0 : -EFAULT;
}

static void
read_string(pid_t pid, uint64_t addr, char *buf, size_t len)
{
	ssize_t n = addr ? mem_read(pid, addr, buf, len - 1) : 0;
	buf[n > 0 ? n : 0] = 0;
	buf[strnlen(buf, len - 1)] = 0;
}

/* ld.so publishes its struct r_debug in the executable's DT_DEBUG entry
   before it first calls _dl_debug_state, as debuggers expect. */
static int
find_r_debug(struct tproc *p)
{
	uint64_t phdr, phnum;
	if (read_auxv(p->pid, AT_PHDR, &phdr) || read_auxv(p->pid, AT_PHNUM, &phnum))
		return -ENOENT;
	Elf64_Phdr ph[64];
	if (phnum > 64)
		phnum = 64;
	if (mem_read(p->pid, phdr, ph, phnum * sizeof(*ph)) !=
	    (ssize_t)(phnum * sizeof(*ph)))
		return -EFAULT;
	uint64_t bias = 0, dyn = 0;
	for (uint64_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_PHDR)
			bias = phdr - ph[i].p_vaddr;
	for (uint64_t i = 0; i < phnum; i++)
		if (ph[i].p_type == PT_DYNAMIC)
			dyn = bias + ph[i].p_vaddr;
	for (int i = 0; dyn && i < 512; i++) {
		Elf64_Dyn d;
		if (mem_read(p->pid, dyn + (uint64_t)i * sizeof(d), &d,
			     sizeof(d)) != sizeof(d) || d.d_tag == DT_NULL)
			break;
		if (d.d_tag == DT_DEBUG && d.d_un.d_ptr) {
			p->r_debug = d.d_un.d_ptr;
			return 0;
		}
	}
	return -ENOENT;
}

int
loader_debug_state(struct tracer *t, struct tproc *p, pid_t tid)
{
	uint64_t state, map;
	if (!p->r_debug)
		find_r_debug(p);
	if (!p->r_debug || read_word(p->pid, p->r_debug + R_STATE_OFF, &state) ||
	    (uint32_t)state != RT_CONSISTENT ||
	    read_word(p->pid, p->r_debug + R_MAP_OFF, &map))
		return 0;
	bool changed = false;
	for (int guard = 0; map && guard < 100000; guard++) {
		uint64_t l_addr, l_name, next;
		if (read_word(p->pid, map + L_ADDR_OFF, &l_addr) ||
		    read_word(p->pid, map + L_NAME_OFF, &l_name) ||
		    read_word(p->pid, map + L_NEXT_OFF, &next))
			break;
		bool fresh;
		u64map_slot(&p->objects_seen, map, &fresh);
		if (fresh) {
			changed = true;
			char path[PATH_MAX];
			read_string(p->pid, l_name, path, sizeof(path));
			if (!path[0]) {
				char exe[64];
				snprintf(exe, sizeof(exe), "/proc/%d/exe",
					 (int)p->pid);
				ssize_t n = readlink(exe, path, sizeof(path) - 1);
				path[n > 0 ? n : 0] = 0;
			}
			if (path[0] == '/')
				plant_from_object(t, p, tid, path, l_addr);
		}
		map = next;
	}
	p->setup_done = true;
	if (changed)
		inline_modules_changed(p);
	if (changed && p->profiling)
		t->sink->modules_changed(t->sink->ctx, p->pid);
	return 0;
}
