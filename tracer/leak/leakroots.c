/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Roots, memory and registers of a stopped target for the exit-time leak
   check, in memcheck 3.19's terms (see leakroots.h). */
#include "tracer/leak/leakroots.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <unistd.h>

#include "common/kvsort.h"
#include "tracer/target/target.h"

#define PAGE 4096ULL
#define IOV_BATCH 1024 /* remote iovecs per process_vm_readv (IOV_MAX) */

struct rvec {
	struct leakroots_range *v;
	size_t n, cap;
};

static int
push(struct rvec *r, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 64;
		void *v = realloc(r->v, cap * sizeof(*r->v));
		if (!v)
			return -ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n].lo = lo;
	r->v[r->n].hi = hi;
	r->n++;
	return 0;
}

static int
cmp_range(const void *a, const void *b)
{
	const struct leakroots_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

/* Sorts R by start (a radix sort: R holds every live block). Returns 0
   or -ENOMEM. */
static int
sort_ranges(struct rvec *r)
{
	struct ht_kv *kv = malloc(r->n * sizeof(*kv));
	if (!kv)
		return -ENOMEM;
	for (size_t i = 0; i < r->n; i++)
		kv[i] = (struct ht_kv){ .key = r->v[i].lo, .val = r->v[i].hi };
	ht_kv_sort(kv, r->n);
	for (size_t i = 0; i < r->n; i++)
		r->v[i] = (struct leakroots_range){ kv[i].key, kv[i].val };
	free(kv);
	return 0;
}

static int
add_root(struct leak_root **res, size_t *n, size_t *cap, uint64_t lo,
	 uint64_t hi)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;
		void *v = realloc(*res, c * sizeof(**res));
		if (!v)
			return -ENOMEM;
		*res = v;
		*cap = c;
	}
	(*res)[*n].start = lo;
	(*res)[*n].len = hi - lo;
	(*n)++;
	return 0;
}

/* Kernel pseudo-mappings memcheck never sees as client segments. */
static bool
kernel_special(const char *path)
{
	static const char *const names[] = { "[vvar]", "[vvar_vclock]",
					      "[vdso]", "[vsyscall]",
					      "[uprobes]" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(path, names[i]) == 0)
			return true;
	return false;
}

/* memcheck skips character and block device mappings but /dev/zero.
   From the maps text, a device is a path under /dev/ (tmpfs files under
   /dev/shm/ are regular files). */
static bool
device(const char *path)
{
	if (strncmp(path, "/dev/", 5) != 0)
		return false;
	if (strncmp(path, "/dev/shm/", 9) == 0)
		return false;
	if (strncmp(path, "/dev/zero", 9) == 0 &&
	    (path[9] == 0 || path[9] == ' '))
		return false;
	return true;
}

/* A mapping a thread stack may live in: the main [stack] (or an old
   kernel's [stack:TID]) or an anonymous mapping (pthread stacks). */
static bool
stack_kind(const char *path)
{
	return path[0] == 0 || strcmp(path, "[stack]") == 0 ||
	       strncmp(path, "[stack:", 7) == 0 ||
	       strncmp(path, "[anon:", 6) == 0;
}

/* One line of a maps text, parsed. */
struct map_line {
	uint64_t lo, hi;
	char perms[5];
	char path[4096];
};

/* The next mapping of the maps text at *CURSOR (maps_parse_line, on a
   copy: the text is not ours to cut), *CURSOR moved past it; lines that
   are not one are passed over. False at the end of the text. */
static bool
next_mapping(const char **cursor, struct map_line *out)
{
	while (*cursor && **cursor) {
		const char *line = *cursor;
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		*cursor = nl ? nl + 1 : NULL;
		char buf[4096 + 256];
		struct mapping m;
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, line, len);
		buf[len] = 0;
		if (!maps_parse_line(buf, &m) || m.lo >= m.hi)
			continue;
		out->lo = m.lo;
		out->hi = m.hi;
		memcpy(out->perms, m.perms, sizeof(m.perms));
		snprintf(out->path, sizeof(out->path), "%s", m.path);
		return true;
	}
	return false;
}

int
leakroots_from_maps(const char *maps,
		    const struct leakroots_range *exclude, size_t nexclude,
		    const uint64_t *sps, size_t nsps,
		    const struct leak_block *blocks, size_t nblocks,
		    struct leak_root **out, size_t *nout)
{
	struct rvec cand = { 0 }, holes = { 0 };
	struct leak_root *res = NULL;
	size_t nres = 0, capres = 0;
	int rc = -ENOMEM;
	struct map_line ml;

	*out = NULL;
	*nout = 0;

	/* Candidate mappings, and the parts of stack mappings below their
	   lowest SP as holes. */
	for (const char *cur = maps; next_mapping(&cur, &ml);) {
		uint64_t lo = ml.lo, hi = ml.hi;
		const char *path = ml.path;
		if (ml.perms[0] == 'r' && ml.perms[1] == 'w' &&
		    !kernel_special(path) && !device(path)) {
			if (push(&cand, lo, hi))
				goto out;
			if (stack_kind(path)) {
				uint64_t low = UINT64_MAX;
				for (size_t i = 0; i < nsps; i++)
					if (sps[i] >= lo && sps[i] < hi &&
					    sps[i] < low)
						low = sps[i];
				if (low != UINT64_MAX) {
					uint64_t cut =
						low - lo > LEAKROOTS_REDZONE
							? low - LEAKROOTS_REDZONE
							: lo;
					if (push(&holes, lo, cut))
						goto out;
				}
			}
		}
	}
	for (size_t i = 0; i < nexclude; i++)
		if (push(&holes, exclude[i].lo, exclude[i].hi))
			goto out;
	for (size_t i = 0; i < nblocks; i++) {
		uint64_t lo = blocks[i].addr;
		uint64_t hi = lo + blocks[i].size < lo ? UINT64_MAX
						       : lo + blocks[i].size;
		if (push(&holes, lo, hi))
			goto out;
	}
	if (cand.n > 1)
		qsort(cand.v, cand.n, sizeof(*cand.v), cmp_range);
	if (holes.n > 1 && sort_ranges(&holes))
		goto out;
	/* Merged into disjoint sorted holes. */
	size_t m = 0;
	for (size_t i = 0; i < holes.n; i++) {
		if (m && holes.v[i].lo <= holes.v[m - 1].hi) {
			if (holes.v[i].hi > holes.v[m - 1].hi)
				holes.v[m - 1].hi = holes.v[i].hi;
		} else {
			holes.v[m++] = holes.v[i];
		}
	}
	holes.n = m;

	/* Each candidate minus the holes (candidates are disjoint). */
	size_t h0 = 0;
	for (size_t c = 0; c < cand.n; c++) {
		uint64_t lo = cand.v[c].lo, hi = cand.v[c].hi;
		while (h0 < holes.n && holes.v[h0].hi <= lo)
			h0++;
		uint64_t cur = lo;
		for (size_t h = h0; h < holes.n && holes.v[h].lo < hi &&
				    cur < hi; h++) {
			if (holes.v[h].hi <= cur)
				continue;
			if (holes.v[h].lo > cur &&
			    add_root(&res, &nres, &capres, cur,
				     holes.v[h].lo))
				goto out;
			if (holes.v[h].hi > cur)
				cur = holes.v[h].hi;
		}
		if (cur < hi && add_root(&res, &nres, &capres, cur, hi))
			goto out;
	}
	*out = res;
	*nout = nres;
	res = NULL;
	rc = 0;
out:
	free(res);
	free(cand.v);
	free(holes.v);
	return rc;
}

int
leakroots_read_maps(pid_t pid, char **text_out)
{
	char fn[64];
	snprintf(fn, sizeof(fn), "/proc/%d/maps", (int)pid);
	*text_out = NULL;
	int fd = open(fn, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 65536, n = 0;
	char *text = malloc(cap);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (cap - n < 4096) {
			char *t = realloc(text, cap * 2);
			if (!t) {
				free(text);
				close(fd);
				return -ENOMEM;
			}
			text = t;
			cap *= 2;
		}
		ssize_t r = read(fd, text + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = -errno;
			free(text);
			close(fd);
			return e;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	text[n] = 0;
	*text_out = text;
	return 0;
}

int
leakroots_of_pid(pid_t pid,
		 const struct leakroots_range *exclude, size_t nexclude,
		 const uint64_t *sps, size_t nsps,
		 const struct leak_block *blocks, size_t nblocks,
		 struct leak_root **out, size_t *nout)
{
	char *text;
	int rc = leakroots_read_maps(pid, &text);
	if (rc)
		return rc;
	rc = leakroots_from_maps(text, exclude, nexclude, sps, nsps, blocks,
				 nblocks, out, nout);
	free(text);
	return rc;
}

/* glibc's heap_info, at the start of each heap of a non-main arena
   (malloc/arena.c): its arena, the previous heap, the bytes in use and
   the bytes made readable and writable. */
struct glibc_heap_info {
	uint64_t ar_ptr, prev, size, mprotect_size;
};

/* glibc's HEAP_MAX_SIZE on 64-bit (2 * DEFAULT_MMAP_THRESHOLD_MAX): the
   size and alignment of a non-main arena's heaps. */
#define GLIBC_HEAP_MAX ((uint64_t)64 << 20)

/* Whether the heap_info read at A (64 MiB aligned) in a mapping ending
   at HI describes a heap glibc made there. */
static bool
glibc_heap_at(uint64_t a, uint64_t hi, const struct glibc_heap_info *h)
{
	if (!h->ar_ptr || !h->size || h->size > GLIBC_HEAP_MAX ||
	    h->mprotect_size < h->size || h->mprotect_size > GLIBC_HEAP_MAX ||
	    a + h->size > hi)
		return false;
	/* The first heap of an arena holds the arena right after itself;
	   later ones point back at an earlier, aligned heap. */
	if (!h->prev)
		return h->ar_ptr > a && h->ar_ptr < a + PAGE;
	return h->prev % GLIBC_HEAP_MAX == 0;
}

int
leakroots_glibc_heaps(const char *maps, struct leakroots_reader *r,
		      struct leakroots_range **out, size_t *nout)
{
	struct map_line ml;
	struct rvec heaps = { 0 };
	*out = NULL;
	*nout = 0;
	for (const char *cur = maps; next_mapping(&cur, &ml);) {
		uint64_t lo = ml.lo, hi = ml.hi;
		const char *path = ml.path;
		if (ml.perms[0] != 'r' || ml.perms[1] != 'w')
			continue;
		if (strcmp(path, "[heap]") == 0) {
			if (push(&heaps, lo, hi))
				goto nomem;
			continue;
		}
		if (path[0] && strncmp(path, "[anon:", 6) != 0)
			continue;
		for (uint64_t a = (lo + GLIBC_HEAP_MAX - 1) & ~(GLIBC_HEAP_MAX - 1);
		     a >= lo && a < hi; a += GLIBC_HEAP_MAX) {
			struct glibc_heap_info h;
			if (leakroots_read(r, a, &h, sizeof(h)) !=
				    (ssize_t)sizeof(h) ||
			    !glibc_heap_at(a, hi, &h))
				continue;
			uint64_t end = a + h.mprotect_size < hi
				? a + h.mprotect_size : hi;
			if (push(&heaps, a, end))
				goto nomem;
		}
	}
	*out = heaps.v;
	*nout = heaps.n;
	return 0;
nomem:
	free(heaps.v);
	return -ENOMEM;
}

void
leakroots_reader_init(struct leakroots_reader *r, pid_t pid)
{
	memset(r, 0, sizeof(*r));
	r->pid = pid;
	r->mem_fd = -1;
}

void
leakroots_reader_fini(struct leakroots_reader *r)
{
	if (r->mem_fd >= 0)
		close(r->mem_fd);
	r->mem_fd = -1;
	for (size_t i = 0; i < r->n_copies; i++)
		free(r->copies[i].data);
	free(r->copies);
	r->copies = NULL;
	r->n_copies = r->copied = 0;
}

/* process_vm_readv, one remote iovec per page so that a transfer stops
   at the first unreadable page instead of failing whole. Returns bytes
   read from ADDR on, or -errno when not even the first byte could be. */
static ssize_t
read_vm(pid_t pid, uint64_t addr, uint8_t *buf, size_t len)
{
	struct iovec remote[IOV_BATCH];
	size_t done = 0;
	while (done < len) {
		size_t n = 0, want = 0;
		uint64_t a = addr + done;
		while (done + want < len && n < IOV_BATCH) {
			size_t chunk = (size_t)(PAGE - (a & (PAGE - 1)));
			if (chunk > len - done - want)
				chunk = len - done - want;
			remote[n].iov_base = (void *)(uintptr_t)a;
			remote[n].iov_len = chunk;
			n++;
			a += chunk;
			want += chunk;
		}
		struct iovec local = { .iov_base = buf + done,
				       .iov_len = want };
		ssize_t r = process_vm_readv(pid, &local, 1, remote, n, 0);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return done ? (ssize_t)done : -errno;
		}
		done += (size_t)r;
		if ((size_t)r < want)
			break;
	}
	return (ssize_t)done;
}

/* pread on /proc/PID/mem, which stops (short or EIO) at an unmapped
   page. */
static ssize_t
read_mem(struct leakroots_reader *r, uint64_t addr, uint8_t *buf,
	 size_t len)
{
	if (r->mem_fd < 0) {
		char fn[64];
		snprintf(fn, sizeof(fn), "/proc/%d/mem", (int)r->pid);
		r->mem_fd = open(fn, O_RDONLY | O_CLOEXEC);
		if (r->mem_fd < 0)
			return -errno;
	}
	size_t done = 0;
	while (done < len) {
		/* Never ask across a page the kernel could fail whole. */
		uint64_t a = addr + done;
		size_t chunk = len - done;
		if (a > (uint64_t)INT64_MAX)
			break; /* beyond off_t */
		ssize_t got = pread(r->mem_fd, buf + done, chunk, (off_t)a);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			/* EIO at a page boundary inside the range: retry
			   page by page up to the first failing one. */
			if (got < 0 && chunk > PAGE - (a & (PAGE - 1))) {
				size_t one = (size_t)(PAGE - (a & (PAGE - 1)));
				got = pread(r->mem_fd, buf + done, one,
					    (off_t)a);
				if (got > 0) {
					done += (size_t)got;
					continue;
				}
			}
			if (!done)
				return got < 0 ? -errno : -EFAULT;
			break;
		}
		done += (size_t)got;
	}
	return (ssize_t)done;
}

int
leakroots_reader_copy(struct leakroots_reader *r, uint64_t lo, uint64_t hi)
{
	if (hi <= lo || hi - lo > LEAKROOTS_COPY_MAX - r->copied)
		return 0;
	uint8_t *data = malloc(hi - lo);
	struct leakroots_copy *v =
		realloc(r->copies, (r->n_copies + 1) * sizeof(*v));
	if (!data || !v) {
		free(data);
		if (v)
			r->copies = v;
		return -ENOMEM;
	}
	r->copies = v;
	ssize_t got = leakroots_read(r, lo, data, hi - lo);
	if (got <= 0) {
		free(data);
		return 0;
	}
	r->copies[r->n_copies++] = (struct leakroots_copy){
		.lo = lo, .hi = lo + (uint64_t)got, .data = data,
	};
	r->copied += (size_t)got;
	return 0;
}

/* In V, N sorted disjoint ranges of STRIDE bytes each whose uint64_t end
   is HI_OFF bytes in: the index of the first with end > ADDR, N if none.
   The copies and the file mappings are both looked up this way. */
static size_t
first_ending_after(const void *v, size_t n, size_t stride, size_t hi_off,
		   uint64_t addr)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t m = a + (b - a) / 2;
		uint64_t hi;
		memcpy(&hi, (const char *)v + m * stride + hi_off, sizeof(hi));
		if (hi <= addr)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

/* The copy holding ADDR, or NULL. */
static const struct leakroots_copy *
copy_of(const struct leakroots_reader *r, uint64_t addr)
{
	size_t a = first_ending_after(r->copies, r->n_copies,
				      sizeof(*r->copies),
				      offsetof(struct leakroots_copy, hi), addr);
	return a < r->n_copies && r->copies[a].lo <= addr ? &r->copies[a]
							   : NULL;
}

const void *
leakroots_view(void *ctx, uint64_t addr, size_t len)
{
	const struct leakroots_copy *c =
		copy_of((const struct leakroots_reader *)ctx, addr);
	if (!c || c->hi - addr < len)
		return NULL;
	return c->data + (addr - c->lo);
}

ssize_t
leakroots_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct leakroots_copy *c =
		len ? copy_of((struct leakroots_reader *)ctx, addr) : NULL;
	if (c) {
		size_t n = c->hi - addr < len ? (size_t)(c->hi - addr) : len;
		memcpy(buf, c->data + (addr - c->lo), n);
		if (n == len)
			return (ssize_t)n;
		/* the rest from the target, as it would be */
		ssize_t more = leakroots_read(ctx, addr + n, (uint8_t *)buf + n,
					      len - n);
		return (ssize_t)n + (more > 0 ? more : 0);
	}
	struct leakroots_reader *r = ctx;
	if (len == 0)
		return 0;
	if (addr + len < addr) /* wraps: read up to the top */
		len = (size_t)(0 - addr);
	ssize_t got;
	if (!r->use_mem) {
		got = read_vm(r->pid, addr, buf, len);
		if (got >= 0)
			return got ? got : -1;
		if (got != -ENOSYS && got != -EPERM)
			return -1;
		r->use_mem = 1;
	}
	got = read_mem(r, addr, buf, len);
	return got > 0 ? got : -1;
}

int
leakroots_thread_regs(pid_t tid, uint64_t regs[LEAKROOTS_NREGS],
		      uint64_t *sp)
{
	struct user_regs_struct u;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &u) < 0)
		return -errno;
	const uint64_t v[LEAKROOTS_NREGS] = {
		u.rax, u.rcx, u.rdx, u.rbx, u.rsi, u.rdi, u.rsp, u.rbp,
		u.r8,  u.r9,  u.r10, u.r11, u.r12, u.r13, u.r14, u.r15,
	};
	memcpy(regs, v, sizeof(v));
	if (sp)
		*sp = u.rsp;
	return 0;
}

/* ---- Vtables (memcheck's multipleinheritance heuristic) ---- */

int
leakroots_index_maps(const char *maps, struct leakroots_maps *ix)
{
	struct map_line ml;
	ix->v = NULL;
	ix->n = 0;
	size_t cap = 0;
	for (const char *cur = maps; next_mapping(&cur, &ml);) {
		if (ml.path[0] == '/' &&
		    (ml.perms[0] == 'r' || ml.perms[2] == 'x')) {
			if (ix->n == cap) {
				cap = cap ? cap * 2 : 64;
				void *nv = realloc(ix->v, cap * sizeof(*ix->v));
				if (!nv) {
					leakroots_maps_fini(ix);
					return -ENOMEM;
				}
				ix->v = nv;
			}
			ix->v[ix->n++] = (struct leakroots_map){
				.lo = ml.lo, .hi = ml.hi,
				.readable = ml.perms[0] == 'r',
				.executable = ml.perms[2] == 'x',
			};
		}
	}
	return 0;
}

void
leakroots_maps_fini(struct leakroots_maps *ix)
{
	free(ix->v);
	ix->v = NULL;
	ix->n = 0;
}

/* The file mapping holding ADDR, or NULL. */
static const struct leakroots_map *
file_map(const struct leakroots_maps *ix, uint64_t addr)
{
	size_t a = first_ending_after(ix->v, ix->n, sizeof(*ix->v),
				      offsetof(struct leakroots_map, hi), addr);
	return a < ix->n && ix->v[a].lo <= addr ? &ix->v[a] : NULL;
}

#define VTABLE_WORDS 20
#define VTABLE_MIN_CODE_PTRS 2

bool
leakroots_is_vtable(const struct leakroots_maps *ix,
		    struct leakroots_reader *r, uint64_t addr)
{
	const struct leakroots_map *m = file_map(ix, addr);
	if (!m || !m->readable)
		return false;
	uint64_t w[VTABLE_WORDS];
	ssize_t got = leakroots_read(r, addr, w, sizeof(w));
	if (got <= 0)
		return false;
	unsigned code = 0;
	for (size_t i = 0; i < (size_t)got / sizeof(*w); i++) {
		if (!w[i])
			continue;
		const struct leakroots_map *c = file_map(ix, w[i]);
		if (c && c->executable && ++code >= VTABLE_MIN_CODE_PTRS)
			return true;
	}
	return false;
}

/* ---- glibc's own pointers into blocks ---- */

#define GLIBC_CHUNK_HDR 16u
#define GLIBC_SIZE_FLAGS 7u
#define GLIBC_IS_MMAPPED 2u

bool
leakroots_glibc_chunk_pointer(struct leakroots_reader *r, uint64_t p,
			      uint64_t lo)
{
	uint64_t size;
	if (p % GLIBC_CHUNK_HDR || lo < GLIBC_CHUNK_HDR ||
	    leakroots_read(r, lo - 8, &size, sizeof(size)) !=
		    (ssize_t)sizeof(size) ||
	    (size & GLIBC_IS_MMAPPED))
		return false;
	return p == lo - GLIBC_CHUNK_HDR + (size & ~(uint64_t)GLIBC_SIZE_FLAGS);
}
