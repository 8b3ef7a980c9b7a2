#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""docs/screenshot/pane2html.py on fixed captures: what the page draws.

usage: test_pane2html.py [--mutants] PANE2HTML CAPTURES_DIR

Each check converts a capture (written here, or CAPTURES_DIR/curses.txt,
a real `tmux capture-pane -p -e -N` of a Python curses screen: a reversed
header line, bold, green, underlined, white on blue, 256-colour orange
on grey and dim text, in a 60x10 pane), reads the page back with
html.parser into rows of cells (text, colour, background, weight, ...)
and compares them with what a terminal shows: cell text and positions,
the 16, 256 and 24-bit colours, reverse video, the resets, attributes
carried from one line to the next as tmux writes them, wide characters,
clipping, the light palette, HTML escaping, the command line.

With --mutants, copies of the converter broken one way each (reverse
video ignored, reset ignored, 256-colour cube swapped, ...) are run
through the same checks, and each must fail at least one: the checks
can fail. Exit 0 pass, 1 fail, 99 harness error (a mutant's text is no
longer in the converter).
"""
import contextlib
import html.parser
import io
import os
import re
import sys
import tempfile
import types

ESC = "\x1b"


class Cell:
    def __init__(self, text, css, wide):
        self.text, self.css, self.wide = text, css, wide

    @property
    def fg(self):
        return self.css.get("color")

    @property
    def bg(self):
        return self.css.get("background")

    def has(self, prop, value):
        return value in self.css.get(prop, "").split()

    def __repr__(self):
        return "Cell(%r, %r)" % (self.text, self.css)


class PageReader(html.parser.HTMLParser):
    """The rows of cells of a page, and its elements' tags."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.rows, self.tags, self.grid_attrs = [], [], {}
        self.css_stack, self.cell = [], None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "div" and attrs.get("class") == "t":
            self.grid_attrs = attrs
        elif tag == "div" and attrs.get("class") == "r":
            self.rows.append([])
        elif tag == "span":
            css = {}
            for rule in (attrs.get("style") or "").split(";"):
                if ":" in rule:
                    name, value = rule.split(":", 1)
                    css[name.strip()] = value.strip()
            self.css_stack.append(css)
        elif tag == "i":
            self.cell = Cell("", self.css_stack[-1] if self.css_stack else {},
                             attrs.get("class") == "w")

    def handle_endtag(self, tag):
        if tag == "span" and self.css_stack:
            self.css_stack.pop()
        elif tag == "i" and self.cell is not None:
            self.rows[-1].append(self.cell)
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.text += data


class Failed(Exception):
    pass


def expect(what, got, want):
    if got != want:
        raise Failed("%s: %r, expected %r" % (what, got, want))


class Checks:
    """The checks, on one converter module."""

    def __init__(self, module, captures):
        self.m, self.captures = module, captures
        self.dark, self.light = module.THEMES["dark"], module.THEMES["light"]

    def page(self, capture, cols=None, rows=None, theme="dark"):
        grid = self.m.parse_capture(capture, cols, rows)
        text = self.m.render_page(grid, theme, "test")
        reader = PageReader()
        reader.feed(text)
        reader.close()
        reader.text = text
        return reader

    def rows(self, capture, cols=None, rows=None, theme="dark"):
        return self.page(capture, cols, rows, theme).rows

    @staticmethod
    def line(row):
        return "".join(c.text for c in row)

    def check_plain_text(self):
        rows = self.rows("hello <&> world\nsecond\n")
        expect("rows", len(rows), 2)
        expect("row 0", self.line(rows[0]), "hello <&> world")
        expect("row 1 (padded to the widest)", self.line(rows[1]),
               "second" + " " * 9)
        for cell in rows[0]:
            expect("default colours", (cell.fg, cell.bg),
                   (self.dark["fg"], self.dark["bg"]))

    def check_grid_size(self):
        page = self.page("ab\ncd\n", cols=20, rows=4)
        expect("rows", len(page.rows), 4)
        expect("cells per row", [len(r) for r in page.rows], [20] * 4)
        expect("data-cols, data-rows",
               (page.grid_attrs.get("data-cols"),
                page.grid_attrs.get("data-rows")), ("20", "4"))
        expect("row 3", self.line(page.rows[3]), " " * 20)

    def check_ansi16(self):
        row = self.rows(ESC + "[31mR" + ESC + "[42mG" + ESC + "[0mN"
                        + ESC + "[91;104mB\n")[0]
        ansi = self.dark["ansi"]
        expect("31", row[0].fg, ansi[1])
        expect("42 on 31", (row[1].fg, row[1].bg), (ansi[1], ansi[2]))
        expect("after 0", (row[2].fg, row[2].bg),
               (self.dark["fg"], self.dark["bg"]))
        expect("91;104", (row[3].fg, row[3].bg), (ansi[9], ansi[12]))

    def check_256(self):
        codes = [(196, "#ff0000"), (21, "#0000ff"), (208, "#ff8700"),
                 (16, "#000000"), (231, "#ffffff"), (232, "#080808"),
                 (244, "#808080"), (255, "#eeeeee"),
                 (9, self.dark["ansi"][9])]
        capture = "".join("%s[38;5;%dmx" % (ESC, n) for n, _ in codes)
        row = self.rows(capture + ESC + "[48;5;52my\n")[0]
        for (n, want), cell in zip(codes, row):
            expect("38;5;%d" % n, cell.fg, want)
        expect("48;5;52", row[len(codes)].bg, "#5f0000")

    def check_truecolor(self):
        row = self.rows(ESC + "[38;2;1;2;3mA" + ESC + "[48;2;250;128;0mB"
                        + ESC + "[0;38:2::10:20:30mC" + ESC
                        + "[38:5:208;48:2:40:50:60mD\n")[0]
        expect("38;2;1;2;3", row[0].fg, "#010203")
        expect("48;2;250;128;0", (row[1].fg, row[1].bg),
               ("#010203", "#fa8000"))
        expect("38:2::10:20:30", (row[2].fg, row[2].bg),
               ("#0a141e", self.dark["bg"]))
        expect("38:5:208;48:2:40:50:60", (row[3].fg, row[3].bg),
               ("#ff8700", "#28323c"))

    def check_reverse(self):
        row = self.rows(ESC + "[7mAB" + ESC + "[27mC" + ESC
                        + "[31;44;7mX" + ESC + "[0mY\n")[0]
        swapped = (self.dark["bg"], self.dark["fg"])
        expect("reversed A", (row[0].fg, row[0].bg), swapped)
        expect("reversed B", (row[1].fg, row[1].bg), swapped)
        expect("27 ends it", (row[2].fg, row[2].bg), swapped[::-1])
        ansi = self.dark["ansi"]
        expect("red on blue reversed", (row[3].fg, row[3].bg),
               (ansi[4], ansi[1]))
        expect("0 ends it", (row[4].fg, row[4].bg), swapped[::-1])

    def check_resets(self):
        row = self.rows(ESC + "[1;4;31;45mA" + ESC + "[mB" + ESC
                        + "[1;4;9;3;32mC" + ESC + "[22;24;29;23;39mD"
                        + ESC + "[44;49mE" + ESC + "[4:3mF" + ESC
                        + "[4:0mG\n")[0]
        defaults = (self.dark["fg"], self.dark["bg"])
        a, b, c, d, e, f, g = row[:7]
        expect("A bold", a.css.get("font-weight"), "bold")
        expect("A underlined", a.has("text-decoration", "underline"), True)
        expect("B after ESC[m", (b.fg, b.bg, b.css.get("font-weight"),
                                 b.css.get("text-decoration")),
               defaults + (None, None))
        expect("C bold italic underlined struck",
               (c.css.get("font-weight"), c.css.get("font-style"),
                c.has("text-decoration", "underline"),
                c.has("text-decoration", "line-through")),
               ("bold", "italic", True, True))
        expect("D after 22;24;29;23;39",
               (d.fg, d.css.get("font-weight"), d.css.get("font-style"),
                d.css.get("text-decoration")),
               (self.dark["fg"], None, None, None))
        expect("E after 44;49", e.bg, self.dark["bg"])
        expect("F 4:3 underlined", f.has("text-decoration", "underline"),
               True)
        expect("G 4:0 not", g.css.get("text-decoration"), None)

    def check_dim_hidden(self):
        row = self.rows(ESC + "[2mA" + ESC + "[22;8mB" + ESC + "[28mC\n")[0]
        expect("dim: halfway to the background", row[0].fg,
               self.m.blend(self.dark["fg"], self.dark["bg"]))
        if row[0].fg in (self.dark["fg"], self.dark["bg"]):
            raise Failed("dim text drawn as %s" % row[0].fg)
        expect("hidden: the background's colour", row[1].fg, row[1].bg)
        expect("28 shows it", row[2].fg, self.dark["fg"])

    def check_across_lines(self):
        # tmux writes an attribute once and carries it to the next lines
        rows = self.rows(ESC + "[44;1mblue\nstill" + ESC + "[0m\nnot\n")
        blue = self.dark["ansi"][4]
        expect("line 2 still blue", [c.bg for c in rows[1][:5]], [blue] * 5)
        expect("line 2 still bold", rows[1][0].css.get("font-weight"),
               "bold")
        expect("line 3 after ESC[0m", rows[2][0].bg, self.dark["bg"])

    def check_wide(self):
        rows = self.rows("\u4e2d\u6587x|\n", cols=8)
        row = rows[0]
        expect("cells", [(c.text, c.wide) for c in row[:4]],
               [("\u4e2d", True), ("\u6587", True), ("x", False),
                ("|", False)])
        expect("boxes in 8 columns", sum(2 if c.wide else 1 for c in row), 8)

    def check_combining_tab(self):
        row = self.rows("e\u0301x\ta\tb\n", cols=20)[0]
        expect("combining mark in its cell", row[0].text, "e\u0301")
        expect("x in column 1", row[1].text, "x")
        expect("tab to column 8", (row[8].text, row[16].text), ("a", "b"))
        row = self.rows("\u4e2d\u0301x\n", cols=4)[0]
        expect("combining mark on a wide character",
               [c.text for c in row], ["\u4e2d\u0301", "x", " "])

    def check_other_escapes(self):
        row = self.rows(ESC + "[2J" + ESC + "[?25l" + ESC + "]0;title\x07A"
                        + ESC + "(BB" + ESC + "7C" + ESC + "[>4;2mD\n")[0]
        expect("text without the escapes", self.line(row), "ABCD")
        expect("private ESC[>4;2m no SGR", row[3].fg, self.dark["fg"])

    def check_clipping(self):
        grid = self.m.parse_capture("0123456789\n\u4e2d\u4e2d\u4e2d\nx\ny\n",
                                    5, 2)
        page = self.page("0123456789\n\u4e2d\u4e2d\u4e2d\nx\ny\n", 5, 2)
        expect("rows", [self.line(r) for r in page.rows],
               ["01234", "\u4e2d\u4e2d "])
        expect("characters dropped", grid.dropped, 5 + 1 + 2)

    def check_light_theme(self):
        row = self.rows("a" + ESC + "[7mb" + ESC + "[0;31mc\n",
                        theme="light")[0]
        expect("light default", (row[0].fg, row[0].bg),
               (self.light["fg"], self.light["bg"]))
        expect("light reverse", (row[1].fg, row[1].bg),
               (self.light["bg"], self.light["fg"]))
        expect("light red", row[2].fg, self.light["ansi"][1])
        if self.light["bg"] == self.dark["bg"]:
            raise Failed("the light and dark backgrounds are one colour")

    def check_escaping(self):
        page = self.page("</div><script>alert(1)</script> & \"x\"\n")
        expect("text", self.line(page.rows[0]),
               "</div><script>alert(1)</script> & \"x\"")
        expect("no script element", "script" in page.tags, False)
        stray = re.search(r"<(?![a-zA-Z/!])|&(?!(?:amp|lt|gt|quot|#x27);)",
                          page.text)
        if stray:
            raise Failed("a bare %r in the page: %r" % (
                stray.group(0), page.text[stray.start() - 20:stray.end() + 20]))
        for ref in ("http:", "https:", "src=", "href=", "url("):
            if ref in page.text:
                raise Failed("the page refers to another file: %s" % ref)

    def check_curses_capture(self):
        with open(os.path.join(self.captures, "curses.txt"),
                  encoding="utf-8") as f:
            rows = self.rows(f.read(), cols=60, rows=10)
        d = self.dark
        expect("rows", len(rows), 10)
        expect("row 0", self.line(rows[0]).rstrip(),
               "heap 4.0 MB  peak 4.1 MB  rate 2.0 MB/s")
        expect("header reversed across the width",
               {(c.fg, c.bg) for c in rows[2]}, {(d["bg"], d["fg"])})
        expect("header text", self.line(rows[2]).split(), ["LIVE", "%HEAP",
                                                            "SITE"])
        r3 = rows[3]
        expect("bold figure", [c.css.get("font-weight") for c in r3[:8]],
               ["bold"] * 7 + [None])
        expect("green share", {c.fg for c in r3[9:14]}, {d["ansi"][2]})
        expect("plain name", (self.line(r3[16:40]), r3[16].fg),
               ("hold_big (topsites.c:35)", d["fg"]))
        r4 = rows[4]
        expect("underlined name", self.line(r4[16:52]),
               "std::vector<std::pair<\u2026>>::push_back")
        expect("underlined", all(c.has("text-decoration", "underline")
                                 for c in r4[16:52]), True)
        expect("figure not underlined", r4[0].css.get("text-decoration"),
               None)
        expect("white on blue, bold, across the width",
               {(c.fg, c.bg, c.css.get("font-weight")) for c in rows[5]},
               {(d["ansi"][7], d["ansi"][4], "bold")})
        expect("orange on grey", {(c.fg, c.bg) for c in rows[6][:14]},
               {("#ff8700", "#303030")})
        expect("dim keys", rows[7][0].fg, self.m.blend(d["fg"], d["bg"]))
        expect("after the dim line", (rows[8][0].fg, rows[8][0].bg),
               (d["fg"], d["bg"]))

    def check_command_line(self):
        with tempfile.TemporaryDirectory() as tmp:
            capture = os.path.join(tmp, "pane.txt")
            with open(capture, "w", encoding="utf-8") as f:
                f.write(ESC + "[7mhi" + ESC + "[0m\n")
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                status = self.m.main(["--size", "--cols", "10", "--rows",
                                      "2", capture])
            expect("--size", (status, out.getvalue()),
                   (0, "%d,%d\n" % (10 * self.m.CELL_WIDTH
                                     + 2 * self.m.PADDING,
                                     2 * self.m.CELL_HEIGHT
                                     + 2 * self.m.PADDING)))
            page = os.path.join(tmp, "pane.html")
            status = self.m.main(["--theme", "light", "-o", page, capture])
            with open(page, encoding="utf-8") as f:
                reader = PageReader()
                reader.feed(f.read())
            expect("-o", (status, self.line(reader.rows[0])), (0, "hi"))
            expect("-o --theme light", reader.rows[0][0].bg,
                   self.light["fg"])

    def run(self):
        """The names of the checks that failed, each with why."""
        failures = []
        for name in sorted(n for n in dir(self) if n.startswith("check_")):
            try:
                getattr(self, name)()
            except Failed as e:
                failures.append("%s: %s" % (name[6:], e))
            except Exception as e:  # a broken converter may raise anything
                failures.append("%s: %s: %s" % (name[6:], type(e).__name__, e))
        return failures


# (name, text in pane2html.py, its broken replacement)
MUTANTS = [
    ("reverse video ignored",
     "    if style.reverse:\n        fg, bg = bg, fg",
     "    if False:\n        fg, bg = bg, fg"),
    ("SGR 0 ignored", "    if code == 0:\n        return DEFAULT",
     "    if code == 0:\n        return style"),
    ("256-colour cube swapped", "levels[i // 6 % 6], levels[i % 6]",
     "levels[i % 6], levels[i // 6 % 6]"),
    ("grey ramp off by one", "grey = 8 + 10 * (index - 232)",
     "grey = 10 * (index - 232)"),
    ("24-bit colour dropped", "if kind == 2 and len(args) >= 4:",
     "if False:"),
    ("colon 24-bit colour-space id kept", 'subs = ["2"] + subs[-3:]',
     "pass"),
    ("bright colours as normal ones", "fg=code % 10 + (8 if code >= 90 else 0)",
     "fg=code % 10"),
    ("attributes reset at each line",
     "style = parse_line(grid, row, line, style)",
     "style = parse_line(grid, row, line, DEFAULT)"),
    ("wide characters one cell",
     'return 2 if unicodedata.east_asian_width(ch) in "WF" else 1',
     "return 1"),
    ("combining marks a cell", 'if unicodedata.combining(ch) or ch in',
     'if False and ch in'),
    ("combining mark on a wide character's second half",
     "if self.cells[row][base][2] == 0:", "if False:"),
    ("tabs one space", "stop = (col // TAB_STOP + 1) * TAB_STOP",
     "stop = col + 1"),
    ("text not escaped", 'else "<i>%s</i>" % html.escape(text))',
     'else "<i>%s</i>" % text)'),
    ("bold not drawn", 'rules.append("font-weight:bold")', "pass"),
    ("SGR 24 ignored", '24: ("underline", False), ', ""),
    ("SGR 49 as black", '49: ("bg", None)', '49: ("bg", 0)'),
    ("dim not drawn", "        fg = blend(fg, bg)", "        pass"),
    ("private SGR taken", 'not re.match(r"[<=>?]", match.group(1) or "")',
     "True"),
    ("light palette ignored", 'theme = THEMES[theme_name]',
     'theme = THEMES["dark"]'),
    ("grid not clipped", "col + width > self.cols:",
     "col + width > self.cols + 4:"),
]


def load(path, source=None):
    """The converter as a module, from PATH or from SOURCE."""
    module = types.ModuleType("pane2html")
    module.__file__ = path
    if source is None:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    exec(compile(source, path, "exec"), module.__dict__)
    return module


def mutants(path, captures):
    with open(path, encoding="utf-8") as f:
        source = f.read()
    status = 0
    for name, old, new in MUTANTS:
        if source.count(old) != 1:
            print("HARNESS ERROR: mutant '%s': %r is not once in %s"
                  % (name, old, path))
            return 99
        failures = Checks(load(path, source.replace(old, new)), captures).run()
        if failures:
            print("caught: %s (%s)" % (name, failures[0]))
        else:
            print("FAIL: mutant not caught: %s" % name)
            status = 1
    return status


def main(argv):
    with_mutants = argv[:1] == ["--mutants"]
    if with_mutants:
        argv = argv[1:]
    if len(argv) != 2:
        print("usage: test_pane2html.py [--mutants] PANE2HTML CAPTURES_DIR",
              file=sys.stderr)
        return 99
    path, captures = argv
    if with_mutants:
        return mutants(path, captures)
    failures = Checks(load(path), captures).run()
    for failure in failures:
        print("FAIL: " + failure)
    if not failures:
        print("pane2html: every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
