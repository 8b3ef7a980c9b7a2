/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTML report's page: a skeleton the script fills from the data
   block. Everything is inline (style, script, data) and nothing names a
   URL, so that the file works offline, attached to a bug report or kept
   as a CI artifact. */
#include "html.h"

#include "output/html_assets.h"
#include "output/html_json.h"

/* S as HTML text (for the title: the script escapes the rest itself). */
static void
html_text(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void
page_head(FILE *out, const struct html_profile *p)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
	      "<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, "
	      "initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"heaptrace report\">\n"
	      "<title>heaptrace: ", out);
	html_text(out, p->path);
	fputs("</title>\n<style>\n", out);
	fputs(html_css, out);
	fputs("</style>\n</head>\n", out);
}

static void
page_body(FILE *out, const struct html_profile *p)
{
	fputs("<body>\n"
	      "<noscript><p>This report is drawn by its inline script: "
	      "enable JavaScript to see it.</p></noscript>\n"
	      "<div id=\"js-error\" hidden></div>\n"
	      "<main id=\"app\"></main>\n"
	      "<script type=\"application/json\" id=\"heaptrace-data\">",
	      out);
	html_json_write(out, p);
	fputs("</script>\n<script>\n", out);
	fputs(html_js, out);
	fputs("</script>\n</body>\n</html>\n", out);
}

int
html_write(FILE *out, const struct html_profile *p)
{
	page_head(out, p);
	page_body(out, p);
	return ferror(out) ? -1 : 0;
}
