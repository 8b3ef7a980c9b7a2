/* SPDX-License-Identifier: GPL-2.0-or-later */
/* elfsym against the dynamic linker's own view of this process: libc's
   symbols (functions and variables), file bytes and load bias must match
   what dlsym, the live code and /proc/self/maps say. "elfsym static PROG" instead checks a static
   executable, which prints where its malloc is (77 when none was built).
   Hand-made objects cover shared file pages and versions spelled into
   .symtab names. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "tests/check.h"
#include "tracer/target/elfsym.h"

struct found {
	const char *suffix;
	char path[4096];
	uint64_t bias;
	bool first_seen;
	uint64_t first_bias;
};

static int
find_object(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;
	size_t n = strlen(info->dlpi_name), m = strlen(f->suffix);

	(void)size;
	if (!f->first_seen) {
		/* The first entry is the executable itself. */
		f->first_seen = true;
		f->first_bias = info->dlpi_addr;
	}
	if (n < m || strcmp(info->dlpi_name + n - m, f->suffix) != 0)
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	f->bias = info->dlpi_addr;
	return 1;
}

/* Functions whose address dlsym in libc's own handle gives directly (none
   is an IFUNC), so symbol value = dlsym - bias. */
static const char *const libc_funcs[] = {
	"malloc", "free", "calloc", "realloc", "memalign", "posix_memalign",
	"aligned_alloc", "valloc", "pvalloc", "reallocarray",
	"malloc_usable_size", "__libc_malloc", "mmap", "munmap", "_exit",
};

static void
test_libc_symbols(struct elf_object *obj, void *libc, uint64_t bias)
{
	for (size_t i = 0; i < sizeof(libc_funcs) / sizeof(libc_funcs[0]);
	     i++) {
		const char *name = libc_funcs[i];
		uint64_t want = (uint64_t)(uintptr_t)dlsym(libc, name) - bias;
		struct elf_symbol s;
		uint64_t vaddr = 0;

		CHECK(elf_object_lookup(obj, name, &vaddr) == 0 &&
			      vaddr == want,
		      "%s: %#" PRIx64 " want %#" PRIx64, name, vaddr, want);
		CHECK(elf_object_find(obj, name, &s) == 0 && s.dynamic &&
			      !s.ifunc && s.size > 0 && s.vaddr == want,
		      "%s", name);
	}
}

/* The bytes in the file at malloc are the bytes libc runs. */
static void
test_libc_bytes(struct elf_object *obj, void *libc, uint64_t bias)
{
	const uint8_t *live = dlsym(libc, "malloc");
	uint8_t buf[64];
	uint64_t vaddr, off;

	CHECK(elf_object_lookup(obj, "malloc", &vaddr) == 0, "malloc");
	CHECK(elf_object_read(obj, vaddr, buf, sizeof(buf)) ==
		      (int)sizeof(buf), "read");
	CHECK(memcmp(buf, live, sizeof(buf)) == 0, "file and memory differ");
	CHECK((uint64_t)(uintptr_t)live == bias + vaddr, "bias");
	CHECK(elf_object_vaddr_to_offset(obj, vaddr, &off) == 0, "offset");
	CHECK(elf_object_vaddr_to_offset(obj, UINT64_MAX - 1, &off) ==
		      -ENOENT, "offset of nowhere");
	CHECK(elf_object_read(obj, UINT64_MAX - 1, buf, 1) == -ENOENT,
	      "read nowhere");
}

/* memcpy has two versions in libc: memcpy@GLIBC_2.2.5, a plain function,
   and memcpy@@GLIBC_2.14, the default, an IFUNC. The lookup must pick the
   default: its resolver, called here, returns what dlsym resolved. */
static void
test_libc_ifunc(struct elf_object *obj, void *libc, uint64_t bias)
{
	void *old = dlvsym(libc, "memcpy", "GLIBC_2.2.5");
	void *cur = dlsym(libc, "memcpy");
	struct elf_symbol s;
	uint64_t vaddr;

	CHECK(elf_object_find(obj, "memcpy", &s) == 0 && s.ifunc && s.dynamic,
	      "memcpy is an IFUNC");
	CHECK(elf_object_lookup(obj, "memcpy", &vaddr) == -ENOTSUP,
	      "lookup refuses IFUNCs");
	CHECK(old && s.vaddr != (uint64_t)(uintptr_t)old - bias,
	      "picked the hidden memcpy@GLIBC_2.2.5");
	if (s.ifunc) {
		void *(*resolver)(void) =
			(void *(*)(void))(uintptr_t)(bias + s.vaddr);

		CHECK(resolver() == cur, "resolver gives %p, dlsym %p",
		      resolver(), cur);
	}
}

/* Variables: elf_object_find_data finds them where dlsym does, and finds
   no function. */
static void
test_libc_data(struct elf_object *obj, void *libc, uint64_t bias)
{
	static const char *const vars[] = { "stdout", "environ", "optind" };
	struct elf_symbol s;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		uint64_t want = (uint64_t)(uintptr_t)dlsym(libc, vars[i]) - bias;
		int ret = elf_object_find_data(obj, vars[i], &s);

		CHECK(ret == 0 && s.vaddr == want && s.dynamic && s.size,
		      "%s: %d, %#llx (want %#llx), size %llu", vars[i], ret,
		      (unsigned long long)s.vaddr, (unsigned long long)want,
		      (unsigned long long)s.size);
	}
	CHECK(elf_object_find_data(obj, "malloc", &s) == -ENOENT,
	      "malloc is no variable");
	CHECK(elf_object_find_data(obj, "no_such_variable", &s) == -ENOENT,
	      "missing variable");
}

static void
test_libc_missing(struct elf_object *obj)
{
	struct elf_symbol s;
	uint64_t vaddr;

	CHECK(elf_object_lookup(obj, "no_such_function_here", &vaddr) ==
		      -ENOENT, "missing");
	CHECK(elf_object_lookup(obj, "", &vaddr) == -ENOENT, "empty");
	CHECK(elf_object_lookup(obj, "mallo", &vaddr) == -ENOENT, "prefix");
	CHECK(elf_object_lookup(obj, "malloc@@GLIBC_2.2.5", &vaddr) == -ENOENT,
	      "versioned names are not looked up");
	/* Data, not functions. */
	CHECK(elf_object_find(obj, "environ", &s) == -ENOENT, "environ");
	CHECK(elf_object_find(obj, "stdout", &s) == -ENOENT, "stdout");
}

struct mapping {
	uint64_t start, offset;
};

/* The mappings of DLPATH in /proc/self/maps, read before any elf_object
   maps the file itself. The kernel shows the canonical path, ld.so the one
   it opened. Returns their count, at most MAX. */
static int
read_mappings(const char *dlpath, struct mapping *m, int max)
{
	char line[4200], *path = realpath(dlpath, NULL);
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t start, end, off;
	int n = 0;

	while (f && path && n < max && fgets(line, sizeof(line), f)) {
		/* the file is the rest of the line: its path may have spaces */
		int at = -1;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64
			   " %*s %*s %n", &start, &end, &off, &at) != 3 || at < 0)
			continue;
		line[strcspn(line, "\n")] = 0;
		if (strcmp(line + at, path) != 0)
			continue;
		m[n].start = start;
		m[n].offset = off;
		n++;
	}
	if (f)
		fclose(f);
	free(path);
	return n;
}

/* Every libc mapping gives the bias ld.so used. */
static void
test_libc_bias(struct elf_object *obj, const struct mapping *m, int n,
	       uint64_t bias)
{
	uint64_t got, lowest = UINT64_MAX;

	CHECK(n >= 2, "%d libc mappings", n);
	for (int i = 0; i < n; i++) {
		if (m[i].start < lowest)
			lowest = m[i].start;
		got = 0;
		CHECK(elf_object_bias_from_mapping(obj, m[i].start,
						   m[i].offset, &got) == 0 &&
			      got == bias,
		      "mapping %#" PRIx64 " offset %#" PRIx64 ": bias %#" PRIx64
		      " want %#" PRIx64, m[i].start, m[i].offset, got, bias);
	}
	CHECK(lowest - elf_object_first_vaddr(obj) == bias, "first_vaddr");
	CHECK(elf_object_bias_from_mapping(obj, lowest, UINT64_MAX / 2, &got) ==
		      -ENOENT, "offset past the file");
}

static int
test_libc(void)
{
	struct found f = { .suffix = "/libc.so.6" };
	struct mapping maps[16];
	struct elf_object *obj;
	void *libc;
	int nmaps;

	dl_iterate_phdr(find_object, &f);
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	if (!f.path[0] || !libc) {
		fprintf(stderr, "libc.so.6 not found in this process\n");
		return EXIT_HARNESS;
	}
	nmaps = read_mappings(f.path, maps, 16);
	obj = elf_object_open(f.path);
	CHECK(obj, "%s: %s", f.path, strerror(errno));
	if (!obj)
		return 1;
	CHECK(elf_object_is_dyn(obj), "libc is ET_DYN");
	test_libc_symbols(obj, libc, f.bias);
	test_libc_bytes(obj, libc, f.bias);
	test_libc_ifunc(obj, libc, f.bias);
	test_libc_data(obj, libc, f.bias);
	test_libc_missing(obj);
	test_libc_bias(obj, maps, nmaps, f.bias);
	elf_object_close(obj);
	dlclose(libc);
	return 0;
}

/* This executable: dynamically linked, AT_ENTRY - e_entry is its bias,
   and each of its mappings gives that bias or admits it cannot tell. */
static void
test_self(void)
{
	struct found f = { .suffix = "/no/such/object" };
	struct mapping m[16];
	int n = read_mappings("/proc/self/exe", m, 16);
	struct elf_object *obj = elf_object_open("/proc/self/exe");
	uint64_t got;

	dl_iterate_phdr(find_object, &f);
	CHECK(obj, "self: %s", strerror(errno));
	if (!obj)
		return;
	CHECK(elf_object_has_interp(obj), "self has PT_INTERP");
	CHECK(getauxval(AT_ENTRY) - elf_object_entry(obj) == f.first_bias,
	      "entry bias");
	CHECK(n >= 2, "%d mappings of self", n);
	for (int i = 0; i < n; i++) {
		int ret = elf_object_bias_from_mapping(obj, m[i].start,
						       m[i].offset, &got);

		CHECK(ret == -ENOTUNIQ || (ret == 0 && got == f.first_bias),
		      "self mapping %#" PRIx64 " offset %#" PRIx64 ": %d",
		      m[i].start, m[i].offset, ret);
	}
	CHECK(n >= 1 && elf_object_bias_from_mapping(obj, m[0].start,
						     m[0].offset, &got) == 0 &&
		      got == f.first_bias, "lowest mapping");
	elf_object_close(obj);
}

/* A hand-made ET_DYN whose PT_LOADs share file pages, as in small
   objects. A: offset 0, vaddr 0, 0x1200 bytes. B: offset 0x1800, vaddr
   0x2800, 0x100 bytes (0x400 in memory), so it starts in A's last page.
   C and D start in the same page: 0x2100 at 0x5100, and 0x2400 at
   0x7400, 0x80 bytes each. Mapped with bias 0x10000. */
static const struct {
	uint64_t offset, vaddr, filesz, memsz;
} shared_loads[] = {
	{ 0x0, 0x0, 0x1200, 0x1200 },
	{ 0x1800, 0x2800, 0x100, 0x400 },
	{ 0x2100, 0x5100, 0x80, 0x80 },
	{ 0x2400, 0x7400, 0x80, 0x80 },
};

static struct elf_object *
open_shared_page_object(void)
{
	static uint8_t image[0x3000];
	char path[] = "/tmp/ht-elfsym-XXXXXX";
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	Elf64_Phdr *ph = (Elf64_Phdr *)(image + sizeof(*eh));
	struct elf_object *obj;
	int fd = mkstemp(path);

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_entry = 0x1234;
	eh->e_phoff = sizeof(*eh);
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 4;
	for (int i = 0; i < 4; i++)
		ph[i] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R,
				      .p_offset = shared_loads[i].offset,
				      .p_vaddr = shared_loads[i].vaddr,
				      .p_filesz = shared_loads[i].filesz,
				      .p_memsz = shared_loads[i].memsz,
				      .p_align = 0x1000 };
	image[0x18ff] = 0xab;
	CHECK(fd >= 0 && write(fd, image, sizeof(image)) == sizeof(image),
	      "write");
	if (fd < 0)
		return NULL;
	close(fd);
	obj = elf_object_open(path);
	CHECK(obj, "open: %s", strerror(errno));
	unlink(path);
	return obj;
}

static void
test_shared_page(void)
{
	struct elf_object *obj = open_shared_page_object();
	uint8_t buf[16];
	uint64_t v = 0;

	if (!obj)
		return;
	CHECK(elf_object_is_dyn(obj) && !elf_object_has_interp(obj), "type");
	CHECK(elf_object_entry(obj) == 0x1234, "entry");
	CHECK(elf_object_first_vaddr(obj) == 0, "first_vaddr");
	CHECK(elf_object_bias_from_mapping(obj, 0x10000, 0, &v) == 0 &&
		      v == 0x10000, "A: %#" PRIx64, v);
	/* B's mapping (vaddr page 0x2000, file page 0x1000) is B's, not a
	   piece of A. */
	CHECK(elf_object_bias_from_mapping(obj, 0x12000, 0x1000, &v) == 0 &&
		      v == 0x10000, "B: %#" PRIx64, v);
	CHECK(elf_object_bias_from_mapping(obj, 0x15000, 0x2000, &v) ==
		      -ENOTUNIQ, "C and D share their first page");
	CHECK(elf_object_bias_from_mapping(obj, 0x15000, 0x2050, &v) ==
		      -ENOTUNIQ, "C and D, inside");
	CHECK(elf_object_bias_from_mapping(obj, 0x10000, 0x3000, &v) ==
		      -ENOENT, "past the file bytes");
	CHECK(elf_object_vaddr_to_offset(obj, 0x2800, &v) == 0 && v == 0x1800,
	      "offset of B");
	CHECK(elf_object_vaddr_to_offset(obj, 0x2900, &v) == -ENOENT,
	      "B's bss has no file offset");
	CHECK(elf_object_read(obj, 0x28ff, buf, sizeof(buf)) == 1 &&
		      buf[0] == 0xab, "short read at the end of B");
	CHECK(elf_object_read(obj, 0x2900, buf, sizeof(buf)) == -ENOENT,
	      "read in bss");
	CHECK(elf_object_lookup(obj, "malloc", &v) == -ENOENT,
	      "no symbol tables");
	elf_object_close(obj);
}

/* Versions spelled into .symtab names: the default one wins, and the
   versioned spellings are not names of their own. */
static void
test_versioned_symtab(const char *path)
{
	struct elf_object *obj = elf_object_open(path);
	struct elf_symbol s, v1, v2;

	CHECK(obj, "%s: %s", path, strerror(errno));
	if (!obj)
		return;
	CHECK(elf_object_find(obj, "ht_v1", &v1) == 0 &&
		      elf_object_find(obj, "ht_v2", &v2) == 0 &&
		      v1.vaddr != v2.vaddr, "ht_v1, ht_v2");
	CHECK(elf_object_find(obj, "ht_versioned", &s) == 0 && !s.dynamic &&
		      s.vaddr == v2.vaddr,
	      "ht_versioned is ht_v2, the default");
	CHECK(elf_object_find(obj, "ht_versioned@HT_1", &s) == -ENOENT,
	      "spelled version");
	CHECK(elf_object_find(obj, "ht_v", &s) == -ENOENT, "prefix");
	elf_object_close(obj);
}

static void
expect_open_error(const char *path, int err)
{
	struct elf_object *obj;

	errno = 0;
	obj = elf_object_open(path);
	CHECK(!obj && errno == err, "%s: errno %d (%s), want %d", path, errno,
	      strerror(errno), err);
	elf_object_close(obj);
}

/* A file of LEN bytes from BYTES, opened: not ELF however it starts. */
static void
expect_enoexec_bytes(const void *bytes, size_t len)
{
	char path[] = "/tmp/ht-elfsym-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	if (fd < 0)
		return;
	CHECK(write(fd, bytes, len) == (ssize_t)len, "write");
	close(fd);
	expect_open_error(path, ENOEXEC);
	unlink(path);
}

static void
test_errors(const char *nonelf)
{
	static const char text[] = "#!/bin/sh\necho not an ELF file\n";
	static const char truncated[] = "\177ELF\002\001\001";

	if (nonelf)
		expect_open_error(nonelf, ENOEXEC);
	expect_enoexec_bytes(text, sizeof(text) - 1);
	expect_enoexec_bytes(truncated, sizeof(truncated) - 1);
	expect_enoexec_bytes("", 0);
	expect_open_error("/dev/null", ENOEXEC);
	expect_open_error("/", EISDIR);
	expect_open_error("/no/such/file", ENOENT);
	elf_object_close(NULL);
}

/* The static program prints the address of its malloc; it is not PIE, so
   that is the .symtab value. */
static int
test_static(const char *prog)
{
	struct elf_object *obj;
	struct elf_symbol s;
	char cmd[4200], out[64] = "";
	unsigned long long printed = 0;
	uint64_t vaddr;
	FILE *p;

	if (!prog || !prog[0]) {
		printf("SKIP: no static executable (static libc missing)\n");
		return EXIT_SKIP;
	}
	obj = elf_object_open(prog);
	CHECK(obj, "%s: %s", prog, strerror(errno));
	if (!obj)
		return 1;
	CHECK(!elf_object_has_interp(obj), "static has no PT_INTERP");
	CHECK(!elf_object_is_dyn(obj), "static is ET_EXEC");
	CHECK(elf_object_find(obj, "malloc", &s) == 0 && !s.dynamic &&
		      !s.ifunc, "malloc in .symtab");
	CHECK(elf_object_lookup(obj, "malloc", &vaddr) == 0, "lookup");
	CHECK(elf_object_find(obj, "memcpy", &s) == 0 && s.ifunc,
	      "static memcpy is an IFUNC");
	CHECK(elf_object_lookup(obj, "no_such_function_here", &vaddr) ==
		      -ENOENT, "missing");
	snprintf(cmd, sizeof(cmd), "'%s'", prog);
	p = popen(cmd, "r");
	CHECK(p && fgets(out, sizeof(out), p) &&
		      sscanf(out, "%llx", &printed) == 1,
	      "running %s", prog);
	if (p)
		CHECK(pclose(p) == 0, "exit status");
	CHECK(printed == vaddr, "malloc at %#llx, symtab says %#" PRIx64,
	      printed, vaddr);
	elf_object_close(obj);
	return 0;
}

/* elfsym [NONELF [VERSIONED_O]] | elfsym static [PROG] */
int
main(int argc, char **argv)
{
	int ret;

	if (argc >= 2 && strcmp(argv[1], "static") == 0) {
		ret = test_static(argc >= 3 ? argv[2] : NULL);
	} else {
		ret = test_libc();
		test_self();
		test_shared_page();
		test_errors(argc >= 2 ? argv[1] : NULL);
		if (argc >= 3)
			test_versioned_symtab(argv[2]);
	}
	if (ret)
		return ret;
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
