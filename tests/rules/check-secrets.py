#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Check what `jobtrace rules test --lines` decided for the secret and the
benign corpora (run-secrets.sh runs it).

  check-secrets.py leaks OUTPUT CANARIES
      every line decided, no rule failed, no canary in any decision
  check-secrets.py benign OUTPUT LINES MAX_PERCENT
      at most MAX_PERCENT of the lines changed; each change listed
  check-secrets.py coverage RULES_DIR CORPUS_PY
      every format of 31-secret-formats.lua and every entry of
      32-secret-tools.lua has a line in the secret corpus

Prints "ok - ..." / "not ok - ..." lines and "# ..." notes; exits 1 on a
failure.
"""
import re
import subprocess
import sys


def blocks(path):
    """Decisions of a --lines run: { line number: block text }."""
    out = {}
    cur = None
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"line: +(\d+)$", line.rstrip("\n"))
        if m:
            cur = int(m.group(1))
            out[cur] = ""
        elif cur is not None:
            out[cur] += line
    return out


def argv_of(block):
    m = re.search(r"^argv: +(.*)$", block, re.M)
    return m.group(1) if m else None


def leaks(output, canaries):
    rows = [l.rstrip("\n").split("\t") for l in open(canaries)]
    got = blocks(output)
    bad = 0
    n = 0
    for i, row in enumerate(rows):
        # the corpus file has one command line per line, no comments
        b = got.get(i + 1)
        n += 1
        if b is None or argv_of(b) is None:
            print("not ok - %s (%s): no decision" % (row[0], row[1]))
            bad += 1
            continue
        if not re.search(r"^errors: +0 rule", b, re.M):
            print("not ok - %s (%s): a rule failed: %s" % (row[0], row[1],
                  " ".join(b.split("\n")[-3:])[:300]))
            bad += 1
            continue
        hit = [c for c in row[2:] if c and c in b]
        if hit:
            print("not ok - %s (%s): canary %s stored: %s" % (row[0], row[1], hit[0],
                  argv_of(b)[:400]))
            bad += 1
    print("%s - %d secret-bearing command lines, %d with a canary or a failed rule"
          % ("ok" if bad == 0 else "not ok", n, bad))
    return bad == 0


def benign(output, lines, max_pct):
    src = [l.rstrip("\n") for l in open(lines)]
    got = blocks(output)
    numbered = [i + 1 for i, l in enumerate(src)
                if l.strip() and not l.lstrip().startswith("#")]
    changed = []
    for no in numbered:
        b = got.get(no)
        if b is None:
            print("not ok - benign line %d: no decision" % no)
            return False
        a = argv_of(b) or ""
        if a.endswith("(changed by the rules)"):
            changed.append((no, src[no - 1], a))
    for no, line, a in changed:
        print("# changed, line %d: %s\n#   stored as: %s" % (no, line, a))
    pct = 100.0 * len(changed) / max(1, len(numbered))
    ok = len(numbered) >= 200 and pct <= max_pct
    print("%s - %d benign command lines, %d changed (%.2f %%, at most %s %%)"
          % ("ok" if ok else "not ok", len(numbered), len(changed), pct, max_pct))
    return ok


def lua_names(path, fn):
    """The names each call fn(NAMES, ...) of a rule file registers, one set
    per call (a list or a string; a loop's list for `fn(t, ...)`)."""
    text = open(path).read()
    calls = []
    for m in re.finditer(r"(?m)^\s*(?:for _, t in ipairs (\{[^}]*\}) do\s*)?"
                         + fn + r"\(\s*(\{[^}]*\}|\"[^\"]*\"|t)\s*,", text):
        arg = m.group(2)
        src = m.group(1) if arg == "t" else arg
        calls.append(set(re.findall(r'"([^"]+)"', src or "")))
    return calls


def coverage(rules, corpus):
    ok = True
    have = set(subprocess.check_output([sys.executable, corpus, "--formats"],
                                       text=True).split())
    formats = set(re.findall(r'name = "([^"]+)"', open(rules + "/31-secret-formats.lua").read()))
    missing = sorted(formats - have)
    print("%s - the secret corpus has a line for each of the %d token formats%s"
          % ("ok" if not missing else "not ok", len(formats),
             " (missing: %s)" % ", ".join(missing) if missing else ""))
    ok = ok and not missing
    tools = set(subprocess.check_output([sys.executable, corpus, "--tools"],
                                        text=True).split())
    entries = lua_names(rules + "/32-secret-tools.lua", "tool") + \
        lua_names(rules + "/32-secret-tools.lua", "code")
    missing = [sorted(e)[0] for e in entries if e and not e & tools]
    print("%s - the secret corpus has a line for each of the %d tool entries%s"
          % ("ok" if not missing else "not ok", len(entries),
             " (missing: %s)" % ", ".join(missing) if missing else ""))
    return ok and not missing


def main():
    what = sys.argv[1]
    if what == "leaks":
        good = leaks(sys.argv[2], sys.argv[3])
    elif what == "benign":
        good = benign(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif what == "coverage":
        good = coverage(sys.argv[2], sys.argv[3])
    else:
        sys.exit("check-secrets.py: leaks|benign|coverage ...")
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
