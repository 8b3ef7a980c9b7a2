#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Render a tmux pane capture as a self-contained HTML page.

usage: pane2html.py [--cols N] [--rows N] [--theme dark|light]
                    [--title TEXT] [-o OUT] [CAPTURE]
       pane2html.py --size [--cols N] [--rows N] [CAPTURE]

CAPTURE (standard input when absent or "-") is what
`tmux capture-pane -p -e -N` prints: the pane's lines, with SGR escape
sequences (16, 256 and 24-bit colours, bold, dim, italic, underline,
reverse, hidden, strike-through and their resets). tmux carries the
attributes over from one line to the next, so they are not reset at a
line's end. Any other escape sequence is dropped.

The page draws a COLS x ROWS grid of fixed-size cells (COLS: the widest
line, ROWS: the number of lines, when not given), every cell a box of its
own so that glyphs from a fallback font cannot shift the columns; wide
characters (CJK, emoji) take two cells. Text beyond the grid is dropped
and counted on stderr. --theme picks the default colours and the 16-colour
palette of a dark (default) or a light terminal.

--size prints the page's size in CSS pixels as "WIDTH,HEIGHT", the value
for Chromium's --window-size. Exit 0, or 2 on a usage error.
"""
import argparse
import dataclasses
import html
import re
import sys
import unicodedata

CELL_WIDTH = 9      # px; DejaVu Sans Mono's advance at FONT_SIZE
CELL_HEIGHT = 18    # px
FONT_SIZE = 15      # px
PADDING = 10        # px around the grid
TAB_STOP = 8

THEMES = {
    "dark": {
        "fg": "#d4d4d4", "bg": "#1b1d1e",
        "ansi": ["#2b2b2b", "#e0565b", "#8cc265", "#d8b45a",
                 "#5aa0e6", "#c27bd8", "#4fb8c4", "#c8c8c8",
                 "#6b6f73", "#ff7a7f", "#b2e08e", "#f5d67e",
                 "#8ac2ff", "#e2a3f5", "#7fdde6", "#f4f4f4"],
    },
    "light": {
        "fg": "#202020", "bg": "#fbfaf7",
        "ansi": ["#202020", "#b8262b", "#2d7d2d", "#86680a",
                 "#2258b8", "#8e3a9e", "#137a84", "#bdbdbd",
                 "#6a6a6a", "#d6383d", "#3a9b3a", "#a98510",
                 "#3b74d8", "#a84fbb", "#1c99a3", "#ffffff"],
    },
}

# ESC [ params final (CSI), ESC ] ... BEL or ST (OSC), or ESC, any
# intermediate bytes and a final byte (ESC ( B, ESC 7, ...).
ESCAPE = re.compile(r"\x1b(?:\[([0-9;:<=>?]*)[ -/]*([@-~])"
                    r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[ -/]*[0-~])")


@dataclasses.dataclass(frozen=True)
class Style:
    """A cell's attributes; a colour is None (the terminal's default), a
    palette index 0-255, or an (r, g, b) tuple."""
    fg: object = None
    bg: object = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False
    hidden: bool = False
    strike: bool = False


DEFAULT = Style()

# SGR codes that set one attribute: code -> (field, value).
FLAGS = {
    1: ("bold", True), 2: ("dim", True), 3: ("italic", True),
    4: ("underline", True), 7: ("reverse", True), 8: ("hidden", True),
    9: ("strike", True), 21: ("underline", True), 23: ("italic", False),
    24: ("underline", False), 27: ("reverse", False),
    28: ("hidden", False), 29: ("strike", False),
    39: ("fg", None), 49: ("bg", None),
}


def number(text):
    """TEXT as a non-negative int; empty is 0, anything else None."""
    if text == "":
        return 0
    return int(text) if text.isdigit() else None


def extended_colour(args):
    """The colour of an SGR 38/48 argument list ("5", N or "2", R, G, B)
    and how many arguments it took; None when malformed."""
    kind = number(args[0]) if args else None
    if kind == 5 and len(args) >= 2:
        index = number(args[1])
        return (index if index is not None and index < 256 else None), 2
    if kind == 2 and len(args) >= 4:
        rgb = tuple(number(a) for a in args[1:4])
        if all(c is not None and c < 256 for c in rgb):
            return rgb, 4
        return None, 4
    return None, len(args)


def colon_colour(subs):
    """The colour of a colon form, 38:5:N or 38:2:[ID]:R:G:B."""
    if len(subs) >= 5 and subs[0] == "2":
        subs = ["2"] + subs[-3:]    # a colour-space id before R:G:B
    return extended_colour(subs)[0]


def apply_sgr(style, params):
    """STYLE after the SGR sequence ESC [ PARAMS m."""
    fields = params.split(";") if params else [""]
    i = 0
    while i < len(fields):
        subs = fields[i].split(":")
        code = number(subs[0])
        i += 1
        if code in (38, 48, 58):
            if len(subs) > 1:
                colour = colon_colour(subs[1:])
            else:
                colour, used = extended_colour(fields[i:])
                i += used
            if colour is not None and code != 58:
                style = dataclasses.replace(
                    style, **{"fg" if code == 38 else "bg": colour})
        else:
            style = simple_sgr(style, code, subs)
    return style


def simple_sgr(style, code, subs):
    """STYLE after one SGR code that takes no argument."""
    if code == 0:
        return DEFAULT
    if code == 4 and len(subs) > 1:     # 4:0 is "no underline"
        return dataclasses.replace(style, underline=subs[1] != "0")
    if code == 22:
        return dataclasses.replace(style, bold=False, dim=False)
    if code in FLAGS:
        field, value = FLAGS[code]
        return dataclasses.replace(style, **{field: value})
    if code is not None and (30 <= code <= 37 or 90 <= code <= 97):
        return dataclasses.replace(style, fg=code % 10 + (8 if code >= 90 else 0))
    if code is not None and (40 <= code <= 47 or 100 <= code <= 107):
        return dataclasses.replace(style, bg=code % 10 + (8 if code >= 100 else 0))
    return style


def char_width(ch):
    """Cells CH takes: 0 for a combining mark, 2 for a wide character."""
    if unicodedata.combining(ch) or ch in "\u200d\ufe0e\ufe0f":
        return 0
    return 2 if unicodedata.east_asian_width(ch) in "WF" else 1


class Grid:
    """COLS x ROWS cells, each [text, style, width]; width 0 marks the
    second half of a wide character."""

    def __init__(self, cols, rows):
        self.cols, self.rows = cols, rows
        self.cells = [[[" ", DEFAULT, 1] for _ in range(cols)]
                      for _ in range(rows)]
        self.dropped = 0

    def put(self, row, col, ch, style):
        """Writes CH at ROW, COL; returns the column after it."""
        width = char_width(ch)
        if width == 0:
            if 0 < col <= self.cols and row < self.rows:
                base = col - 1
                if self.cells[row][base][2] == 0:   # after a wide character
                    base -= 1
                self.cells[row][base][0] += ch
            return col
        if row >= self.rows or col + width > self.cols:
            self.dropped += 1
            return col + width
        self.cells[row][col] = [ch, style, width]
        if width == 2:
            self.cells[row][col + 1] = ["", style, 0]
        return col + width


def split_lines(text):
    """TEXT's lines, without the empty one after a final newline."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def visible_width(line):
    """How many cells LINE takes once its escapes are removed."""
    col = 0
    for ch in ESCAPE.sub("", line):
        if ch == "\t":
            col = (col // TAB_STOP + 1) * TAB_STOP
        elif ch >= " ":
            col += char_width(ch)
    return col


def parse_capture(text, cols=None, rows=None):
    """The Grid of a capture; COLS and ROWS default to its extent."""
    lines = split_lines(text)
    if cols is None:
        cols = max([visible_width(line) for line in lines] + [1])
    if rows is None:
        rows = max(len(lines), 1)
    grid = Grid(cols, rows)
    style = DEFAULT
    for row, line in enumerate(lines):
        style = parse_line(grid, row, line, style)
    return grid


def parse_line(grid, row, line, style):
    """Writes LINE into ROW of GRID; returns the style in force after it."""
    col = 0
    pos = 0
    for match in ESCAPE.finditer(line):
        col = put_text(grid, row, col, line[pos:match.start()], style)
        pos = match.end()
        if match.group(2) == "m" and not re.match(r"[<=>?]", match.group(1) or ""):
            style = apply_sgr(style, match.group(1))
    put_text(grid, row, col, line[pos:], style)
    return style


def put_text(grid, row, col, text, style):
    """Writes TEXT (no escape in it) from COL; returns the next column."""
    for ch in text:
        if ch == "\t":
            stop = (col // TAB_STOP + 1) * TAB_STOP
            while col < stop:
                col = grid.put(row, col, " ", style)
        elif ch >= " " and ch != "\x7f":
            col = grid.put(row, col, ch, style)
    return col


def palette(index, theme):
    """The #rrggbb of a 256-colour palette INDEX."""
    if index < 16:
        return theme["ansi"][index]
    if index < 232:
        levels = (0, 95, 135, 175, 215, 255)
        i = index - 16
        return hex_rgb((levels[i // 36], levels[i // 6 % 6], levels[i % 6]))
    grey = 8 + 10 * (index - 232)
    return hex_rgb((grey, grey, grey))


def hex_rgb(rgb):
    return "#%02x%02x%02x" % rgb


def colour(value, default, theme):
    if value is None:
        return default
    if isinstance(value, tuple):
        return hex_rgb(value)
    return palette(value, theme)


def blend(a, b):
    """The colour halfway between #rrggbb A and B (dim text)."""
    pa = [int(a[i:i + 2], 16) for i in (1, 3, 5)]
    pb = [int(b[i:i + 2], 16) for i in (1, 3, 5)]
    return hex_rgb(tuple((x + y) // 2 for x, y in zip(pa, pb)))


def css(style, theme):
    """The inline CSS a cell of STYLE is drawn with."""
    fg = colour(style.fg, theme["fg"], theme)
    bg = colour(style.bg, theme["bg"], theme)
    if style.reverse:
        fg, bg = bg, fg
    if style.dim:
        fg = blend(fg, bg)
    if style.hidden:
        fg = bg
    rules = ["color:" + fg, "background:" + bg]
    if style.bold:
        rules.append("font-weight:bold")
    if style.italic:
        rules.append("font-style:italic")
    lines = [name for name, on in (("underline", style.underline),
                                   ("line-through", style.strike)) if on]
    if lines:
        rules.append("text-decoration:" + " ".join(lines))
    return ";".join(rules)


def render_row(cells, theme):
    """One row's HTML: runs of cells drawn alike, a box per cell."""
    out = ['<div class="r">']
    run_css = None
    for text, style, width in cells:
        if width == 0:
            continue
        cell_css = css(style, theme)
        if cell_css != run_css:
            if run_css is not None:
                out.append("</span>")
            out.append('<span style="%s">' % cell_css)
            run_css = cell_css
        out.append('<i class="w">%s</i>' % html.escape(text) if width == 2
                   else "<i>%s</i>" % html.escape(text))
    if run_css is not None:
        out.append("</span>")
    out.append("</div>")
    return "".join(out)


def page_size(grid):
    """The page's (width, height) in CSS pixels."""
    return (grid.cols * CELL_WIDTH + 2 * PADDING,
            grid.rows * CELL_HEIGHT + 2 * PADDING)


def render_page(grid, theme_name, title):
    """The whole self-contained page."""
    theme = THEMES[theme_name]
    width, height = page_size(grid)
    style = (
        "html,body{margin:0;background:%(bg)s}"
        ".t{box-sizing:border-box;width:%(w)dpx;height:%(h)dpx;"
        "padding:%(pad)dpx;background:%(bg)s;color:%(fg)s;"
        "font:%(font)dpx/%(ch)dpx 'DejaVu Sans Mono','Liberation Mono',"
        "monospace;font-variant-ligatures:none}"
        ".r{height:%(ch)dpx;white-space:pre;overflow:hidden}"
        ".r span{display:inline-block;height:%(ch)dpx;vertical-align:top}"
        ".r i{display:inline-block;width:%(cw)dpx;font-style:inherit;"
        "text-decoration:inherit;text-align:center}"
        ".r i.w{width:%(cw2)dpx}"
    ) % {"bg": theme["bg"], "fg": theme["fg"], "w": width, "h": height,
         "pad": PADDING, "font": FONT_SIZE, "ch": CELL_HEIGHT,
         "cw": CELL_WIDTH, "cw2": 2 * CELL_WIDTH}
    rows = "\n".join(render_row(cells, theme) for cells in grid.cells)
    return ('<!DOCTYPE html>\n<html><head><meta charset="utf-8">'
            "<title>%s</title>\n<style>%s</style></head>\n<body>"
            '<div class="t" data-cols="%d" data-rows="%d">\n%s\n</div>'
            "</body></html>\n"
            % (html.escape(title), style, grid.cols, grid.rows, rows))


def positive(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def main(argv):
    parser = argparse.ArgumentParser(
        prog="pane2html.py",
        description="Render a `tmux capture-pane -p -e -N` capture as HTML.")
    parser.add_argument("capture", nargs="?", default="-")
    parser.add_argument("--cols", type=positive)
    parser.add_argument("--rows", type=positive)
    parser.add_argument("--theme", choices=sorted(THEMES), default="dark")
    parser.add_argument("--title", default="terminal")
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--size", action="store_true",
                        help='print the page\'s "WIDTH,HEIGHT" in pixels')
    args = parser.parse_args(argv)
    if args.capture == "-":
        text = sys.stdin.buffer.read().decode("utf-8", "replace")
    else:
        with open(args.capture, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    grid = parse_capture(text, args.cols, args.rows)
    if grid.dropped:
        print("pane2html.py: %d characters beyond the %dx%d grid dropped"
              % (grid.dropped, grid.cols, grid.rows), file=sys.stderr)
    if args.size:
        print("%d,%d" % page_size(grid))
        return 0
    page = render_page(grid, args.theme, args.title)
    if args.output == "-":
        sys.stdout.write(page)
    else:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
