/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The symbol cache on disk (cache.h).

   Why: a first run spends most of its start-up inflating compressed debug
   sections (libc's debug file: ~40 ms of an `ls /`), looking up compilation
   units and compiling CFI, for a few hundred addresses. The answers depend
   only on the files, so a second run reads them back instead.

   When a cache holds: its file name is the module's build-id and a hash of
   a key naming everything the answers depend on: heaptrace's own binary
   (its build-id: another heaptrace may describe differently), the module's
   path as mapped (it is printed, "(in /usr/lib/libc.so.6)") and its file's
   identity (device, inode, size, modification time), and the identity of
   the debug file at the module's build-id path, or its absence (installing
   a -dbg package changes the answers). The whole key is also stored in the
   file and compared. A debug file libdw found elsewhere (by .gnu_debuglink)
   is recorded with its identity when the cache is written and checked when
   it is read. Anything that does not match, or a file that does not parse
   to the byte, is ignored: the cache can only cost a miss.

   Format (native byte order: a cache is per machine): "HTSYMC1\n", the key
   (u32 length, bytes), the debug file check (u32 length, bytes), the
   frames (u32 count; each: u64 offset, u8 flags, then as flagged the name,
   the lines (u32 count, strings) and the below-main line; a string is a u32
   length and bytes), the rules (u32 count; each: u64 offset and the rule's
   bytes), and an FNV-1a hash of all that. Written to a temporary file and
   renamed over the old one; runs that finish together each write a whole
   file, merged with what they found there, and the last rename wins. */
#include "cache.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cachedir.h"
#include "common/symbolizer.h"
#include "common/u64map.h"
#include "common/xalloc.h"
#include "frame.h"
#include "rules.h"

static const char magic[8] = "HTSYMC2\n";

/* Bounds a well-formed file stays within; anything past them is garbage. */
#define MAX_STRING (1u << 16)
#define MAX_ENTRIES (1u << 22)

static char *cache_dir; /* NULL: caching off */

struct sym_cache {
	char *path;           /* the cache file */
	char *key;            /* see the file comment */
	char *debug_check;    /* "path dev ino size mtime" of a debug file
				 found elsewhere, or "" */
	Dwfl_Module *mod;     /* for the debug file libdw used, at close */
	struct u64map frames; /* offset -> struct sym_frame * (owned) */
	struct u64map rules;  /* offset -> index into RULE */
	struct sym_rule *rule;
	size_t n_rules, rules_cap;
	struct stat read_st;  /* the file as read_file last merged it */
	bool has_read;
	bool has_stop;        /* STOP_AT is known */
	uint64_t stop_at;     /* sym_cache_stop_at */
	bool dirty;           /* learnt something since read */
};

/* ---- the cache directory ---- */

void
sym_cache_configure(bool on, const char *dir)
{
	free(cache_dir);
	cache_dir = NULL;
	if (!on)
		return;
	cache_dir = dir ? ht_xstrdup(dir) : ht_cache_dir();
	if (cache_dir && !ht_make_dirs(cache_dir)) {
		free(cache_dir);
		cache_dir = NULL;
	}
}

/* ---- keys ---- */

static uint64_t
fnv1a(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

#define FNV_START 0xcbf29ce484222325ULL

uint64_t
sym_cache_checksum(const void *data, size_t len)
{
	return fnv1a(FNV_START, data, len);
}

/* "dev ino size mtime" of PATH, or "none". */
static char *
file_identity(const char *path)
{
	struct stat st;

	if (!path || stat(path, &st) != 0)
		return ht_xstrdup("none");
	return ht_xasprintf("%llu %llu %lld %lld.%09ld",
			    (unsigned long long)st.st_dev,
			    (unsigned long long)st.st_ino,
			    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
			    st.st_mtim.tv_nsec);
}

static void
hex(char *out, const uint8_t *bits, size_t len)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", bits[i]);
}

/* dl_iterate_phdr callback: the build-id note of the first object (the
   program itself) into ARG, a char[2 * 64 + 1]. */
static int
own_build_id(struct dl_phdr_info *info, size_t size, void *arg)
{
	char *out = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			size_t name = (n->n_namesz + 3) & ~3u;
			size_t desc = (n->n_descsz + 3) & ~3u;
			const uint8_t *d = p + sizeof(*n) + name;

			if (d + desc > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    memcmp(p + sizeof(*n), "GNU", 4) == 0 &&
			    n->n_descsz > 0 && n->n_descsz <= 64) {
				hex(out, d, n->n_descsz);
				return 1;
			}
			p = d + desc;
		}
	}
	return 1; /* only the first object is the program */
}

/* What tells this heaptrace binary from any other: its build-id, else
   its file's identity. */
static const char *
self_identity(void)
{
	static char *id;
	char buf[2 * 64 + 1] = "";

	if (id)
		return id;
	dl_iterate_phdr(own_build_id, buf);
	if (buf[0]) {
		id = ht_xstrdup(buf);
	} else {
		char exe[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
		id = file_identity(n > 0 ? exe : NULL);
	}
	return id;
}

/* ---- a byte buffer and a cursor over one ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void
put(struct buf *b, const void *data, size_t len)
{
	ht_xgrow((void **)&b->p, &b->cap, b->len + len, 1);
	memcpy(b->p + b->len, data, len);
	b->len += len;
}

static void
put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, sizeof(v));
}

static void
put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	put_u32(b, (uint32_t)n);
	put(b, s, n);
}

struct cursor {
	const uint8_t *p, *end;
	bool bad;
};

static bool
get(struct cursor *c, void *out, size_t len)
{
	if (c->bad || (size_t)(c->end - c->p) < len) {
		c->bad = true;
		memset(out, 0, len);
		return false;
	}
	memcpy(out, c->p, len);
	c->p += len;
	return true;
}

static uint32_t
get_u32(struct cursor *c)
{
	uint32_t v;

	get(c, &v, sizeof(v));
	return v;
}

/* A malloc'd string, or NULL (C is then bad). */
static char *
get_str(struct cursor *c)
{
	uint32_t n = get_u32(c);
	char *s;

	if (c->bad || n > MAX_STRING || (size_t)(c->end - c->p) < n ||
	    memchr(c->p, '\0', n)) {
		c->bad = true;
		return NULL;
	}
	s = ht_xmalloc((size_t)n + 1);
	memcpy(s, c->p, n);
	s[n] = '\0';
	c->p += n;
	return s;
}

/* ---- entries ---- */

enum { HAS_NAME = 1, HAS_LINES = 2, HAS_BELOW = 4 };

/* Keep F (owned now) for OFF, unless KEEP_OLD and one is kept with at least
   as much (lines) already. Returns whether F was kept; freed if not. */
static bool
frame_store(struct sym_cache *c, uint64_t off, struct sym_frame *f,
	    bool keep_old)
{
	bool fresh;
	uint64_t *slot = u64map_slot(&c->frames, off, &fresh);
	struct sym_frame *old = fresh ? NULL : (void *)(uintptr_t)*slot;

	if (old && keep_old && (old->lines || !f->lines)) {
		sym_frame_free(f);
		return false;
	}
	sym_frame_free(old);
	*slot = (uint64_t)(uintptr_t)f;
	return true;
}

static void
rule_store(struct sym_cache *c, uint64_t off, const struct sym_rule *ru)
{
	bool fresh;
	uint64_t *slot = u64map_slot(&c->rules, off, &fresh);

	if (!fresh)
		return;
	ht_xgrow((void **)&c->rule, &c->rules_cap, c->n_rules + 1,
		 sizeof(*c->rule));
	c->rule[c->n_rules] = *ru;
	*slot = c->n_rules++;
}

/* ---- reading and writing ---- */

/* One frame from C, or NULL when the bytes are not one. */
static struct sym_frame *
read_frame(struct cursor *c)
{
	struct sym_frame *f = ht_xcalloc(1, sizeof(*f));
	uint8_t flags = 0;

	get(c, &flags, 1);
	if (flags & ~(HAS_NAME | HAS_LINES | HAS_BELOW))
		c->bad = true;
	if (!c->bad && (flags & HAS_NAME))
		f->name = get_str(c);
	if (!c->bad && (flags & HAS_LINES)) {
		uint32_t n = get_u32(c);

		if (n == 0 || n > HT_MAX_INLINE)
			c->bad = true;
		f->lines = c->bad ? NULL : ht_xcalloc(n, sizeof(*f->lines));
		for (uint32_t i = 0; !c->bad && i < n; i++) {
			f->lines[i] = get_str(c);
			f->n_lines += f->lines[i] != NULL;
		}
	}
	if (!c->bad && (flags & HAS_BELOW))
		f->below_main = get_str(c);
	if (c->bad) {
		sym_frame_free(f);
		return NULL;
	}
	return f;
}

/* Whether L names a register column, the CFA or a constant. */
static bool
loc_valid(const struct sym_loc *l)
{
	return l->base < SYM_NREGS || l->base == SYM_LOC_CFA ||
	       l->base == SYM_LOC_CONST;
}

/* Whether RU is a rule rules.c could have compiled: the walk indexes the
   registers by its columns, so a file's rule that names others (the file
   made by hand, or by a heaptrace with another register set) is garbage. */
static bool
rule_valid(const struct sym_rule *ru)
{
	if (ru->kind > SYM_RULE_COMPLEX || ru->n_set > SYM_NREGS ||
	    !loc_valid(&ru->cfa))
		return false;
	for (unsigned i = 0; i < ru->n_set; i++)
		if (ru->set[i].col >= SYM_NREGS || !loc_valid(&ru->set[i]))
			return false;
	return true;
}

/* Whether the debug file recorded as CHECK is still the one it was. */
static bool
debug_check_holds(const char *check)
{
	const char *sp = strchr(check, ' ');
	bool same;
	char *path, *now;

	if (!*check)
		return true;
	if (!sp)
		return false;
	path = ht_xasprintf("%.*s", (int)(sp - check), check);
	now = file_identity(path);
	same = strcmp(now, sp + 1) == 0;
	free(path);
	free(now);
	return same;
}

/* Merge the cache file bytes DATA (LEN of them, the checksum last) into C,
   when they are a whole cache for C's key whose debug file is unchanged;
   entries C has already win. Returns whether they were one. */
static bool
merge_bytes(struct sym_cache *c, const uint8_t *data, size_t len)
{
	struct cursor cur;
	uint64_t sum, off;
	char m[sizeof(magic)], *key = NULL, *check = NULL;
	bool ok = false;

	if (len < sizeof(magic) + 8)
		return false;
	memcpy(&sum, data + len - 8, 8);
	if (fnv1a(FNV_START, data, len - 8) != sum)
		return false;
	cur = (struct cursor){ data, data + len - 8, false };
	get(&cur, m, sizeof(m));
	key = get_str(&cur);
	check = get_str(&cur);
	if (cur.bad || memcmp(m, magic, sizeof(m)) != 0 ||
	    strcmp(key, c->key) != 0 || !debug_check_holds(check))
		goto out;
	for (uint32_t i = 0, n = get_u32(&cur); !cur.bad && i < n; i++) {
		struct sym_frame *f;

		get(&cur, &off, sizeof(off));
		if (i >= MAX_ENTRIES || !(f = read_frame(&cur)))
			cur.bad = true;
		else
			frame_store(c, off, f, true);
	}
	for (uint32_t i = 0, n = get_u32(&cur); !cur.bad && i < n; i++) {
		struct sym_rule ru;

		get(&cur, &off, sizeof(off));
		if (i >= MAX_ENTRIES || !get(&cur, &ru, sizeof(ru)) ||
		    !rule_valid(&ru))
			cur.bad = true;
		else
			rule_store(c, off, &ru);
	}
	uint8_t has_stop = 0;
	get(&cur, &has_stop, 1);
	get(&cur, &off, sizeof(off));
	if (!cur.bad && has_stop && !c->has_stop) {
		c->has_stop = true;
		c->stop_at = off;
	}
	ok = !cur.bad && cur.p == cur.end;
	if (ok && !*c->debug_check) {
		free(c->debug_check);
		c->debug_check = check;
		check = NULL;
	}
out:
	free(key);
	free(check);
	return ok;
}

/* Merge the entries of the file at C->PATH into C (merge_bytes). Returns
   whether the file was a cache for C. */
static bool
read_file(struct sym_cache *c)
{
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *data = NULL;
	bool ok = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(magic) + 8 ||
	    st.st_size > (off_t)1 << 30)
		goto out;
	data = ht_xmalloc((size_t)st.st_size);
	if (read(fd, data, (size_t)st.st_size) != st.st_size)
		goto out;
	ok = merge_bytes(c, data, (size_t)st.st_size);
	if (ok) {
		c->read_st = st;
		c->has_read = true;
	}
out:
	free(data);
	close(fd);
	return ok;
}

static void
write_frame(struct buf *b, uint64_t off, const struct sym_frame *f)
{
	uint8_t flags = (f->name ? HAS_NAME : 0) | (f->lines ? HAS_LINES : 0) |
			(f->below_main ? HAS_BELOW : 0);

	put(b, &off, sizeof(off));
	put(b, &flags, 1);
	if (f->name)
		put_str(b, f->name);
	if (f->lines) {
		put_u32(b, f->n_lines);
		for (unsigned i = 0; i < f->n_lines; i++)
			put_str(b, f->lines[i]);
	}
	if (f->below_main)
		put_str(b, f->below_main);
}

/* C's whole content, as the file holds it. */
static void
serialise(const struct sym_cache *c, struct buf *b)
{
	uint64_t off, val, sum;
	size_t n = 0;

	put(b, magic, sizeof(magic));
	put_str(b, c->key);
	put_str(b, c->debug_check);
	for (size_t pos = 0; u64map_next(&c->frames, &pos, &off, &val);)
		n++;
	put_u32(b, (uint32_t)n);
	for (size_t pos = 0; u64map_next(&c->frames, &pos, &off, &val);)
		write_frame(b, off, (const void *)(uintptr_t)val);
	put_u32(b, (uint32_t)c->n_rules);
	for (size_t pos = 0; u64map_next(&c->rules, &pos, &off, &val);) {
		put(b, &off, sizeof(off));
		put(b, &c->rule[val], sizeof(*c->rule));
	}
	uint8_t has_stop = c->has_stop;
	put(b, &has_stop, 1);
	put(b, &c->stop_at, sizeof(c->stop_at));
	sum = fnv1a(FNV_START, b->p, b->len);
	put(b, &sum, sizeof(sum));
}

/* Write B as the file at PATH, whole or not at all. Returns whether it
   was written. */
static bool
write_atomically(const char *path, const struct buf *b)
{
	char *tmp = ht_xasprintf("%s.XXXXXX", path);
	int fd = mkstemp(tmp);
	bool ok = fd >= 0;

	if (ok) {
		size_t done = 0;

		while (ok && done < b->len) {
			ssize_t n = write(fd, b->p + done, b->len - done);

			if (n < 0 && errno == EINTR)
				continue;
			ok = n > 0;
			done += ok ? (size_t)n : 0;
		}
		ok = close(fd) == 0 && ok;
		if (ok && rename(tmp, path) != 0)
			ok = false;
		if (!ok)
			unlink(tmp);
	}
	free(tmp);
	return ok;
}

/* Remove the caches of PATH's module made for other keys (another
   heaptrace build, files since replaced): one file per build-id stays,
   so the directory does not grow with every rebuild. */
static void
remove_others(const char *path)
{
	const char *base = strrchr(path, '/') + 1;
	const char *dash = strrchr(base, '-');
	size_t dir_len = (size_t)(base - path), id_len = (size_t)(dash - base);
	char *dir = ht_xasprintf("%.*s", (int)dir_len, path);
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, base, id_len + 1) != 0 ||
		    strcmp(e->d_name, base) == 0 ||
		    strchr(e->d_name, '.')) /* another run's temporary */
			continue;
		char *other = ht_xasprintf("%s%s", dir, e->d_name);

		unlink(other);
		free(other);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* The debug file libdw used for MOD, when not the build-id path's, as
   "path identity"; "" otherwise. */
static char *
debug_check_of(Dwfl_Module *mod, const char *build_id_path)
{
	const char *debug = NULL;
	char *id, *check;

	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, &debug);
	if (!debug || strchr(debug, ' ') ||
	    (build_id_path && strcmp(debug, build_id_path) == 0))
		return ht_xstrdup("");
	id = file_identity(debug);
	check = ht_xasprintf("%s %s", debug, id);
	free(id);
	return check;
}

/* ---- the interface ---- */

struct sym_cache *
sym_cache_open(Dwfl_Module *mod)
{
	const unsigned char *bits;
	GElf_Addr vaddr, bias;
	const char *name, *file = NULL;
	char idhex[2 * 64 + 1], *debug_path, *main_id, *debug_id;
	int len;
	struct sym_cache *c;

	if (!cache_dir || !dwfl_module_getelf(mod, &bias))
		return NULL;
	len = dwfl_module_build_id(mod, &bits, &vaddr);
	name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &file,
				NULL);
	if (len <= 0 || len > 64 || !name || !file || name[0] != '/')
		return NULL;
	hex(idhex, bits, (size_t)len);
	debug_path = ht_xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug",
				  idhex, idhex + 2);
	main_id = file_identity(file);
	debug_id = file_identity(debug_path);
	free(debug_path);

	c = ht_xcalloc(1, sizeof(*c));
	c->mod = mod;
	c->key = ht_xasprintf("heaptrace %s\nmodule %s\nbuild-id %s\n"
			      "file %s %s\ndebug %s\nrule %zu\n",
			      self_identity(), name, idhex, file, main_id,
			      debug_id, sizeof(struct sym_rule));
	free(main_id);
	free(debug_id);
	c->debug_check = ht_xstrdup("");
	c->path = ht_xasprintf("%s/%s-%016llx", cache_dir, idhex,
			       (unsigned long long)fnv1a(FNV_START, c->key,
							 strlen(c->key)));
	u64map_init(&c->frames);
	u64map_init(&c->rules);
	read_file(c);
	c->dirty = false;
	return c;
}

/* Free C without writing it. */
static void
cache_free(struct sym_cache *c)
{
	uint64_t off, val;

	for (size_t pos = 0; u64map_next(&c->frames, &pos, &off, &val);)
		sym_frame_free((struct sym_frame *)(uintptr_t)val);
	u64map_fini(&c->frames);
	u64map_fini(&c->rules);
	free(c->rule);
	free(c->path);
	free(c->key);
	free(c->debug_check);
	free(c);
}

long
sym_cache_parse(const void *data, size_t len, const char *key)
{
	struct sym_cache *c = ht_xcalloc(1, sizeof(*c));
	long n = -1;
	uint64_t off, val;

	c->key = ht_xstrdup(key);
	c->debug_check = ht_xstrdup("");
	u64map_init(&c->frames);
	u64map_init(&c->rules);
	if (merge_bytes(c, data, len)) {
		n = (long)c->n_rules;
		for (size_t pos = 0; u64map_next(&c->frames, &pos, &off, &val);)
			n++;
	}
	cache_free(c);
	return n;
}

/* Whether the file at C->PATH is the one read_file last merged, as it
   was then. */
static bool
unchanged_since_read(const struct sym_cache *c)
{
	struct stat st;

	return c->has_read && stat(c->path, &st) == 0 &&
	       st.st_dev == c->read_st.st_dev &&
	       st.st_ino == c->read_st.st_ino &&
	       st.st_size == c->read_st.st_size &&
	       st.st_mtim.tv_sec == c->read_st.st_mtim.tv_sec &&
	       st.st_mtim.tv_nsec == c->read_st.st_mtim.tv_nsec;
}

void
sym_cache_close(struct sym_cache *c)
{
	struct buf b = { NULL, 0, 0 };
	char *check;

	if (!c)
		return;
	if (c->dirty) {
		check = debug_check_of(c->mod, NULL);
		/* Another run may have written meanwhile: keep its entries
		   too, ours winning. Not read again when it is the file read
		   at the open (renamed over, a new file is a new inode). */
		if (!unchanged_since_read(c))
			read_file(c);
		if (*check) {
			free(c->debug_check);
			c->debug_check = check;
		} else {
			free(check);
		}
		serialise(c, &b);
		if (write_atomically(c->path, &b))
			remove_others(c->path);
		free(b.p);
	}
	cache_free(c);
}

const struct sym_frame *
sym_cache_frame(const struct sym_cache *c, uint64_t off)
{
	uint64_t *val = u64map_get(&c->frames, off);

	return val ? (const struct sym_frame *)(uintptr_t)*val : NULL;
}

void
sym_cache_put_frame(struct sym_cache *c, uint64_t off,
		    const struct sym_frame *f)
{
	if (frame_store(c, off, sym_frame_copy(f), false))
		c->dirty = true;
}

bool
sym_cache_rule(const struct sym_cache *c, uint64_t off, struct sym_rule *out)
{
	uint64_t *val = u64map_get(&c->rules, off);

	if (!val)
		return false;
	*out = c->rule[*val];
	return true;
}

void
sym_cache_put_rule(struct sym_cache *c, uint64_t off,
		   const struct sym_rule *ru)
{
	size_t before = c->n_rules;

	rule_store(c, off, ru);
	c->dirty |= c->n_rules != before;
}

void
sym_cache_rule_offsets(const struct sym_cache *c,
		       void (*fn)(void *ctx, uint64_t off), void *ctx)
{
	uint64_t off, val;

	for (size_t pos = 0; u64map_next(&c->rules, &pos, &off, &val);)
		fn(ctx, off);
}

bool
sym_cache_stop_at(const struct sym_cache *c, uint64_t *out)
{
	if (!c || !c->has_stop)
		return false;
	*out = c->stop_at;
	return true;
}

void
sym_cache_put_stop_at(struct sym_cache *c, uint64_t at)
{
	if (!c || (c->has_stop && c->stop_at == at))
		return;
	c->has_stop = true;
	c->stop_at = at;
	c->dirty = true;
}
