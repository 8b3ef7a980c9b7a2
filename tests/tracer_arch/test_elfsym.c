/* SPDX-License-Identifier: GPL-2.0-or-later */
/* elfsym against the dynamic linker's own view of this process: libc's
   symbols, file bytes and load bias must match what dlsym, the live code
   and /proc/self/maps say. "elfsym static PROG" instead checks a static
   executable, which prints where its malloc is (77 when none was built);
   "elfsym nonelf FILE" adds a non-ELF file to the error cases. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "tests/tracer_arch/check.h"
#include "tracer/elfsym.h"

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

		CHECK(elf_object_lookup(obj, name, &vaddr) == 0 && vaddr == want,
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
	char line[4200], file[4096], *path = realpath(dlpath, NULL);
	FILE *f = fopen("/proc/self/maps", "r");
	uint64_t start, end, off;
	int n = 0;

	while (f && path && n < max && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64
			   " %*s %*s %4095s", &start, &end, &off, file) != 4)
			continue;
		if (strcmp(file, path) != 0)
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
	test_libc_missing(obj);
	test_libc_bias(obj, maps, nmaps, f.bias);
	elf_object_close(obj);
	dlclose(libc);
	return 0;
}

/* This executable: dynamically linked, and AT_ENTRY - e_entry is its
   bias. */
static void
test_self(void)
{
	struct found f = { .suffix = "/no/such/object" };
	struct elf_object *obj = elf_object_open("/proc/self/exe");

	dl_iterate_phdr(find_object, &f);
	CHECK(obj, "self: %s", strerror(errno));
	if (!obj)
		return;
	CHECK(elf_object_has_interp(obj), "self has PT_INTERP");
	CHECK(getauxval(AT_ENTRY) - elf_object_entry(obj) == f.first_bias,
	      "entry bias");
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

int
main(int argc, char **argv)
{
	int ret;

	if (argc >= 2 && strcmp(argv[1], "static") == 0) {
		ret = test_static(argc >= 3 ? argv[2] : NULL);
	} else {
		ret = test_libc();
		test_self();
		test_errors(argc >= 3 && strcmp(argv[1], "nonelf") == 0 ?
				    argv[2] : NULL);
	}
	if (ret)
		return ret;
	if (failures)
		fprintf(stderr, "%d failures\n", failures);
	return failures ? 1 : 0;
}
