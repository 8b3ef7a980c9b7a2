#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Checks the DOM headless Chromium dumped of a heaptrace HTML report
against the profile it shows:
   check_dom.py DOM PROFILE [--sites|--no-sites] [--pages] [--stacks]
       [--largest]
The script ran to its end without an error; the chart has one mark per
snapshot, the peak marked; every function of the peak's top entries is in
the tree (and the flame graph, when wide enough to be drawn); the flame
graph, the site tables or the note replacing them are present. Prints
what it found; exit 1 with the reasons on a failure."""
import html
import re
import sys


def peak_top_functions(profile):
    """The functions of the top-level entries of the peak snapshot's tree
    (the detailed one with the largest heap when none is marked), with
    their share of it."""
    snaps, cur = [], None
    for line in open(profile, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("snapshot="):
            cur = {"kind": None, "heap": 0, "top": [], "root": 0,
                   "stacks": 0}
            snaps.append(cur)
        elif cur is None:
            continue
        elif line.startswith("mem_heap_B="):
            cur["heap"] = int(line.split("=")[1])
        elif line.startswith("mem_stacks_B="):
            cur["stacks"] = int(line.split("=")[1])
        elif line.startswith("heap_tree="):
            cur["kind"] = line.split("=")[1]
        elif re.match(r"^n\d+: ", line):
            cur["root"] = int(line.split()[1])
        elif re.match(r"^ n\d+: ", line):
            label = line.split(" ", 3)[3]
            label = re.sub(r"^0x[0-9A-Fa-f]+: ", "", label)
            if re.match(r"^in \d+ places?,", label):
                continue
            at = label.rfind(" (")
            fn = label[:at] if at > 0 and label.endswith(")") else label
            cur["top"].append((fn, int(line.split()[1])))
    peaks = [s for s in snaps if s["kind"] == "peak"] or sorted(
        (s for s in snaps if s["kind"] == "detailed"),
        key=lambda s: -s["heap"])[:1]
    if not peaks:
        return len(snaps), None
    # no peak snapshot (attach): the page's peak is the largest snapshot
    largest = max(snaps, key=lambda s: s["heap"] + s["stacks"])
    if peaks[0]["kind"] != "peak" and \
            largest["heap"] + largest["stacks"] > \
            peaks[0]["heap"] + peaks[0]["stacks"]:
        peaks[0] = dict(peaks[0], heap=largest["heap"],
                        stacks=largest["stacks"])
    return len(snaps), peaks[0]


def section(dom, ident):
    """The text of the element with id IDENT up to the next heading."""
    at = dom.find('id="%s"' % ident)
    if at < 0:
        return None
    end = dom.find("<h2", at)
    return dom[at:end if end > 0 else len(dom)]


def main():
    dom_path, profile = sys.argv[1], sys.argv[2]
    flags = sys.argv[3:]
    dom = open(dom_path, encoding="utf-8", errors="replace").read()
    errors = []
    m = re.search(r'data-js-error="([^"]*)"', dom)
    if m:
        errors.append("script error: " + html.unescape(m.group(1)))
    if 'data-rendered="yes"' not in dom:
        errors.append("the script did not run to its end")
    n_snaps, peak = peak_top_functions(profile)
    marks = re.findall(r'<circle class="snap[^"]*"', dom)
    if len(marks) != n_snaps:
        errors.append("%d snapshot marks, want %d" % (len(marks), n_snaps))
    if peak and sum('peak' in mk for mk in marks) != 1:
        errors.append("the peak is not marked once")
    if 'id="chart"' not in dom:
        errors.append("no chart")
    tree = section(dom, "tree")
    flame = section(dom, "flame")
    if tree is None:
        errors.append("no tree")
    if flame is None:
        errors.append("no flame graph")
    elif peak and peak["root"] and 'class="fr"' not in flame:
        errors.append("the flame graph has no node")
    if peak and tree is not None:
        tree_text = html.unescape(tree)
        flame_text = html.unescape(flame or "")
        for fn, b in peak["top"]:
            if fn not in tree_text:
                errors.append("peak entry %r not in the tree" % fn)
            if b and b >= peak["root"] / 100 and fn not in flame_text:
                errors.append("peak entry %r not in the flame graph" % fn)
    if "--sites" in flags:
        if not re.search(r'<table class="sites" id="sites"', dom):
            errors.append("no site table")
        if "leak-summary" not in dom and "--leak" in flags:
            errors.append("no leak summary")
    if "--no-sites" in flags and 'id="no-sites"' not in dom:
        errors.append("no note in place of the site tables")
    if "--largest" in flags and not re.search(
            r'<h2[^>]*>Allocation tree of snapshot \d+</h2>', dom):
        errors.append("the largest snapshot (no tree) not told from the "
                      "tree's")
    if "--pages" in flags and "pages as heap" not in dom:
        errors.append("pages-as-heap not said")
    facts = re.search(r'<dt>peak</dt><dd>([^<]*)</dd>', dom)
    fact = html.unescape(facts.group(1)) if facts else ""
    # JavaScript's numbers are exact up to 2^53 only
    if peak and peak["heap"] < 2 ** 53 and \
            "{:,}".format(peak["heap"]) not in fact:
        errors.append("peak fact %r without the peak's %d bytes" %
                      (fact, peak["heap"]))
    if "--pages" in flags:
        if "pages mapped (--pages-as-heap)" not in fact:
            errors.append("peak fact %r not labelled as pages" % fact)
        if "--pages-as-heap only pages mapped are counted" not in dom:
            errors.append("no note saying pages have no site statistics")
    if "--stacks" in flags and peak and \
            "stacks ({:,} B)".format(peak["stacks"]) not in fact:
        errors.append("peak fact %r without the peak's %d stack bytes" %
                      (fact, peak["stacks"]))
    rows = len(re.findall(r'<tr class="row" data-n="\d+"', dom))
    ms = re.search(r'data-render-ms="(\d+)"', dom)
    print("%s: %d snapshot marks, %d peak entries, %d flame nodes, "
          "%d table rows, drawn in %s ms" % (
              dom_path, len(marks), len(peak["top"]) if peak else 0,
              len(re.findall(r'class="fr"', dom)), rows,
              ms.group(1) if ms else "?"))
    if errors:
        sys.exit("\n".join(errors))


main()
