/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "output/jsonstr.h"

#include <stddef.h>

/* The length of the UTF-8 sequence at S, or 0 if it is not one. */
static size_t
utf8_length(const unsigned char *s)
{
	size_t n = s[0] >= 0xF0 && s[0] <= 0xF4 ? 4 :
		   s[0] >= 0xE0 ? 3 : s[0] >= 0xC2 && s[0] < 0xE0 ? 2 : 0;
	if (s[0] >= 0xF5)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

void
json_string_write(FILE *out, const char *s, bool script_safe)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n;
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		/* "<" would let "</script>" or "<!--" in a label end or
		   derail the script element that holds the data */
		else if (*p < 0x20 || *p == 0x7F ||
			 (script_safe && (*p == '<' || *p == '>' || *p == '&')))
			fprintf(out, "\\u%04x", *p);
		else if (*p < 0x80)
			fputc(*p, out);
		else if ((n = utf8_length(p)) != 0) {
			fwrite(p, 1, n, out);
			p += n;
			continue;
		} else
			fprintf(out, "\\u%04x", *p);
		p++;
	}
	fputc('"', out);
}
