#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""funclen.py - no function of the agent is longer than MAX_LINES lines,
but for those listed in ALLOWED (a table, or a switch that dispatches and
does nothing else).  Usage: funclen.py SRCDIR [--all]: prints each
function over the limit (with --all, the longest 20 too) and exits 1 when
one is not allowed.

A function is what the kernel style writes: its head ending at a line "{"
in the first column, its body up to the next "}" in the first column.
"""
import os
import re
import sys

MAX_LINES = 120
# function: why it may be longer
ALLOWED = {
    "hookargs_parse": "a switch over the options, one case each",
}
# still to be split (issue 25): they must be, or be allowed above
PENDING = {
}
NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(")


def functions(path):
    """(name, first line, length) of each function in path."""
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # the head: back to the line that starts the declaration
            j = i - 1
            while j > 0 and lines[j - 1].strip() and \
                    not lines[j - 1].rstrip().endswith((";", "}", "*/")) and \
                    not lines[j - 1].startswith(("#", "/*", " *")):
                j -= 1
            head = " ".join(lines[j:i])
            m = NAME.search(head)
            k = i + 1
            while k < len(lines) and lines[k] != "}":
                k += 1
            if m and "=" not in head.split("(")[0]:
                out.append((m.group(1), i + 1, k - i + 1))
            i = k
        i += 1
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.environ.get("top_srcdir", ".")
    show_all = "--all" in sys.argv
    found = []
    for root, _dirs, names in os.walk(os.path.join(src, "agent")):
        for n in sorted(names):
            if n.endswith(".c"):
                p = os.path.join(root, n)
                for name, line, length in functions(p):
                    found.append((length, os.path.relpath(p, src), line, name))
    found.sort(reverse=True)
    bad = 0
    for length, path, line, name in found:
        if length <= MAX_LINES:
            break
        why = ALLOWED.get(name) or PENDING.get(name)
        print(f"{path}:{line}: {name}: {length} lines"
              + (f" (allowed: {why})" if why else ""))
        bad += why is None
    for name in sorted((set(ALLOWED) | set(PENDING)) -
                       {f[3] for f in found if f[0] > MAX_LINES}):
        print(f"{name} is allowed but no longer over {MAX_LINES}: remove it")
        bad += 1
    if show_all:
        for length, path, line, name in found[:20]:
            print(f"  {length:4d} {path}:{line} {name}")
    print(f"# {len(found)} functions, {sum(1 for f in found if f[0] > MAX_LINES)}"
          f" over {MAX_LINES} lines, {bad} not allowed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
