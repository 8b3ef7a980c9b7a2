/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Tests of output/site_name.c: the frame that names a site, on stacks
   made by hand as heaptrace writes them for programs with and without
   debug info, for libc-internal allocations, Rust, C++, jemalloc and
   --alloc-fn wrappers; the objects' tests and the one-line text.
   Usage: test_site_name; exit 0 pass, 1 fail. */
#include "output/site_name.h"
#include "output/site_wrappers.h"

#include <stdlib.h>
#include <string.h>

#include "common/synthframe.h"
#include "tests/check.h"

/* Where the hand-made frames lie: libc (whose frames may carry a
   file:line from libc6-dbg, and then no object), a program, a library. */
#define LIBC 0x7f0000001000u
#define PROG 0x555500001000u
#define LIBJQ 0x7f0000801000u

static char libc_path[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
static char prog_path[] = "/usr/bin/prog";
static char libjq_path[] = "/usr/lib/x86_64-linux-gnu/libjq.so.1.0.4";

static struct sites_mapping maps[] = { /* by their start, as read */
	{ .start = PROG - 0x1000, .end = PROG + 0x100000, .file = prog_path },
	{ .start = LIBC - 0x1000, .end = LIBC + 0x100000, .file = libc_path },
	{ .start = LIBJQ - 0x1000, .end = LIBJQ + 0x100000,
	  .file = libjq_path },
};
static struct sites_file with_maps = { .mappings = maps, .n_mappings = 3 };
static struct sites_file without_maps;

/* A frame: address, function, file (NULL), line, object (NULL). */
#define F(addr, fn, file, line, obj) \
	{ (addr), (char *)(fn), (char *)(file), (line), (char *)(obj) }

/* The text naming the site of frames FR[0..N) in SF with DESC; "NULL"
   for none. The result is static. */
static const char *
name_of(const struct sites_file *sf, const char *desc, struct sites_frame *fr,
	size_t n)
{
	static char buf[512];
	struct sites_site s = { .frames = fr, .n_frames = n };
	struct site_naming nm;
	site_naming_init(&nm, sf, desc, NULL, 0, false);
	const struct sites_frame *named = site_name_frame(&nm, &s);
	if (!named)
		return "NULL";
	char *t = site_frame_text(named);
	snprintf(buf, sizeof(buf), "%s", t);
	free(t);
	return buf;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define EXPECT(sf, desc, frames, want)                                   \
	do {                                                             \
		const char *got_ = name_of(sf, desc, frames, N(frames)); \
		CHECK(strcmp(got_, want) == 0, "got '%s', want '%s'",    \
		      got_, want);                                       \
	} while (0)

/* Debian's jq: no debug info but libjq's exported names; glibc's frames
   with file:line (libc6-dbg). The old rule said "(below main)". */
static void
test_no_debug_info(void)
{
	struct sites_frame jq[] = {
		F(LIBC + 0x10, "malloc", "malloc.c", 3281, NULL),
		F(LIBJQ + 0x10, "jv_mem_alloc", NULL, 0, libjq_path),
		F(LIBJQ + 0x20, "???", NULL, 0, libjq_path),
		F(LIBJQ + 0x30, "jv_object_set", NULL, 0, libjq_path),
		F(PROG + 0x10, "???", NULL, 0, prog_path),
		F(LIBC + 0x20, "(below main)", "libc_start_call_main.h", 58,
		  NULL),
		F(LIBC + 0x30, "__libc_start_main@@GLIBC_2.34", "libc-start.c",
		  360, NULL),
	};
	EXPECT(&with_maps, NULL, jq, "jv_mem_alloc (in " "/usr/lib/x86_64-"
	       "linux-gnu/libjq.so.1.0.4)");
	/* a wrapper is the program's own code unless --alloc-fn says */
	EXPECT(&with_maps, "--alloc-fn=jv_mem_alloc --depth=3", jq,
	       "jv_object_set (in /usr/lib/x86_64-linux-gnu/libjq.so.1.0.4)");
	EXPECT(&with_maps, "--depth=3 --alloc-fn=jv_mem_alloc", jq,
	       "jv_object_set (in /usr/lib/x86_64-linux-gnu/libjq.so.1.0.4)");
	EXPECT(&with_maps, "--alloc-fn=jv_mem_allo --alloc-fn=jv_mem_alloc2",
	       jq, "jv_mem_alloc (in /usr/lib/x86_64-linux-gnu/libjq.so.1.0.4)");
	EXPECT(&with_maps, "--xalloc-fn=jv_mem_alloc", jq,
	       "jv_mem_alloc (in /usr/lib/x86_64-linux-gnu/libjq.so.1.0.4)");
}

/* A stripped program: its unnamed address, not libc's start-up. */
static void
test_stripped(void)
{
	struct sites_frame st[] = {
		F(LIBC + 0x10, "malloc", "malloc.c", 3281, NULL),
		F(PROG + 0x44, "???", NULL, 0, prog_path),
		F(LIBC + 0x20, "(below main)", "libc_start_call_main.h", 58,
		  NULL),
		F(LIBC + 0x30, "__libc_start_main", "libc-start.c", 360, NULL),
		F(PROG + 0x8, "???", NULL, 0, prog_path),
	};
	EXPECT(&with_maps, NULL, st, "??? [0x555500001044] (in /usr/bin/prog)");
	/* what a frame is without the mappings is its object, when given */
	EXPECT(&without_maps, NULL, st,
	       "??? [0x555500001044] (in /usr/bin/prog)");
}

/* The mappings tell a libc frame that has a file:line and no object. */
static void
test_libc_by_mapping(void)
{
	struct sites_frame fo[] = {
		F(LIBC + 0x10, "malloc", "malloc.c", 3281, NULL),
		F(LIBC + 0x40, "__fopen_internal", "iofopen.c", 86, NULL),
		F(PROG + 0x10, "read_config", NULL, 0, prog_path),
		F(PROG + 0x20, "main", NULL, 0, prog_path),
	};
	EXPECT(&with_maps, NULL, fo, "read_config (in /usr/bin/prog)");
	EXPECT(&without_maps, NULL, fo, "__fopen_internal (iofopen.c:86)");
}

/* An allocation libc makes for itself: its own caller of malloc. */
static void
test_libc_internal(void)
{
	struct sites_frame in[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(LIBC + 0x50, "_IO_file_doallocate", NULL, 0, libc_path),
		F(LIBC + 0x60, "_IO_doallocbuf", NULL, 0, libc_path),
	};
	EXPECT(&with_maps, NULL, in,
	       "_IO_file_doallocate (in /usr/lib/x86_64-linux-gnu/libc.so.6)");
	/* libc's frames outward of the program's are not its callers */
	struct sites_frame out[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(LIBC + 0x18, "strdup", NULL, 0, libc_path),
		F(PROG + 0x44, "???", NULL, 0, prog_path),
		F(LIBC + 0x30, "__libc_start_main", NULL, 0, libc_path),
	};
	EXPECT(&with_maps, NULL, out, "??? [0x555500001044] (in /usr/bin/prog)");
	struct sites_frame only[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
	};
	EXPECT(&with_maps, NULL, only,
	       "malloc (in /usr/lib/x86_64-linux-gnu/libc.so.6)");
	struct sites_frame unknown[] = {
		F(LIBC + 0x70, "???", NULL, 0, libc_path),
		F(LIBC + 0x20, "(below main)", NULL, 0, libc_path),
	};
	EXPECT(&with_maps, NULL, unknown,
	       "??? [0x7F0000001070] (in /usr/lib/x86_64-linux-gnu/libc.so.6)");
	struct sites_site none = { .n_frames = 0 };
	struct site_naming nm;
	site_naming_init(&nm, &with_maps, NULL, NULL, 0, false);
	CHECK(site_name_frame(&nm, &none) == NULL, "no frames");
}

/* With debug info, as before: the first function of the program. */
static void
test_debug_info(void)
{
	struct sites_frame dbg[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(PROG + 0x10, "make_list", "prog.c", 8, NULL),
		F(PROG + 0x20, "main", "prog.c", 15, NULL),
	};
	EXPECT(&with_maps, NULL, dbg, "make_list (prog.c:8)");
	EXPECT(&without_maps, NULL, dbg, "make_list (prog.c:8)");
}

/* Other allocators: C++'s new, Rust's shims, jemalloc; a language's own
   wrapper (Perl's) is the program's code. */
static void
test_other_allocators(void)
{
	struct sites_frame cxx[] = {
		F(0x9000, "operator new(unsigned long)", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(PROG + 0x10, "Tree::grow()", NULL, 0, prog_path),
	};
	EXPECT(&with_maps, NULL, cxx, "Tree::grow() (in /usr/bin/prog)");
	struct sites_frame rust[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(PROG + 0x10, "__rust_alloc", NULL, 0, prog_path),
		F(PROG + 0x14, "__rdl_alloc", NULL, 0, prog_path),
		F(PROG + 0x18, "alloc::alloc::alloc::h0123456789abcdef", NULL,
		  0, prog_path),
		F(PROG + 0x1c, "<alloc::alloc::Global as "
		  "core::alloc::Allocator>::allocate", NULL, 0, prog_path),
		F(PROG + 0x20, "app::build_index", "src/index.rs", 42, NULL),
	};
	EXPECT(&with_maps, NULL, rust, "app::build_index (src/index.rs:42)");
	struct sites_frame je[] = {
		F(0xa000, "malloc", NULL, 0, "/usr/lib/libjemalloc.so.2"),
		F(0xa010, "je_prof_backtrace", NULL, 0,
		  "/usr/lib/libjemalloc.so.2"),
		F(PROG + 0x10, "cache_fill", NULL, 0, prog_path),
	};
	EXPECT(&without_maps, NULL, je, "cache_fill (in /usr/bin/prog)");
	struct sites_frame perl[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(0xb000, "Perl_safesysmalloc", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libperl.so.5.36"),
		F(0xb010, "Perl_newSV", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libperl.so.5.36"),
	};
	EXPECT(&without_maps, NULL, perl, "Perl_safesysmalloc (in "
	       "/usr/lib/x86_64-linux-gnu/libperl.so.5.36)");
	/* a C++ name with blanks given to --alloc-fn */
	EXPECT(&with_maps, "--alloc-fn=Tree::grow() --depth=2", cxx,
	       "operator new(unsigned long) (in "
	       "/usr/lib/x86_64-linux-gnu/libstdc++.so.6)");
}

/* C++'s and Rust's standard libraries are passed over for the program's
   frame that called them: std::vector's growth, a std::string built in
   libstdc++, a Rust Vec's push; with no program frame, the standard
   library's own names the site. */
static void
test_standard_library(void)
{
	struct sites_frame vec[] = {
		F(0x9000, "operator new(unsigned long)", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(PROG + 0x10, "std::__new_allocator<demo::Posting>::allocate"
		  "(unsigned long, void const*)", "new_allocator.h", 137, NULL),
		F(PROG + 0x20, "void std::vector<demo::Posting, std::allocator<"
		  "demo::Posting> >::_M_realloc_insert<demo::Posting const&>("
		  "__gnu_cxx::__normal_iterator<demo::Posting*, std::vector<"
		  "demo::Posting, std::allocator<demo::Posting> > >, "
		  "demo::Posting const&)", "vector.tcc", 440, NULL),
		F(PROG + 0x30, "demo::Index::add(unsigned long)", "demo.cpp",
		  40, NULL),
		F(PROG + 0x40, "main", "demo.cpp", 90, NULL),
	};
	EXPECT(&with_maps, NULL, vec, "demo::Index::add(unsigned long) "
	       "(demo.cpp:40)");
	struct sites_frame str[] = {
		F(0x9000, "operator new(unsigned long)", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(0x9100, "void std::__cxx11::basic_string<char, std::char_"
		  "traits<char>, std::allocator<char> >::_M_construct<char "
		  "const*>(char const*, char const*, std::forward_iterator_"
		  "tag)", NULL, 0, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(PROG + 0x10, "parse_request(char const*)", "demo.cpp", 95,
		  NULL),
	};
	EXPECT(&with_maps, NULL, str, "parse_request(char const*) "
	       "(demo.cpp:95)");
	/* a frame in libstdc++ without a std:: name is its own too */
	struct sites_frame pool[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(0x9200, "__cxa_get_globals", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(PROG + 0x10, "worker", "w.cpp", 7, NULL),
	};
	EXPECT(&without_maps, NULL, pool, "worker (w.cpp:7)");
	/* only the standard library and start-up: its first named frame */
	struct sites_frame only[] = {
		F(0x9000, "operator new(unsigned long)", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(0x9300, "std::locale::_Impl::_Impl(unsigned long)", NULL, 0,
		  "/usr/lib/x86_64-linux-gnu/libstdc++.so.6"),
		F(LIBC + 0x20, "(below main)", "libc_start_call_main.h", 58,
		  NULL),
	};
	EXPECT(&with_maps, NULL, only, "std::locale::_Impl::_Impl(unsigned "
	       "long) (in /usr/lib/x86_64-linux-gnu/libstdc++.so.6)");
	struct sites_frame rust[] = {
		F(LIBC + 0x10, "malloc", NULL, 0, libc_path),
		F(PROG + 0x10, "__rust_alloc", NULL, 0, prog_path),
		F(PROG + 0x14, "alloc::raw_vec::RawVec<T,A>::reserve_for_push::"
		  "h0123456789abcdef", NULL, 0, prog_path),
		F(PROG + 0x18, "<alloc::vec::Vec<T> as core::iter::traits::"
		  "collect::FromIterator<T>>::from_iter", NULL, 0, prog_path),
		F(PROG + 0x20, "app::load", "src/main.rs", 12, NULL),
	};
	EXPECT(&with_maps, NULL, rust, "app::load (src/main.rs:12)");
	CHECK(!site_is_standard_library("stdout_flush", "/usr/bin/prog"),
	      "a name starting std without ::");
	CHECK(!site_is_standard_library("mystd::f()", NULL), "mystd::");
	CHECK(site_is_standard_library("std::vector<int>::push_back(int&&)",
				       NULL), "std::");
	CHECK(site_is_standard_library("g", "/usr/lib/libc++.so.1"), "libc++");
}

static void
test_objects(void)
{
	static const char *const allocator[] = {
		"/usr/lib/x86_64-linux-gnu/libc.so.6", "/lib/libc-2.31.so",
		"/lib/ld-musl-x86_64.so.1", "/lib/libc.musl-x86_64.so.1",
		"/lib64/ld-linux-x86-64.so.2", "libpthread.so.0",
		"/usr/lib/libjemalloc.so.2", "/usr/lib/libtcmalloc_minimal.so.4",
		"/usr/lib/libmimalloc.so.2",
	};
	static const char *const not_allocator[] = {
		"/usr/lib/libc-client.so.2007e", "/usr/lib/libcrypto.so.3",
		"/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "/usr/bin/ld",
		"/usr/lib/libcurl.so.4", "",
	};
	for (size_t i = 0; i < N(allocator); i++)
		CHECK(site_is_allocator_object(allocator[i]), "%s",
		      allocator[i]);
	for (size_t i = 0; i < N(not_allocator); i++)
		CHECK(!site_is_allocator_object(not_allocator[i]), "%s",
		      not_allocator[i]);
	CHECK(!site_is_allocator_object(NULL), "NULL");
	CHECK(site_is_allocator_function("operator new[](unsigned long)", NULL),
	      "new[]");
	CHECK(!site_is_allocator_function("mallocx_wrapper", NULL), "prefix");
	CHECK(!site_is_allocator_function("Perl_safesysmalloc", NULL), "perl");
}

static void
test_text(void)
{
	struct sites_frame fr[] = {
		F(0x1234, "???", NULL, 0, NULL),
		F(0x1234, "f", "a b.c", 7, NULL),
		F(0x1234, "g", NULL, 0, "/o"),
		F(0x1234, "???", NULL, 0, "/o"),
	};
	const char *want[] = { "??? [0x1234]", "f (a b.c:7)", "g (in /o)",
			       "??? [0x1234] (in /o)" };
	for (size_t i = 0; i < N(fr); i++) {
		char *t = site_frame_text(&fr[i]);
		CHECK(strcmp(t, want[i]) == 0, "'%s', want '%s'", t, want[i]);
		free(t);
	}
}

/* CPython: a Python frame (a synthetic address) names the site before
   the interpreter's C functions inward of it, which lie in the program
   (/usr/bin/python3.11) or in libpython; --alloc-fn on a Python name
   passes to the next Python frame outward. */
static void
test_python(void)
{
	struct sites_frame py[] = {
		F(LIBC + 0x10, "malloc", "malloc.c", 3281, NULL),
		F(PROG + 0x10, "PyObject_Malloc", NULL, 0, prog_path),
		F(PROG + 0x20, "PyUnicode_New", NULL, 0, prog_path),
		F(PROG + 0x30, "_PyEval_EvalFrameDefault", NULL, 0, prog_path),
		F(SYNTH_FRAME_BASE | 7, "app.make_row", "app.py", 12, NULL),
		F(SYNTH_FRAME_BASE | 3, "<module>", "app.py", 20, NULL),
		F(PROG + 0x40, "Py_RunMain", NULL, 0, prog_path),
		F(PROG + 0x50, "main", NULL, 0, prog_path),
		F(LIBC + 0x20, "(below main)", "libc_start_call_main.h", 58,
		  NULL),
	};
	EXPECT(&with_maps, NULL, py, "app.make_row (app.py:12)");
	EXPECT(&without_maps, NULL, py, "app.make_row (app.py:12)");
	EXPECT(&with_maps, "--alloc-fn=app.make_row", py,
	       "<module> (app.py:20)");
}

int
main(void)
{
	test_no_debug_info();
	test_stripped();
	test_libc_by_mapping();
	test_libc_internal();
	test_debug_info();
	test_other_allocators();
	test_standard_library();
	test_objects();
	test_text();
	test_python();
	return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
