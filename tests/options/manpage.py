#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The man page (docs/heaptrace.1) against what heaptrace says of itself.

usage: manpage.py [--mutants] HEAPTRACE MANPAGE VERSION

Reads `heaptrace --help` and the --help of every command it points to
("(print --help)"), and the roff source of the page (no man or groff
needed), then checks:
  - every option of each --help group is in the page's OPTIONS under a
    .SS of the same title (a command's own: "print options"), with the
    same names, the same value syntax and the same default ("Default:"
    line; none when --help shows none), and OPTIONS lists nothing else;
  - the commands of --help's "Commands:" are those of the page's
    COMMANDS and SYNOPSIS, and the options of the usage lines those of
    SYNOPSIS;
  - no --option or -x the page names anywhere is unknown to every --help;
  - the version the page names is VERSION.
With --mutants, the page is broken in ways the checks must catch (an
option dropped, a default changed, an option --help does not know, a
command dropped) and each must be caught: the checks can fail.
Exit 0 pass, 1 fail, 99 harness error.
"""
import re
import subprocess
import sys

OPTION_LINE = re.compile(r"^  (?:(-[A-Za-z]), )?(--[A-Za-z][\w-]*)(?:=(\S+))?(?:\s|$)")
OPTION_TOKEN = re.compile(r"(?<![\w.-])(--?[A-Za-z][\w-]*)")


def run_help(ht, *cmd):
    p = subprocess.run([ht, *cmd, "--help"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"harness: {ht} {' '.join(cmd)} --help exited "
                 f"{p.returncode}: {p.stderr}")
    return p.stdout


def group_title(line):
    """'Leak check options (memcheck's):' -> 'Leak check options'."""
    return re.sub(r"\s*\(.*$", "", line.rstrip(":")).strip()


def parse_options(text, default_group=None):
    """{(group, --name): (short or None, value syntax, default or None)},
    from the option lines (two spaces, then the option) and the lines
    that continue them (deeper indented)."""
    opts = {}
    group = default_group
    current = None
    body = []

    def close():
        if current:
            m = re.search(r"\[([^\]]*)\]$", " ".join(body))
            key, short, meta = current
            opts[key] = (short, meta, m.group(1) if m else None)

    for line in text.splitlines():
        m = OPTION_LINE.match(line)
        if m and group:
            close()
            short, name, meta = m.groups()
            current = ((group, name), short, (meta or "").strip("<>"))
            body = [line[m.end():].strip()]
        elif current and line.startswith("    "):
            body.append(line.strip())
        else:
            close()
            current = None
            if line and not line[0].isspace() and line.endswith(":") \
                    and "options" in line:
                group = group_title(line)
            elif default_group is None and line and not line[0].isspace():
                group = None
    close()
    return opts


def usage_lines(text):
    lines = []
    for line in text.splitlines():
        if line.startswith("usage:") or (lines and line.startswith("       ")):
            lines.append(line)
        elif lines:
            break
    return lines


def parse_help(ht):
    main = run_help(ht)
    helps = {"": main}
    commands = set()
    in_commands = False
    for line in main.splitlines():
        if line == "Commands:":
            in_commands = True
            continue
        if in_commands:
            if not line.strip():
                break
            m = re.match(r"^  ([a-z]+)\s{2,}", line)
            if m:
                commands.add(m.group(1))
    for cmd in sorted(commands):
        if f"({cmd} --help)" in main:
            helps[cmd] = run_help(ht, cmd)
    opts = parse_options(main)
    for cmd, text in helps.items():
        if cmd:
            opts.update(parse_options(text, f"{cmd} options"))
    usage_cmds, usage_opts = set(), set()
    for text in helps.values():
        for line in usage_lines(text):
            usage_cmds.update(re.findall(r"heaptrace ([a-z]+)", line))
            usage_opts.update(OPTION_TOKEN.findall(line))
    known = set()
    for text in helps.values():
        known.update(OPTION_TOKEN.findall(text))
    return {"opts": opts, "commands": commands, "usage_cmds": usage_cmds,
            "usage_opts": usage_opts - {"--"}, "known": known}


def roff_text(line):
    """The words a roff line shows, fonts and escapes dropped: macro lines
    (".BR a b") by their arguments, joined as the alternating-font macros
    join them."""
    if line.startswith("."):
        parts = line.split(None, 1)
        macro, args = parts[0], parts[1] if len(parts) > 1 else ""
        words = re.findall(r'"([^"]*)"|(\S+)', args)
        words = [a or b for a, b in words]
        if macro in (".BR", ".RB", ".BI", ".IB", ".IR", ".RI"):
            line = "".join(words)
        elif macro in (".B", ".I", ".SH", ".SS"):
            line = " ".join(words)
        else:
            return ""
    line = re.sub(r"\\f[BIRP]", "", line)
    for esc, text in (("\\-", "-"), ("\\&", ""), ("\\(lq", '"'),
                      ("\\(rq", '"'), ("\\(ti", "~"), ("\\e", "\\")):
        line = line.replace(esc, text)
    return line


def parse_man(src):
    sections = {}
    section = sub = None
    man = {"opts": {}, "titles": set(), "commands": set(),
           "synopsis_cmds": set(), "synopsis_opts": set(), "tokens": set(),
           "th": ""}
    lines = src.splitlines()
    i = 0
    current = None
    while i < len(lines):
        line = lines[i]
        i += 1
        if line.startswith('.\\"'):
            continue
        text = roff_text(line)
        man["tokens"].update(OPTION_TOKEN.findall(text))
        if line.startswith(".TH"):
            man["th"] = line
        elif line.startswith(".SH"):
            section, sub, current = text, None, None
            sections.setdefault(section, [])
        elif line.startswith(".SS"):
            sub, current = text, None
            if section == "OPTIONS":
                man["titles"].add(sub)
        elif line.startswith(".TP") and i < len(lines):
            tag = roff_text(lines[i])
            i += 1
            man["tokens"].update(OPTION_TOKEN.findall(tag))
            if section == "COMMANDS" and re.fullmatch(r"[a-z]+", tag):
                man["commands"].add(tag)
            current = None
            if section == "OPTIONS":
                m = re.fullmatch(r"(?:(-[A-Za-z]), )?(--[A-Za-z][\w-]*)"
                                 r"(?:=(\S+))?", tag)
                if not m or not sub:
                    man.setdefault("bad_tags", []).append(tag)
                    continue
                short, name, meta = m.groups()
                key = (sub, name)
                if key in man["opts"]:
                    man.setdefault("dups", []).append(key)
                current = [short, meta or "", None]
                man["opts"][key] = current
        elif section == "OPTIONS" and current is not None:
            m = re.fullmatch(r"Default: (.*)\.", text)
            if m:
                current[2] = m.group(1)
        elif section == "SYNOPSIS":
            m = re.match(r"heaptrace ([a-z]+)", text)
            if m:
                man["synopsis_cmds"].add(m.group(1))
            man["synopsis_opts"].update(OPTION_TOKEN.findall(text))
    man["opts"] = {k: tuple(v) for k, v in man["opts"].items()}
    man["sections"] = set(sections)
    return man


def check(helpinfo, man, version):
    """The list of disagreements between the --help texts and the page."""
    errs = []
    hopts, mopts = helpinfo["opts"], man["opts"]
    for tag in man.get("bad_tags", []):
        errs.append(f"OPTIONS: entry '{tag}' is not an option tag "
                    "(or is outside a .SS)")
    for key in man.get("dups", []):
        errs.append(f"OPTIONS: {key[1]} twice under '{key[0]}'")
    for key, (short, meta, default) in sorted(hopts.items()):
        group, name = key
        if key not in mopts:
            errs.append(f"{name} ({group} in --help) is not in the page's "
                        f"OPTIONS under '{group}'")
            continue
        mshort, mmeta, mdefault = mopts[key]
        if mshort != short:
            errs.append(f"{name}: short name {mshort} in the page, {short} "
                        "in --help")
        if mmeta != meta:
            errs.append(f"{name}: value '{mmeta}' in the page, '{meta}' in "
                        "--help")
        if mdefault != default:
            errs.append(f"{name}: default {mdefault!r} in the page, "
                        f"{default!r} in --help")
    for key in sorted(set(mopts) - set(hopts)):
        errs.append(f"{key[1]} is in the page's OPTIONS under '{key[0]}', "
                    "but --help has no such option there")
    groups = {g for g, _ in hopts}
    for title in sorted(man["titles"] - groups):
        errs.append(f"OPTIONS: .SS '{title}' is no --help group")
    for title in sorted(groups - man["titles"]):
        errs.append(f"OPTIONS: no .SS '{title}' (a --help group)")
    for what, got in (("COMMANDS", man["commands"]),
                      ("SYNOPSIS", man["synopsis_cmds"]),
                      ("the --help usage lines", helpinfo["usage_cmds"])):
        for c in sorted(helpinfo["commands"] - got):
            errs.append(f"command {c} (--help's Commands) is not in {what}")
        for c in sorted(got - helpinfo["commands"]):
            errs.append(f"command {c} of {what} is not in --help's Commands")
    syn = man["synopsis_opts"] - {"--"}
    for o in sorted(helpinfo["usage_opts"] - syn):
        errs.append(f"{o} is in a --help usage line, not in SYNOPSIS")
    for o in sorted(syn - helpinfo["usage_opts"]):
        errs.append(f"{o} is in SYNOPSIS, not in any --help usage line")
    for o in sorted(man["tokens"] - helpinfo["known"] - {"--"}):
        errs.append(f"the page names {o}, which no --help knows")
    if f'"heaptrace {version}"' not in man["th"]:
        errs.append(f".TH does not name heaptrace {version}: {man['th']}")
    for line in re.findall(r"heaptrace \d+\.\d+\.\d+", "\n".join(
            roff_text(l) for l in man.get("src", "").splitlines())):
        if line != f"heaptrace {version}":
            errs.append(f"the page says '{line}', the version is {version}")
    for s in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS",
              "SIGNALS", "EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES",
              "SEE ALSO"):
        if s not in man["sections"]:
            errs.append(f"no section {s}")
    return errs


def man_of(src):
    man = parse_man(src)
    man["src"] = src
    return man


def drop_entry(src, tag_start):
    """SRC without the .TP entry whose tag line starts with TAG_START."""
    lines = src.splitlines()
    for i, line in enumerate(lines):
        if line == ".TP" and lines[i + 1].startswith(tag_start):
            j = i + 1
            while j + 1 < len(lines) and not lines[j + 1].startswith(
                    (".TP", ".SS", ".SH")):
                j += 1
            return "\n".join(lines[:i] + lines[j + 1:]) + "\n"
    sys.exit(f"harness: no entry {tag_start} to drop")


def mutants(src):
    """(what, broken page) pairs that check() must fault."""
    depth = "\\fB\\-\\-depth\\fR"
    yield "an option dropped (--depth)", drop_entry(src, depth)
    yield "a default changed (--depth 30 -> 31)", src.replace(
        "Default: \\fB30\\fR.", "Default: \\fB31\\fR.", 1)
    yield "a default added (--duration)", src.replace(
        "or the target's exit.\n", "or the target's exit.\n"
        "Default: \\fB0\\fR.\n", 1)
    yield "an option --help does not know", src.replace(
        ".SS \"Valgrind core options\"\n", ".SS \"Valgrind core options\"\n"
        ".TP\n\\fB\\-\\-bogus\\fR=\\fByes\\fR|\\fBno\\fR\nNo such option.\n", 1)
    yield "an option named in prose only", src.replace(
        "Say what heaptrace is doing.", "Say more, as \\-\\-chatty does.", 1)
    yield "a command dropped (diff)", drop_entry(src, ".B diff")
    yield "a value syntax changed (--backend)", src.replace(
        "\\fB\\-\\-backend\\fR=\\fBauto\\fR|\\fBinline\\fR|\\fBptrace\\fR",
        "\\fB\\-\\-backend\\fR=\\fBauto\\fR|\\fBinline\\fR", 1)
    yield "a group renamed", src.replace(
        '.SS "heaptrace options"', '.SS "Other options"', 1)


def main(argv):
    want_mutants = argv[:1] == ["--mutants"]
    if want_mutants:
        argv = argv[1:]
    if len(argv) != 3:
        print(__doc__.splitlines()[2], file=sys.stderr)
        return 99
    ht, page, version = argv
    helpinfo = parse_help(ht)
    if len(helpinfo["opts"]) < 30 or len(helpinfo["commands"]) < 6:
        print(f"harness: read only {len(helpinfo['opts'])} options and "
              f"{len(helpinfo['commands'])} commands from --help")
        return 99
    src = open(page, encoding="utf-8").read()
    if not want_mutants:
        errs = check(helpinfo, man_of(src), version)
        for e in errs:
            print(f"FAIL: {e}")
        print(f"{len(helpinfo['opts'])} options and "
              f"{len(helpinfo['commands'])} commands of --help checked "
              f"against {page}: {len(errs)} disagreements")
        return 1 if errs else 0
    fails = 0
    if check(helpinfo, man_of(src), version):
        print("harness: the page itself does not pass")
        return 99
    for what, broken in mutants(src):
        if broken == src:
            print(f"harness: mutant '{what}' changed nothing")
            return 99
        errs = check(helpinfo, man_of(broken), version)
        if errs:
            print(f"caught: {what}: {errs[0]}")
        else:
            print(f"FAIL: not caught: {what}")
            fails += 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
