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
   symbol table is used right away.

   C++'s operator new and delete are probed only where the object that
   binds malloc defines them too, and that object is not glibc: an
   allocator's own operators (jemalloc's, tcmalloc's), which do not go
   through malloc and would be missed. libstdc++'s operators are left
   alone: they call malloc and free, which report them with the caller
   of operator new on the stack, as Massif shows them (operator new is
   one of its alloc-fns), and so the usual case keeps the exact path the
   comparisons with Massif check. Probing them as well would not add one
   event (malloc inside operator new is internal) but would put a return
   hook under every operator new, through which a std::bad_alloc cannot
   unwind (docs/tracer.md, "Finding the allocator"). A static executable's operators come
   from the same object as glibc's malloc, and stay unprobed for the same
   reasons. */
#include "tracer/probes/probes.h"

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
#include "tracer/inline/inline.h"
#include "tracer/inline/ring.h"
#include "tracer/python/python.h"
#include "tracer/target/elfsym.h"
#include "tracer/target/target.h"

/* Which family an allocator symbol is of. */
enum symbol_family {
	FAMILY_C,      /* probed where first defined */
	FAMILY_CXX,    /* an operator: probed only when the allocator
			  provides it */
	FAMILY_PYTHON, /* CPython's allocator API: probed unless
			  python_probes says not to */
};

struct alloc_symbol {
	const char *name;
	enum probe_role role;
	enum ht_alloc_fn fn;
	enum symbol_family family;
};

/* malloc first: whether an object binds it decides for its operators. */
static const struct alloc_symbol alloc_symbols[] = {
	{ "malloc", PROBE_ALLOC, HT_FN_MALLOC, FAMILY_C },
	{ "calloc", PROBE_ALLOC, HT_FN_CALLOC, FAMILY_C },
	{ "realloc", PROBE_ALLOC, HT_FN_REALLOC, FAMILY_C },
	{ "reallocarray", PROBE_ALLOC, HT_FN_REALLOCARRAY, FAMILY_C },
	{ "free", PROBE_FREE, HT_FN_FREE, FAMILY_C },
	{ "memalign", PROBE_ALLOC, HT_FN_MEMALIGN, FAMILY_C },
	{ "aligned_alloc", PROBE_ALLOC, HT_FN_ALIGNED_ALLOC, FAMILY_C },
	{ "posix_memalign", PROBE_ALLOC, HT_FN_POSIX_MEMALIGN, FAMILY_C },
	{ "valloc", PROBE_ALLOC, HT_FN_VALLOC, FAMILY_C },
	{ "pvalloc", PROBE_ALLOC, HT_FN_PVALLOC, FAMILY_C },
	/* operator new, new[]: plain, nothrow, aligned, aligned nothrow */
	{ "_Znwm", PROBE_ALLOC, HT_FN_NEW, FAMILY_CXX },
	{ "_Znam", PROBE_ALLOC, HT_FN_NEW_ARRAY, FAMILY_CXX },
	{ "_ZnwmRKSt9nothrow_t", PROBE_ALLOC, HT_FN_NEW, FAMILY_CXX },
	{ "_ZnamRKSt9nothrow_t", PROBE_ALLOC, HT_FN_NEW_ARRAY, FAMILY_CXX },
	{ "_ZnwmSt11align_val_t", PROBE_ALLOC, HT_FN_NEW_ALIGNED, FAMILY_CXX },
	{ "_ZnamSt11align_val_t", PROBE_ALLOC, HT_FN_NEW_ARRAY_ALIGNED,
	  FAMILY_CXX },
	{ "_ZnwmSt11align_val_tRKSt9nothrow_t", PROBE_ALLOC,
	  HT_FN_NEW_ALIGNED, FAMILY_CXX },
	{ "_ZnamSt11align_val_tRKSt9nothrow_t", PROBE_ALLOC,
	  HT_FN_NEW_ARRAY_ALIGNED, FAMILY_CXX },
	/* operator delete, delete[]: plain, sized, nothrow, aligned, sized
	   aligned, aligned nothrow */
	{ "_ZdlPv", PROBE_FREE, HT_FN_DELETE, FAMILY_CXX },
	{ "_ZdaPv", PROBE_FREE, HT_FN_DELETE_ARRAY, FAMILY_CXX },
	{ "_ZdlPvm", PROBE_FREE, HT_FN_DELETE, FAMILY_CXX },
	{ "_ZdaPvm", PROBE_FREE, HT_FN_DELETE_ARRAY, FAMILY_CXX },
	{ "_ZdlPvRKSt9nothrow_t", PROBE_FREE, HT_FN_DELETE, FAMILY_CXX },
	{ "_ZdaPvRKSt9nothrow_t", PROBE_FREE, HT_FN_DELETE_ARRAY, FAMILY_CXX },
	{ "_ZdlPvSt11align_val_t", PROBE_FREE, HT_FN_DELETE, FAMILY_CXX },
	{ "_ZdaPvSt11align_val_t", PROBE_FREE, HT_FN_DELETE_ARRAY, FAMILY_CXX },
	{ "_ZdlPvmSt11align_val_t", PROBE_FREE, HT_FN_DELETE, FAMILY_CXX },
	{ "_ZdaPvmSt11align_val_t", PROBE_FREE, HT_FN_DELETE_ARRAY, FAMILY_CXX },
	{ "_ZdlPvSt11align_val_tRKSt9nothrow_t", PROBE_FREE, HT_FN_DELETE,
	  FAMILY_CXX },
	{ "_ZdaPvSt11align_val_tRKSt9nothrow_t", PROBE_FREE,
	  HT_FN_DELETE_ARRAY, FAMILY_CXX },
	/* CPython's object and memory APIs: pymalloc serves requests of
	   up to 512 bytes from its own arenas (mmap'ed, never malloc'ed),
	   larger ones from malloc. Probed as the C functions they mirror
	   (same arguments and results; PyObject_Free(NULL) does nothing),
	   each call one block; a malloc, realloc or free made inside one
	   is internal (alloc.c, the stubs' is_internal). PyMem_* does not
	   go through PyObject_* (each calls pymalloc through its own
	   domain's function pointer), so the families never nest. */
	{ "PyObject_Malloc", PROBE_ALLOC, HT_FN_MALLOC, FAMILY_PYTHON },
	{ "PyObject_Calloc", PROBE_ALLOC, HT_FN_CALLOC, FAMILY_PYTHON },
	{ "PyObject_Realloc", PROBE_ALLOC, HT_FN_REALLOC, FAMILY_PYTHON },
	{ "PyObject_Free", PROBE_FREE, HT_FN_FREE, FAMILY_PYTHON },
	{ "PyMem_Malloc", PROBE_ALLOC, HT_FN_MALLOC, FAMILY_PYTHON },
	{ "PyMem_Calloc", PROBE_ALLOC, HT_FN_CALLOC, FAMILY_PYTHON },
	{ "PyMem_Realloc", PROBE_ALLOC, HT_FN_REALLOC, FAMILY_PYTHON },
	{ "PyMem_Free", PROBE_FREE, HT_FN_FREE, FAMILY_PYTHON },
};
#define N_ALLOC_SYMBOLS (sizeof(alloc_symbols) / sizeof(*alloc_symbols))
_Static_assert(N_ALLOC_SYMBOLS <= LOADER_MAX_SYMBOLS,
	       "struct tproc's bound[] holds a flag per symbol");

/* Record calls to the N TARGETS through the inline path when it is
   wanted, setting each one's ERR: 0 when patched (an alias of a function
   already patched, as memalign and aligned_alloc share code, counts as
   done), negative when it is left to an int3 probe. */
/* Page calls through the inline path: attached with --pages-as-heap=yes,
   where no seccomp filter may go in (it would outlive the session), and
   a stop at every system call would cost the program most of its speed.
   A program that runs under heaptrace from its start has the filter. */
static bool
page_calls_inline(const struct tracer *t)
{
	return t->opt->pages_as_heap && t->attached &&
	       t->opt->backend != HT_BACKEND_PTRACE;
}

/* The inline path is wanted: not --backend=ptrace, nor page calls caught
   by the seccomp filter. */
static bool
inline_wanted(const struct tracer *t)
{
	return t->opt->backend != HT_BACKEND_PTRACE &&
	       (!t->opt->pages_as_heap || page_calls_inline(t));
}

/* The page calls' wrappers (page_calls_inline): libc's, and ld.so's own
   private copies, each object's own definitions (not the first object's
   only: each object's calls go to its own). munmap and shmdt are recorded
   at their entry, before the pages can be mapped again by another
   thread; the others at their return, with their result. Calls made by
   a direct system call, not a wrapper, are not seen. */
static const struct page_symbol {
	const char *name;
	enum ring_class cls;
	enum ring_page_fn fn;
} page_symbols[] = {
	{ "mmap", RING_CLASS_PAGE, RING_PAGE_MMAP },
	{ "__mmap", RING_CLASS_PAGE, RING_PAGE_MMAP },
	{ "munmap", RING_CLASS_PAGE_ENTRY, RING_PAGE_MUNMAP },
	{ "__munmap", RING_CLASS_PAGE_ENTRY, RING_PAGE_MUNMAP },
	{ "mremap", RING_CLASS_PAGE, RING_PAGE_MREMAP },
	{ "__mremap", RING_CLASS_PAGE, RING_PAGE_MREMAP },
	{ "brk", RING_CLASS_PAGE, RING_PAGE_BRK },
	{ "__brk", RING_CLASS_PAGE, RING_PAGE_BRK },
	{ "shmat", RING_CLASS_PAGE, RING_PAGE_SHMAT },
	{ "shmdt", RING_CLASS_PAGE_ENTRY, RING_PAGE_SHMDT },
};
#define N_PAGE_SYMBOLS (sizeof(page_symbols) / sizeof(*page_symbols))

static void
patch_inline(struct tracer *t, struct tproc *p, pid_t tid,
	     struct inline_target *targets, size_t n)
{
	for (size_t i = 0; i < n; i++)
		targets[i].err = -ENOTSUP;
	if (!n || !inline_wanted(t))
		return;
	if (!p->inl) {
		/* No int3s in its place (bind_stopped): a heaptrace that
		   died would leave them to kill the program with SIGTRAP,
		   which only an explicit --backend=ptrace accepts. The
		   error goes up through the set-up: run says it, attach
		   is refused. */
		p->inline_refused = inline_setup(t, p, tid, targets[0].addr);
		if (p->inline_refused)
			return;
	}
	inline_patch(t, p, tid, targets, n);
}

/* True when OBJ, at PATH, holds glibc's malloc: libc.so.6, or a static
   executable linked with glibc's malloc.o, whose local _int_malloc is in
   its symbol table (malloc itself is found there too, or nothing is
   probed). Other allocators (jemalloc, tcmalloc) define __libc_malloc and
   friends as well, but not glibc's internals. */
static bool
is_glibc_malloc(const struct elf_object *obj, const char *path)
{
	const char *base = strrchr(path, '/');
	struct elf_symbol sym;
	return strcmp(base ? base + 1 : path, "libc.so.6") == 0 ||
	       elf_object_find(obj, "_int_malloc", &sym) == 0;
}

/* OBJ binds malloc: tell the sink whose it is (it picks the extra-bytes
   model by it). True when OBJ is another allocator than glibc, whose own
   C++ operators are then probed too. */
static bool
malloc_bound_here(struct tracer *t, struct tproc *p,
		  const struct elf_object *obj, const char *path)
{
	bool glibc = is_glibc_malloc(obj, path);
	ht_debug("process %d: malloc from %s (%s)", (int)p->pid, path,
		 glibc ? "glibc" : "another allocator");
	if (t->sink->allocator)
		t->sink->allocator(t->sink->ctx, p->pid, glibc);
	return !glibc;
}

/* The entries bound at one stop, for patching together: the target's
   threads are stopped once for all of them (tracer/stopall.c). The
   allocator's, and _exit's (--massif-compat=yes). */
#define MAX_BINDINGS (N_ALLOC_SYMBOLS + 1 + 32)
struct bindings {
	size_t n;
	struct inline_target targets[MAX_BINDINGS];
	enum probe_role role[MAX_BINDINGS]; /* if patching fails */
	bool hold[MAX_BINDINGS];            /* ... the probe's HOLD */
};

static void
binding_add(struct bindings *b, struct inline_target tg, enum probe_role role)
{
	if (b->n == MAX_BINDINGS)
		return; /* cannot happen: at most one object's symbols */
	b->targets[b->n] = tg;
	b->hold[b->n] = false;
	b->role[b->n++] = role;
}

/* Patch B's entries, and plant an int3 probe on each one that could not
   be patched. TID is stopped; P's other threads are stopped around the
   writes. Nothing when the inline path could not be set up at all
   (patch_inline). */
static void
bind_stopped(struct tracer *t, struct tproc *p, pid_t tid, struct bindings *b)
{
	patch_inline(t, p, tid, b->targets, b->n);
	if (p->inline_refused)
		return;
	for (size_t k = 0; k < b->n; k++) {
		struct inline_target *tg = &b->targets[k];
		/* an alias of a function given an int3 just before; a page
		   call has no breakpoint path after an attach (no stop at
		   every system call either): it goes unseen */
		if (!tg->err || probe_find(p, tg->addr))
			continue;
		if (tg->hook == RING_CLASS_PAGE ||
		    tg->hook == RING_CLASS_PAGE_ENTRY) {
			ht_warn("process %d: a page call at 0x%llx cannot be "
				"patched: its calls are not seen", (int)p->pid,
				(unsigned long long)tg->addr);
			continue;
		}
		int err = probe_plant(p, tid, tg->addr, b->role[k], tg->fn,
				      tg->lo, tg->hi);
		if (err) {
			ht_debug("no probe on %s at 0x%llx: %s",
				 ht_alloc_fn_name(tg->fn),
				 (unsigned long long)tg->addr,
				 ht_strerror(err));
			tg->err = err; /* why it has neither: the cause */
		} else if (b->hold[k])
			probe_find(p, tg->addr)->hold = true;
	}
}

/* bind_stopped, TID stopped or not (STOPPED false: it waits in its
   _dl_debug_state stub, and P's threads are all stopped first, unless
   they are held already). */
static void
bind_all(struct tracer *t, struct tproc *p, pid_t tid, bool stopped,
	 struct bindings *b)
{
	if (b->n && !stopped && !t->holding) {
		struct stopall s;
		int err = stopall_begin(t, p, 0, &s);
		if (err) {
			ht_warn("process %d: cannot stop its threads to probe "
				"a new library (%s): its calls are not seen",
				(int)p->pid, ht_strerror(err));
		} else {
			t->holding = &s;
			bind_stopped(t, p, tid, b);
			t->holding = NULL;
			stopall_end(&s);
		}
	} else if (b->n) {
		bind_stopped(t, p, tid, b);
	}
	b->n = 0;
	inline_exit_frees(p);
}

/* CPython's PyObject_* and PyMem_* are probed (alloc_symbols): by
   default, but not under --massif-compat=yes (Massif replaces malloc and
   its kin only, and sees pymalloc's blocks inside the arenas it mmaps,
   uncounted) nor --pages-as-heap=yes (pages are counted as pages, the
   arenas among them), nor with --python-alloc=no. */
static bool
python_probes(const struct tracer *t)
{
	return t->opt->python_alloc && !t->opt->massif_compat &&
	       !t->opt->pages_as_heap;
}

/* CPython's entries are worth probing only where every call goes
   through them. In a plain build each is a wrapper of a few instructions
   calling its domain's allocator through a function pointer (3.11's
   obmalloc.c). A build with link-time optimisation and profile feedback
   (Debian's python3.11) inlines pymalloc's fast path, guarded by a check
   of that pointer, into the entries and into some two hundred callers
   (object constructors, frees): probing the entries there would see a
   part of the blocks, and frees of blocks it never saw made, or blocks
   freed unseen. So OBJ's are probed only when each one it defines is a
   wrapper (at most PY_WRAPPER_MAX bytes, 16 to 51 in CPython 3.11
   built with -O3; 48 to 667 with pymalloc inlined). */
#define PY_WRAPPER_MAX 96

/* True when P's environment sets PYTHONMALLOC to malloc or malloc_debug:
   CPython then allocates everything with malloc. */
static bool
python_uses_malloc(const struct tproc *p)
{
	char path[64], buf[65536];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)p->pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
		if (strcmp(buf + i, "PYTHONMALLOC=malloc") == 0 ||
		    strcmp(buf + i, "PYTHONMALLOC=malloc_debug") == 0)
			return true;
	return false;
}

/* One line per session however many Pythons run (a python running
   python under --trace-children=yes): the same thing said of each would
   only repeat itself. ARENAS: its arenas are counted (python_arenas). */
static void
python_inlined_say(const char *path, bool arenas)
{
	static bool said;
	if (said)
		return;
	said = true;
	if (arenas)
		ht_note("%s inlines pymalloc: its arenas are counted as "
			"blocks (PYTHONMALLOC=malloc gives per-object "
			"figures)", path);
	else
		ht_warn("%s inlines pymalloc: objects up to 512 B unseen "
			"(PYTHONMALLOC=malloc shows them)", path);
}

/* True when OBJ's CPython entries are all wrappers, worth probing.
   *INLINED: they are not, pymalloc being inlined into their callers,
   and PYTHONMALLOC does not send the objects to malloc. */
static bool
python_wrappers(struct tproc *p, const struct elf_object *obj,
		const char *path, bool *inlined)
{
	struct elf_symbol sym;
	*inlined = false;
	if (elf_object_find(obj, "PyObject_Malloc", &sym))
		return false;
	for (size_t i = 0; i < N_ALLOC_SYMBOLS; i++) {
		const struct alloc_symbol *s = &alloc_symbols[i];
		if (s->family != FAMILY_PYTHON ||
		    elf_object_find(obj, s->name, &sym))
			continue;
		if (!sym.ifunc && sym.size && sym.size <= PY_WRAPPER_MAX)
			continue;
		if (python_uses_malloc(p)) {
			ht_debug("process %d: %s inlines pymalloc, but "
				 "PYTHONMALLOC sends its objects to malloc",
				 (int)p->pid, path);
			return false;
		}
		ht_debug("process %d: %s inlines pymalloc into its callers "
			 "(%s is %llu bytes)", (int)p->pid, path, s->name,
			 (unsigned long long)sym.size);
		*inlined = true;
		return false;
	}
	return true;
}

/* The address of the struct PyObject_GetArenaAllocator copies, decoded
   from its first instruction at CODE (at ADDR): a 16-byte load (movaps,
   movups, movdqa, movdqu) or a mov into rax, RIP-relative, of the
   struct's first bytes. 0 for any other shape. */
static uint64_t
arena_struct_addr(const uint8_t code[8], uint64_t addr)
{
	static const struct {
		uint8_t len, bytes[4];
	} shapes[] = {
		{ 3, { 0x0f, 0x28, 0x05 } },       /* movaps disp(%rip),%xmm0 */
		{ 3, { 0x0f, 0x10, 0x05 } },       /* movups */
		{ 4, { 0x66, 0x0f, 0x6f, 0x05 } }, /* movdqa */
		{ 4, { 0xf3, 0x0f, 0x6f, 0x05 } }, /* movdqu */
		{ 3, { 0x48, 0x8b, 0x05 } },       /* mov disp(%rip),%rax */
	};
	for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++) {
		if (memcmp(code, shapes[i].bytes, shapes[i].len))
			continue;
		int32_t disp;
		memcpy(&disp, code + shapes[i].len, 4);
		return addr + shapes[i].len + 4 + (uint64_t)(int64_t)disp;
	}
	return 0;
}

/* WORD as a code address of the object mapped at [LO, HI) with BIAS: as
   it is once relocated, or the link-time address a position-independent
   object's data holds before ld.so relocates it. 0: neither. */
static uint64_t
arena_fn_addr(uint64_t word, uint64_t bias, uint64_t lo, uint64_t hi)
{
	if (word >= lo && word < hi)
		return word;
	if (word && word + bias >= lo && word + bias < hi)
		return word + bias;
	return 0;
}

/* pymalloc inlined (python_wrappers): count its arenas instead, by
   probing the functions CPython's arena allocator, _PyObject_Arena
   {ctx, alloc, free}, names now. That struct is static, but the
   exported PyObject_GetArenaAllocator copies it, and its first
   instruction gives its address. Into B, one block per arena: alloc(ctx,
   size) and free(ctx, ptr, size). False when it cannot be found. */
static bool
python_arenas(struct tproc *p, pid_t tid, const struct elf_object *obj,
	      uint64_t bias, uint64_t lo, uint64_t hi, struct bindings *b)
{
	struct elf_symbol get;
	uint8_t code[8];
	uint64_t arena[3];
	if (elf_object_find(obj, "PyObject_GetArenaAllocator", &get) ||
	    get.ifunc ||
	    mem_read(tid, bias + get.vaddr, code, sizeof(code)) !=
		    sizeof(code))
		return false;
	uint64_t at = arena_struct_addr(code, bias + get.vaddr);
	if (!at || mem_read(tid, at, arena, sizeof(arena)) != sizeof(arena))
		return false;
	uint64_t alloc = arena_fn_addr(arena[1], bias, lo, hi);
	uint64_t free_fn = arena_fn_addr(arena[2], bias, lo, hi);
	if (!alloc || !free_fn || alloc == free_fn)
		return false;
	ht_debug("process %d: pymalloc's arenas from 0x%llx (alloc 0x%llx, "
		 "free 0x%llx)", (int)p->pid, (unsigned long long)at,
		 (unsigned long long)alloc, (unsigned long long)free_fn);
	if (!probe_find(p, alloc))
		binding_add(b, (struct inline_target){
			.addr = alloc, .fn = HT_FN_PYARENA_ALLOC,
			.lo = lo, .hi = hi,
		}, PROBE_ALLOC);
	if (!probe_find(p, free_fn))
		binding_add(b, (struct inline_target){
			.addr = free_fn, .fn = HT_FN_PYARENA_FREE,
			.lo = lo, .hi = hi,
		}, PROBE_FREE);
	return true;
}

/* One line per session, as python_inlined_warn. */
static void
python_frames_note(const char *note)
{
	static bool said;
	if (said)
		return;
	said = true;
	ht_warn("%s: Python frames not shown (native frames only)", note);
}

/* P's interpreter, when OBJ (PATH at BIAS) is the first CPython it loads
   and Python frames are wanted. */
static void
python_frames_find(const struct tracer *t, struct tproc *p,
		   const struct elf_object *obj, const char *path,
		   uint64_t bias)
{
	char note[160];
	if (p->python || !ht_options_python_frames(t->opt))
		return;
	p->python = py_interp_find(p->pid, obj, bias, path, note,
				   sizeof(note));
	if (p->python)
		ht_debug("process %d: Python %s in %s: Python frames",
			 (int)p->pid, py_interp_version(p->python), path);
	else if (note[0])
		python_frames_note(note);
}

/* Add to B every allocator symbol OBJ defines that no earlier object did,
   C++ operators only when OBJ is the allocator that binds malloc (see the
   top of the file), CPython's only when python_probes and
   python_wrappers. */
static void
plant_from_object(struct tracer *t, struct tproc *p, pid_t tid,
		  const char *path, uint64_t bias, struct bindings *b)
{
	struct elf_object *obj = elf_object_open(path);
	if (!obj)
		return;
	python_frames_find(t, p, obj, path, bias);
	uint64_t lo, hi;
	maps_extent(tid, path, &lo, &hi);
	bool own_operators = false;
	bool py_inlined = false, py_here = false;
	bool python = python_probes(t) &&
		      python_wrappers(p, obj, path, &py_inlined);
	/* Page calls only: no allocator is probed, but the exit-time frees
	   below still end the profile, as Valgrind runs them in every mode. */
	size_t n_symbols = t->opt->pages_as_heap ? 0 : N_ALLOC_SYMBOLS;
	for (size_t i = 0; i < n_symbols; i++) {
		const struct alloc_symbol *s = &alloc_symbols[i];
		struct elf_symbol sym;
		if (p->bound[i] || elf_object_find(obj, s->name, &sym) ||
		    sym.ifunc)
			continue;
		/* Bound here even when not probed: the program calls this
		   object's definition, not a later object's. */
		p->bound[i] = true;
		if (s->fn == HT_FN_MALLOC && s->family == FAMILY_PYTHON)
			py_here = true;
		if (s->fn == HT_FN_MALLOC && s->family == FAMILY_C)
			own_operators = malloc_bound_here(t, p, obj, path);
		if ((s->family == FAMILY_CXX && !own_operators) ||
		    (s->family == FAMILY_PYTHON && !python))
			continue;
		uint64_t addr = bias + sym.vaddr;
		if (probe_find(p, addr))
			continue;
		if (s->family == FAMILY_PYTHON && s->fn == HT_FN_MALLOC)
			ht_debug("process %d: %s from %s", (int)p->pid,
				 s->name, path);
		binding_add(b, (struct inline_target){
			.addr = addr, .func_len = sym.size, .fn = s->fn,
			.lo = lo, .hi = hi,
		}, s->role);
		b->hold[b->n - 1] =
			s->family == FAMILY_PYTHON && s->role == PROBE_FREE;
	}
	if (py_here && py_inlined)
		python_inlined_say(path, python_arenas(p, tid, obj, bias, lo,
							 hi, b));
	for (size_t i = 0; page_calls_inline(t) && i < N_PAGE_SYMBOLS; i++) {
		const struct page_symbol *ps = &page_symbols[i];
		struct elf_symbol sym;
		if (elf_object_find(obj, ps->name, &sym) || sym.ifunc ||
		    probe_find(p, bias + sym.vaddr))
			continue;
		binding_add(b, (struct inline_target){
			.addr = bias + sym.vaddr, .func_len = sym.size,
			.fn = HT_FN_FREE, .lo = lo, .hi = hi,
			.hook = ps->cls, .hook_fn = ps->fn,
		}, PROBE_FREE);
	}
	if (t->opt->massif_compat) {
		uint64_t vaddr;
		struct elf_symbol ex;
		if (!p->exit_bound && !elf_object_find(obj, "_exit", &ex) &&
		    !ex.ifunc) {
			p->exit_bound = true;
			binding_add(b, (struct inline_target){
				.addr = bias + ex.vaddr, .func_len = ex.size,
				.fn = HT_FN_FREE, .lo = lo, .hi = hi,
				.hook = RING_CLASS_EXIT,
			}, PROBE_EXIT);
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

/* Hook ld.so's _dl_debug_state: through the inline path when it is
   wanted (a NOTIFY stub, which waits for our answer only while we live),
   else, or when it cannot be patched, an int3 probe. TID stopped. */
static int
hook_ld_so(struct tracer *t, struct tproc *p, pid_t tid, uint64_t base)
{
	char path[PATH_MAX];
	int err = mapping_path(p->pid, base, path, sizeof(path));
	if (err)
		return err;
	struct elf_object *obj = elf_object_open(path);
	if (!obj)
		return -errno;
	uint64_t bias = base - elf_object_first_vaddr(obj);
	struct elf_symbol state;
	err = elf_object_find(obj, "_dl_debug_state", &state);
	elf_object_close(obj);
	if (err)
		return err;
	uint64_t lo, hi;
	maps_extent(p->pid, path, &lo, &hi);
	struct bindings b = { 0 };
	binding_add(&b, (struct inline_target){
		/* Its size (one ret) would forbid covering the padding
		   after it: unknown, the relocation checks it. */
		.addr = bias + state.vaddr, .func_len = 0,
		.fn = HT_FN_FREE, .lo = lo, .hi = hi,
		.hook = RING_CLASS_NOTIFY,
	}, PROBE_DEBUG_STATE);
	bind_stopped(t, p, tid, &b);
	if (p->inline_refused)
		return p->inline_refused;
	return b.targets[0].err && !probe_find(p, bias + state.vaddr)
		? b.targets[0].err : 0;
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
		maps_extent(p->pid, path, &lo, &hi);
		bias = lo - elf_object_first_vaddr(obj);
	}
	elf_object_close(obj);
	(void)entry;
	struct bindings b = { 0 };
	plant_from_object(t, p, tid, path, bias, &b);
	bind_all(t, p, tid, true, &b);
}

int
loader_setup_exec(struct tracer *t, struct tproc *p, pid_t tid)
{
	int err = inject_leave_exec(tid);
	if (!err)
		err = inject_find_syscall(p);
	if (!err)
		err = probe_ensure_trampolines(p, tid);
	if (err)
		return err;
	uint64_t base = 0;
	read_auxv(p->pid, AT_BASE, &base);
	if (base)
		return hook_ld_so(t, p, tid, base);
	plant_static(t, p, tid);
	p->setup_done = true;
	return p->inline_refused;
}

int
loader_setup_attach(struct tracer *t, struct tproc *p, pid_t tid)
{
	/* Found already when the first scratch page was made apart (attach.c):
	   looked for again now, it could be the injection routine's own. */
	int err = p->syscall_insn ? 0 : inject_find_syscall(p);
	if (!err)
		err = probe_ensure_trampolines(p, tid);
	if (err)
		return err;
	uint64_t base = 0;
	read_auxv(p->pid, AT_BASE, &base);
	if (!base) {
		plant_static(t, p, tid);
		p->setup_done = true;
		return p->inline_refused;
	}
	/* The hook first: a dlopen after we resume must be seen. Then the
	   link map as it is now; if ld.so is in the middle of a change
	   (not RT_CONSISTENT), its coming _dl_debug_state plants them. */
	err = hook_ld_so(t, p, tid, base);
	if (err)
		return err;
	return loader_debug_state(t, p, tid, true);
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
	uint64_t phdr = 0, phnum = 0; /* gcc -O3 cannot see read_auxv sets them */
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

/* Test hook (tests/run/stopall.sh): with HEAPTRACE_TEST_BIND_WITH=NAME in
   heaptrace's environment, nothing is bound before an object whose file
   name is NAME is in the link map MAP. glibc's allocator is otherwise
   always bound at startup, with one thread; the test program dlopens NAME
   once its threads allocate, so that the allocator is patched in a
   multithreaded process, as it will be when attaching to one. */
static bool
binding_deferred(pid_t tid, uint64_t map)
{
	const char *want = getenv("HEAPTRACE_TEST_BIND_WITH");
	if (!want || !*want)
		return false;
	for (int guard = 0; map && guard < 100000; guard++) {
		uint64_t l_name, next;
		char path[PATH_MAX];
		if (read_word(tid, map + L_NAME_OFF, &l_name) ||
		    read_word(tid, map + L_NEXT_OFF, &next))
			break;
		read_string(tid, l_name, path, sizeof(path));
		const char *base = strrchr(path, '/');
		if (strcmp(base ? base + 1 : path, want) == 0)
			return false;
		map = next;
	}
	return true;
}

int
loader_debug_state(struct tracer *t, struct tproc *p, pid_t tid, bool stopped)
{
	uint64_t state, map;
	if (!p->r_debug)
		find_r_debug(p);
	/* Read through TID, which is stopped here: the leader may have
	   exited (a zombie has no memory to read). */
	if (!p->r_debug || read_word(tid, p->r_debug + R_STATE_OFF, &state) ||
	    (uint32_t)state != RT_CONSISTENT ||
	    read_word(tid, p->r_debug + R_MAP_OFF, &map))
		return 0;
	if (binding_deferred(tid, map)) {
		p->setup_done = true;
		return 0;
	}
	bool changed = false;
	struct bindings b = { 0 };
	for (int guard = 0; map && guard < 100000; guard++) {
		uint64_t l_addr, l_name, next;
		if (read_word(tid, map + L_ADDR_OFF, &l_addr) ||
		    read_word(tid, map + L_NAME_OFF, &l_name) ||
		    read_word(tid, map + L_NEXT_OFF, &next))
			break;
		bool fresh;
		u64map_slot(&p->objects_seen, map, &fresh);
		if (fresh) {
			changed = true;
			char path[PATH_MAX];
			read_string(tid, l_name, path, sizeof(path));
			if (!path[0]) {
				char exe[64];
				snprintf(exe, sizeof(exe), "/proc/%d/exe",
					 (int)tid);
				ssize_t n = readlink(exe, path, sizeof(path) - 1);
				path[n > 0 ? n : 0] = 0;
			}
			if (path[0] == '/')
				plant_from_object(t, p, tid, path, l_addr, &b);
		}
		map = next;
	}
	bind_all(t, p, tid, stopped, &b);
	p->setup_done = true;
	if (changed)
		inline_modules_changed(p);
	if (changed && p->profiling)
		t->sink->modules_changed(t->sink->ctx, p->pid);
	return 0;
}
