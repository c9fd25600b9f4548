#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""layers.py - the agent's layers hold: every #include "x.h" of agent/
names a header of the includer's own layer or of one below it
(doc/architecture.md), and no module includes itself through others (no
cycle between modules).  Usage: layers.py SRCDIR.  Prints each violation
and a summary; exit status 0 when none, 1 otherwise.

A module is a .c file and its .h.  A layer may use its own folder and
those listed for it in ALLOWED; bpf/events.h is the kernel ABI and is
open to every layer, and the headers make generates (in the build tree)
belong to the layer that includes them.

The structs of OPAQUE are defined in their own .c file and nowhere else
(agent/, tests/, bench/): every other file sees only `struct NAME;` and
uses the module's functions, so a field read from outside does not
compile.
"""
import os
import re
import sys

ALLOWED = {
    "lib": ["lib"],
    "core": ["lib", "core"],
    "daemon/collect": ["lib", "core", "daemon/collect"],
    "daemon/track": ["lib", "core", "daemon/collect", "daemon/track"],
    "daemon/cloud": ["lib", "core", "daemon/collect", "daemon/track",
                     "daemon/cloud"],
    "daemon/deliver": ["lib", "core", "daemon/deliver"],
    "daemon": ["lib", "core", "daemon/collect", "daemon/track",
               "daemon/cloud", "daemon/deliver", "daemon"],
    "query": ["lib", "core", "query"],
    "cli": ["lib", "core", "query", "cli"],
}
SHARED = {"events.h"}
GENERATED = {"rules_builtin.h", "report_html_assets.h", "jobtrace.skel.h"}
# Arrows back up and cycles still being removed (issue 25): each must
# still exist, or the test says to remove it from here.
# (includer's layer, header); none: the query child is the jobtrace command
EXCEPTIONS = set()
# none left: the analyses' toolkit is storeq.h, not the report command
KNOWN_CYCLES = []
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# struct: the one file (under agent/) that defines it
OPAQUE = {
    "tracker": "daemon/track/tracker.c",
    "containers": "daemon/cloud/containers.c",
}
DEFINE = re.compile(r'\bstruct\s+(\w+)\s*\{')


def opaque(src):
    """Definitions of OPAQUE structs outside their file, and files that
    should define one and do not: each printed; how many."""
    bad = 0
    seen = set()
    for top in ("agent", "tests", "bench"):
        for root, _dirs, names in os.walk(os.path.join(src, top)):
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.join(root, n)
                rel = os.path.relpath(path, src)
                text = open(path, encoding="utf-8", errors="replace").read()
                for name in DEFINE.findall(text):
                    home = OPAQUE.get(name)
                    if home is None:
                        continue
                    if rel == os.path.join("agent", home):
                        seen.add(name)
                        continue
                    print(f"{rel}: defines struct {name}, which only "
                          f"agent/{home} may (its fields are that "
                          "module's)")
                    bad += 1
    for name in sorted(set(OPAQUE) - seen):
        print(f"agent/{OPAQUE[name]}: does not define struct {name}")
        bad += 1
    return bad


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else os.environ.get("top_srcdir", ".")
    agent = os.path.join(src, "agent")
    where = {}          # header -> layer
    files = []          # (layer, path)
    for root, _dirs, names in os.walk(agent):
        layer = os.path.relpath(root, agent)
        for n in sorted(names):
            if not n.endswith((".c", ".h")):
                continue
            if layer == ".":
                print(f"agent/{n}: a C file directly in agent/, in no layer")
                files.append((None, os.path.join(root, n)))
                continue
            if layer not in ALLOWED:
                print(f"agent/{layer}/{n}: {layer} is no layer of ALLOWED")
                continue
            if n.endswith(".h"):
                if n in where:
                    print(f"{n}: in {where[n]} and {layer}")
                where[n] = layer
            files.append((layer, os.path.join(root, n)))
    bad = sum(1 for l, _ in files if l is None)
    edges = {}          # module -> set(modules)
    used = set()
    for layer, path in files:
        if layer is None:
            continue
        mod = os.path.splitext(os.path.basename(path))[0]
        text = open(path, encoding="utf-8", errors="replace").read()
        for h in INCLUDE.findall(text):
            h = os.path.basename(h)
            if h in SHARED or h in GENERATED:
                continue
            to = where.get(h)
            if to is None:
                print(f"{os.path.relpath(path, src)}: includes {h}, "
                      "which no layer has")
                bad += 1
                continue
            target = os.path.splitext(h)[0]
            if target != mod:
                edges.setdefault(mod, set()).add(target)
            if to in ALLOWED[layer]:
                continue
            if (layer, h) in EXCEPTIONS:
                used.add((layer, h))
                continue
            print(f"{os.path.relpath(path, src)}: {layer} includes {h} "
                  f"of {to}, a layer it may not use")
            bad += 1
    for e in sorted(EXCEPTIONS - used):
        print(f"exception {e} is no longer needed: remove it")
        bad += 1
    # cycles between modules: Tarjan's strongly connected components
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    for c in comps:
        if set(c) in KNOWN_CYCLES:
            continue
        print("include cycle between modules: " + " <-> ".join(c))
        bad += 1
    for k in KNOWN_CYCLES:
        if sorted(k) not in comps:
            print(f"known cycle {sorted(k)} is gone: remove it from here")
            bad += 1
    bad += opaque(src)
    n = sum(len(v) for v in edges.values())
    print(f"# {len(files)} files, {len(edges)} including modules, {n} "
          f"module arrows, {len(comps)} cycles, {bad} violations")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
