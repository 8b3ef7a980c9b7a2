/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The HTML report's script and style sheet, html.js and html.css turned
   into C strings at build time (output/meson.build), so that the page can
   inline them and the program needs no file beside it. */
#ifndef HT_OUTPUT_HTML_ASSETS_H
#define HT_OUTPUT_HTML_ASSETS_H

/* html.js's text, NUL-terminated. */
extern const char html_js[];
/* html.css's text, NUL-terminated. */
extern const char html_css[];

#endif
