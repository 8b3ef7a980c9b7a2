/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a reader of a C++ or Rust name looks for is the last component
   (the function) and where it is (file:line); the namespaces and the
   template arguments between them matter less, and the arguments'
   contents least. So a name too wide is shortened in that order: the
   contents of bracket lists, innermost first; then the middle of the
   function's text; the location only when it alone is too wide for half
   the column. Widths count UTF-8 characters, and no cut splits one. */
#include "top_name.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

#define ELLIPSIS "..."
#define ELLIPSIS_WIDTH 3
#define NAME_MIN_WIDTH 5

static bool
utf8_continuation(char c)
{
	return ((unsigned char)c & 0xC0) == 0x80;
}

/* Columns of the LEN bytes at S. */
static size_t
span_width(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		w += !utf8_continuation(s[i]);
	return w;
}

size_t
top_name_width(const char *name)
{
	return span_width(name, strlen(name));
}

/* Byte offset in S (LEN bytes) after its first COLS columns. */
static size_t
head_bytes(const char *s, size_t len, size_t cols)
{
	size_t i = 0;
	for (size_t c = 0; i < len && c < cols; c++) {
		i++;
		while (i < len && utf8_continuation(s[i]))
			i++;
	}
	return i;
}

/* Byte offset in S (LEN bytes) where its last COLS columns start. */
static size_t
tail_start(const char *s, size_t len, size_t cols)
{
	size_t i = len;
	for (size_t c = 0; i > 0 && c < cols; c++) {
		i--;
		while (i > 0 && utf8_continuation(s[i]))
			i--;
	}
	return i;
}

/* The LEN bytes at S in at most WIDTH columns, their middle replaced by
   the ellipsis, the last TAIL columns kept (at most all but one of those
   left). Malloc'd. */
static char *
middle_cut(const char *s, size_t len, size_t width, size_t tail)
{
	if (span_width(s, len) <= width)
		return ht_xstrndup(s, len);
	if (width < NAME_MIN_WIDTH)
		return ht_xstrndup(s, head_bytes(s, len, width));
	size_t keep = width - ELLIPSIS_WIDTH;
	if (tail > keep - 1)
		tail = keep - 1;
	size_t head = head_bytes(s, len, keep - tail);
	size_t start = tail_start(s, len, tail);
	return ht_xasprintf("%.*s" ELLIPSIS "%s", (int)head, s, s + start);
}

/* Columns of FUNC's last component ("::" and what follows it, outside
   brackets); 0 without a "::". */
static size_t
last_component_width(const char *func)
{
	size_t len = strlen(func), depth = 0;
	for (size_t i = len; i-- > 1;) {
		if (func[i] == ')' || func[i] == '>')
			depth++;
		else if ((func[i] == '(' || func[i] == '<') && depth)
			depth--;
		else if (!depth && func[i] == ':' && func[i - 1] == ':')
			return span_width(func + i - 1, len - i + 1);
	}
	return 0;
}

/* FUNC in WIDTH columns: its last component kept whole where four
   columns of its start can stay beside it, else as much of it as
   leaves those four; at least its second half. */
static char *
function_cut(const char *func, size_t width)
{
	size_t keep = width > ELLIPSIS_WIDTH ? width - ELLIPSIS_WIDTH : 0;
	size_t tail = keep - keep / 2, last = last_component_width(func);
	if (last > tail && keep > 4)
		tail = last < keep - 4 ? last : keep - 4 > tail ? keep - 4 : tail;
	return middle_cut(func, strlen(func), width, tail);
}

/* LOC (" (file:line)" or " (in object)") in WIDTH columns: its opening
   kept, and as much of its end (the file's name) as fits. */
static char *
location_cut(const char *loc, size_t len, size_t width)
{
	size_t opening = !strncmp(loc, " (in ", 5) ? 5 : 2;
	size_t keep = width > ELLIPSIS_WIDTH ? width - ELLIPSIS_WIDTH : 0;
	size_t tail = keep > opening ? keep - opening : keep - keep / 2;
	return middle_cut(loc, len, width, tail);
}

/* A Rust legacy symbol's hash ("::h" and 16 hex digits) at FUNC's end:
   its length in bytes, or 0. It tells a reader nothing. */
static size_t
rust_hash_length(const char *func)
{
	size_t len = strlen(func), n = strlen("::h") + 16;
	if (len <= n || strncmp(func + len - n, "::h", 3))
		return 0;
	for (size_t i = len - 16; i < len; i++)
		if (!strchr("0123456789abcdef", func[i]))
			return 0;
	return n;
}

/* The byte where NAME's location (" (file:line)", " (in object)")
   starts: the '(' matching the final ')', after a blank; LEN if none. */
static size_t
location_start(const char *name, size_t len)
{
	if (!len || name[len - 1] != ')')
		return len;
	int depth = 0;
	for (size_t i = len; i-- > 0;) {
		if (name[i] == ')')
			depth++;
		else if (name[i] == '(' && --depth == 0)
			return i > 0 && name[i - 1] == ' ' ? i - 1 : len;
	}
	return len;
}

static bool
opens(char c)
{
	return c == '<' || c == '(';
}

static bool
closes(char c)
{
	return c == '>' || c == ')';
}

/* Whether the '<' at S[O], closed at S[C], is a Python code object's
   name ("<module>", "<listcomp>", "K.f.<locals>.g"): lower-case letters
   only, at the start or after a dot, as no C++ or Rust list is. Eliding
   it would leave nothing of the function's name. */
static bool
python_pseudo_name(const char *s, size_t o, size_t c)
{
	if (o > 0 && s[o - 1] != '.')
		return false;
	for (size_t i = o + 1; i < c; i++)
		if (s[i] < 'a' || s[i] > 'z')
			return false;
	return true;
}

/* In S, the most deeply nested bracket list whose contents are longer
   than the ellipsis (the first of equals): its opening bracket's index
   into *OPEN, its closing one's into *CLOSE. False if none. A stray
   bracket ("operator<", "->") pairs with nothing of its own kind and is
   passed over. */
static bool
innermost_list(const char *s, size_t *open, size_t *close)
{
	size_t stack[64];
	size_t depth = 0, best_depth = 0;
	bool found = false;
	for (size_t i = 0; s[i]; i++) {
		if (opens(s[i])) {
			if (depth < sizeof(stack) / sizeof(stack[0]))
				stack[depth] = i;
			depth++;
		} else if (closes(s[i]) && depth) {
			depth--;
			if (depth >= sizeof(stack) / sizeof(stack[0]))
				continue;
			size_t o = stack[depth];
			if ((s[o] == '<') != (s[i] == '>'))
				continue;
			size_t inner = i - o - 1;
			bool elided = inner == ELLIPSIS_WIDTH &&
				      !strncmp(s + o + 1, ELLIPSIS, inner);
			if (inner <= ELLIPSIS_WIDTH || elided ||
			    python_pseudo_name(s, o, i))
				continue;
			/* deepest first; among equals, the first: the
			   arguments of the outer namespaces go before the
			   function's own */
			if (!found || depth + 1 > best_depth) {
				found = true;
				best_depth = depth + 1;
				*open = o;
				*close = i;
			}
		}
	}
	return found;
}

/* FUNC with bracket lists elided, innermost first, until it is at most
   WIDTH columns or none is left. Malloc'd. */
static char *
elide_lists(const char *func, size_t width)
{
	char *s = ht_xstrdup(func);
	size_t open, close;
	while (top_name_width(s) > width && innermost_list(s, &open, &close)) {
		char *t = ht_xasprintf("%.*s" ELLIPSIS "%s", (int)(open + 1),
				       s, s + close);
		free(s);
		s = t;
	}
	return s;
}

char *
top_name_fit(const char *name, size_t width)
{
	size_t len = strlen(name);
	if (top_name_width(name) <= width)
		return ht_xstrdup(name);
	if (width < NAME_MIN_WIDTH)
		return ht_xstrndup(name, head_bytes(name, len, width));
	size_t loc = location_start(name, len);
	size_t loc_width = span_width(name + loc, len - loc);
	/* The location keeps its whole width while the function gets at
	   least half the column; beyond that both are cut. */
	size_t loc_budget = loc_width <= width / 2 ? loc_width : width / 2;
	size_t func_budget = width - loc_budget;
	char *func = ht_xstrndup(name, loc);
	func[loc - rust_hash_length(func)] = '\0';
	char *elided = elide_lists(func, func_budget);
	if (top_name_width(elided) < func_budget)
		loc_budget = width - top_name_width(elided);
	char *func_fit = function_cut(elided, func_budget);
	char *loc_fit = location_cut(name + loc, len - loc, loc_budget);
	char *out = ht_xasprintf("%s%s", func_fit, loc_fit);
	free(func);
	free(elided);
	free(func_fit);
	free(loc_fit);
	return out;
}
