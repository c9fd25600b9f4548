#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""manpage.py - doc/jobtrace.1 says what the command table says.

`jobtrace --list-commands` prints the table: per command its name, its
selectors and its --format words.  The man page's SYNOPSIS must have one
entry per command (the query commands with the same selectors and format
words, in the same order), and its COMMANDS section an item for each, and
neither a command the table does not have.  Usage: manpage.py [SRCDIR
[BUILDDIR]] (default $top_srcdir, $top_builddir); exits 1 on a difference.
"""
import os
import re
import shlex
import subprocess
import sys

ALTERNATING = {".BR", ".RB", ".IR", ".RI", ".BI", ".IB"}
FONT = re.compile(r"\\f[BIRP]")


def plain(line):
    """The text a man page line shows: macros and font escapes gone."""
    line = line.rstrip("\n")
    if line.startswith("."):
        macro, _, rest = line.partition(" ")
        try:
            args = shlex.split(rest.replace("\\ ", "\0"), posix=True)
        except ValueError:
            args = rest.split()
        args = [a.replace("\0", " ") for a in args]
        line = ("" if macro in ALTERNATING else " ").join(args)
    return FONT.sub("", line).replace("\\-", "-").replace("\\(em", "-")


def section(lines, name):
    """The lines of .SH name, up to the next .SH."""
    out, inside = [], False
    for line in lines:
        if line.startswith(".SH "):
            inside = line[4:].strip().strip('"') == name
            continue
        if inside:
            out.append(line)
    return out


def synopsis(lines):
    """{command: (selectors, formats)} of the SYNOPSIS entries."""
    entries, cur = [], []
    for line in section(lines, "SYNOPSIS") + [".br"]:
        if line.startswith(".br"):
            entries.append(" ".join(plain(x) for x in cur))
            cur = []
        else:
            cur.append(line)
    found = {}
    for e in entries:
        m = re.match(r"\s*jobtrace\s+(?:\[--config FILE\]\s+)?([a-z][a-z-]*)",
                     e)
        if not m:
            continue    # jobtrace [COMMAND] --help, --list-commands
        name = m.group(1)
        if name in found:
            print(f"SYNOPSIS: {name} twice")
            found[name] = None
            continue
        group = re.search(r"\(([^()]*)\)", e)
        sel = re.findall(r"--([a-z-]+)", group.group(1)) if group else []
        fm = re.search(r"--format\s+([a-z|-]+)", e)
        found[name] = (sel, fm.group(1).split("|") if fm else [])
    return found


def commands(lines):
    """The first word of each COMMANDS item (.TP, .TQ), and of a .br after it."""
    names, prev = set(), ""
    for line in section(lines, "COMMANDS"):
        if prev in (".TP", ".TQ", ".br") and line.startswith((".B ", ".BR ")):
            word = plain(line).split()
            if word:
                names.add(word[0])
        prev = line.strip()
    return names


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.environ.get("top_srcdir", ".")
    build = args[1] if len(args) > 1 else os.environ.get("top_builddir", ".")
    lines = open(os.path.join(src, "doc", "jobtrace.1"),
                 encoding="utf-8").read().split("\n")
    out = subprocess.run([os.path.join(build, "jobtrace"), "--list-commands"],
                         check=True, capture_output=True, text=True).stdout
    table = {}
    for row in out.splitlines():
        name, sel, fmt = row.split("\t")
        table[name] = ([] if sel == "-" else sel.split(","),
                       [] if fmt == "-" else fmt.split(","))
    syn, items, bad = synopsis(lines), commands(lines), 0
    for name, (sel, fmt) in table.items():
        if name not in syn:
            print(f"SYNOPSIS: no entry for {name}")
            bad += 1
        elif syn[name] is None or (sel and syn[name] != (sel, fmt)):
            print(f"SYNOPSIS: {name} {syn[name]}, the table: {(sel, fmt)}")
            bad += 1
        if name not in items:
            print(f"COMMANDS: no item for {name}")
            bad += 1
    for name in sorted(set(syn) - set(table)):
        print(f"SYNOPSIS: {name} is no command of the table")
        bad += 1
    for name in sorted(items - set(table)):
        print(f"COMMANDS: {name} is no command of the table")
        bad += 1
    print(f"# {len(table)} commands, {len(syn)} synopsis entries,"
          f" {len(items)} command items, {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
