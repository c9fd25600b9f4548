#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Run the secret corpus for real (test_secret_corpus.sh).

  secret-runs.py CORPUS.json BIN OUT.tsv [CONTEXT...]

Every command line of CORPUS.json (tests/rules/secret-corpus.py --json) in
the contexts named (all when none) is started with PATH=BIN:$PATH, where
every program the corpus names is a copy of /bin/true: nothing real runs
but the wrappers themselves (sh, bash, env, sudo, srun).  The wrappers are
the system's own, by absolute path.  Lines run one after the other, srun's
eight at a time (each waits for Slurm).  OUT.tsv gets one line per run:
id, context, pid, exit status; the lines run in OUT's folder.  This
program's own argv holds no secret.
"""
import json
import os
import shutil
import subprocess
import sys

WRAPPERS = {"sh", "bash", "env", "sudo", "srun"}


def main():
    corpus, binpath, out = sys.argv[1:4]
    want = set(sys.argv[4:])
    runs = json.load(open(corpus))["runs"]
    env = dict(os.environ)
    env["PATH"] = binpath + ":" + env["PATH"]
    system = os.environ["PATH"]
    # the lines' own files (echo ... >> .netrc) go beside OUT
    cwd = os.path.dirname(os.path.abspath(out))
    done = []
    srun = []

    def start(r):
        argv = list(r["argv"])
        if r["ctx"] in WRAPPERS or argv[0] in WRAPPERS:
            real = shutil.which(argv[0], path=system)
            if real:
                argv[0] = real
        try:
            return subprocess.Popen(argv, env=env, cwd=cwd,
                                    stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL)
        except OSError as e:
            print("secret-runs: %s (%s): %s" % (r["id"], r["ctx"], e.strerror),
                  file=sys.stderr)
            return None

    for r in runs:
        if want and r["ctx"] not in want:
            continue
        if r["ctx"] == "srun":
            srun.append(r)
            continue
        p = start(r)
        done.append((r, p.pid, p.wait()) if p else (r, -1, 127))
    for i in range(0, len(srun), 8):
        batch = [(r, start(r)) for r in srun[i:i + 8]]
        for r, p in batch:
            done.append((r, p.pid, p.wait()) if p else (r, -1, 127))
    with open(out, "w") as f:
        for r, pid, rc in done:
            f.write("%s\t%s\t%d\t%d\n" % (r["id"], r["ctx"], pid, rc))


if __name__ == "__main__":
    main()
