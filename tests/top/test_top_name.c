/* SPDX-License-Identifier: GPL-2.0-or-later */
/* top_name_fit on names as demanglers give them: each expected text
   worked out by hand from the rule in cli/top_name.h. */
#include "cli/top_name.h"

#include <stdlib.h>
#include <string.h>

#include "tests/check.h"

static void
expect_fit(const char *name, size_t width, const char *want)
{
	char *got = top_name_fit(name, width);
	CHECK(!strcmp(got, want), "fit(\"%s\", %zu) = \"%s\", want \"%s\"",
	      name, width, got, want);
	CHECK(top_name_width(got) <= width || width < 1,
	      "\"%s\" is %zu columns, more than %zu", got,
	      top_name_width(got), width);
	free(got);
}

/* Every width from 0 to NAME's own: never wider than asked, and the
   location kept whole while the column is twice as wide as it. */
static void
expect_all_widths(const char *name, const char *loc)
{
	size_t w = top_name_width(name), lw = top_name_width(loc);
	for (size_t width = 0; width <= w + 2; width++) {
		char *got = top_name_fit(name, width);
		CHECK(top_name_width(got) <= width, "\"%s\" at %zu: \"%s\"",
		      name, width, got);
		if (width >= 2 * lw && width >= 5) {
			size_t gl = strlen(got), ll = strlen(loc);
			CHECK(gl >= ll && !strcmp(got + gl - ll, loc),
			      "\"%s\" at %zu lost its location: \"%s\"",
			      name, width, got);
		}
		if (width >= w)
			CHECK(!strcmp(got, name), "\"%s\" changed at %zu",
			      name, width);
		free(got);
	}
}

int
main(void)
{
	/* Python's "<module>", "<locals>" are names, not lists */
	expect_fit("app.handlers.<lambda> (app.py:3)", 28,
		   "app.han...lambda> (app.py:3)");
	expect_fit("app.K.method.<locals>.inner (views.py:120)", 36,
		   "app.K.met...ls>.inner (views.py:120)");
	expect_fit("<listcomp> (/srv/app/views.py:20)", 16,
		   "<l...mp> (...20)");
	/* fits: unchanged */
	expect_fit("main (a.c:3)", 12, "main (a.c:3)");
	expect_fit("main (a.c:3)", 80, "main (a.c:3)");
	/* C++: the innermost lists first, then the next ones out */
	expect_fit("std::vector<std::pair<int, long>, std::allocator<"
		   "std::pair<int, long> > >::push_back (vec.cc:12)", 72,
		   "std::vector<std::pair<...>, std::allocator<...> >::"
		   "push_back (vec.cc:12)");
	expect_fit("std::vector<std::pair<int, long>, std::allocator<"
		   "std::pair<int, long> > >::push_back (vec.cc:12)", 40,
		   "std::vector<...>::push_back (vec.cc:12)");
	/* parameters are a list too */
	expect_fit("ns::Parser::parse(std::string const&, int) (p.cc:7)",
		   31, "ns::Parser::parse(...) (p.cc:7)");
	/* then the middle of the function's text, its last component
	   whole */
	expect_fit("ns::Parser::parse(std::string const&, int) (p.cc:7)",
		   30, "ns::Pa...::parse(...) (p.cc:7)");
	expect_fit("very_long_namespace::another_namespace::function "
		   "(f.c:1)", 30, "very_long...::function (f.c:1)");
	/* a location wider than half the column is cut in its middle, the
	   file's name and line kept */
	expect_fit("f (/a/very/long/path/to/the/source/file.c:123)", 20,
		   "f (...ce/file.c:123)");
	expect_fit("g (in /usr/lib/x86_64-linux-gnu/libfoo.so.1)", 24,
		   "g (in ...nu/libfoo.so.1)");
	/* Rust: the hash goes first; a last component too wide for the
	   column leaves four columns of the start */
	expect_fit("alloc::raw_vec::RawVec<T,A>::reserve_for_push::"
		   "h0123456789abcdef (raw_vec.rs:401)", 64,
		   "alloc::raw_vec::RawVec<T,A>::reserve_for_push "
		   "(raw_vec.rs:401)");
	expect_fit("alloc::raw_vec::RawVec<T,A>::reserve_for_push::"
		   "h0123456789abcdef (raw_vec.rs:401)", 40,
		   "allo...reserve_for_push (raw_vec.rs:401)");
	/* a stray bracket is not a list */
	expect_fit("operator<(a, b) (o.cc:1)", 23, "operator<(...) (o.cc:1)");
	expect_fit("a::operator->(x::y<z>) (o.cc:1)", 27,
		   "a::operator->(...) (o.cc:1)");
	/* UTF-8 counts one column a character and is never split */
	expect_fit("f\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"
		   "\xc3\xa9\xc3\xa9\xc3\xa9g", 7,
		   "f\xc3\xa9...\xc3\xa9g");
	/* too narrow for an ellipsis: the start */
	expect_fit("function (f.c:1)", 4, "func");
	expect_fit("function (f.c:1)", 0, "");
	expect_all_widths("std::_Hashtable<std::string, std::pair<std::string "
			  "const, int> >::_M_insert_unique_node (hashtable.h:"
			  "1987)", " (hashtable.h:1987)");
	expect_all_widths("x (x.c:1)", " (x.c:1)");
	expect_all_widths("(no stack)", "(no stack)");
	return failures ? 1 : 0;
}
