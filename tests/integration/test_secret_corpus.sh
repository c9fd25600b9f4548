#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_secret_corpus.sh - secrets in shapes no list names never reach a
# record (issue 23), run for real under the agent with the default rules.
# tests/rules/secret-corpus.py makes ~280 secret-bearing command lines at
# test time, from each token format's documented shape and each tool
# entry's synopsis (fake values, random parts from a printed seed), and
# wraps each in every context: run directly, inside `sh -c`, `bash -lc`,
# `env VAR=x`, `sudo`, a real one-node Slurm's `srun`, `docker exec` (a
# program named so), and made longer so that the kernel's argv limit cuts
# inside the secret.  Every program the lines name is a copy of /bin/true;
# only the wrappers are real.  Then: every run is recorded, nearly all with
# [REDACTED] in them, the cut ones as cut; after the agent stopped, no file
# it wrote (store and its WAL, spool segments, the sinks' ack files, the
# run folder, its log) nor what its HTTP sink received holds 8 bytes in a
# row of any secret.  SEED=N repeats a run.
#
# Needs root, kernel BTF, python3, sudo and Slurm (installed if missing).
# Exit 0 pass, 1 fail, 77 skipped, 99 error.

set -u
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/slurm/slurm-env.sh"
need_built "$AGENT" "$CLI"
need_commands python3 sudo
if ! install_slurm; then
	echo "# error: slurm-wlm, munge and libslurm-dev are missing and could not be installed"
	exit 99
fi

# Slurm's daemons and folder.
extra_cleanup() {
	slurm_env_stop
}
start_watchdog 900

BIN=$T/bin
mkdir -p "$BIN" "$T/home" "$T/recv"
# munged and slurmd run as other users: they reach the Slurm folder in $T
chmod 0755 "$T"
python3 "$top_srcdir/tests/rules/secret-corpus.py" ${SEED:+--seed "$SEED"} \
	--bin "$BIN" --json "$T/corpus.json" 2>"$T/corpus.log"
note "$(cat "$T/corpus.log")"
# every program the corpus names runs nothing (a login shell finds them too)
for p in $(python3 -c 'import json, sys; print(" ".join(json.load(open(sys.argv[1]))["programs"]))' \
	"$T/corpus.json"); do
	cp /bin/true "$BIN/$p"
done
printf 'PATH=%s:$PATH\n' "$BIN" >"$T/home/.bash_profile"
# what must never be stored: every 8 bytes in a row of every secret
python3 - "$T/corpus.json" "$T/canaries" <<'PY'
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
pats = set()
for r in runs:
    for c in r["canaries"]:
        for i in range(len(c) - 7):
            pats.add(c[i:i + 8])
open(sys.argv[2], "w").write("\n".join(sorted(pats)) + "\n")
PY
note "$(wc -l <"$T/canaries") canary windows of 8 bytes"

if ! slurm_env_start linuxproc "$T/slurm"; then
	check "a one-node Slurm starts" false
	finish
fi
python3 "$top_srcdir/tests/integration/http-receiver.py" "$T/recv/port" "$T/recv" &
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 1 50); do [ -s "$T/recv/port" ] && break; sleep 0.1; done
SINKS="sinks = ( { type = \"http\"; name = \"collector\";
  url = \"http://127.0.0.1:$(cat "$T/recv/port")/ingest\"; batch_age = 0.3; retry_max = 1.0; } );"
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "$SINKS" || finish

# ---- run them --------------------------------------------------------------------
t0=$(now)
HOME=$T/home python3 "$top_srcdir/tests/integration/secret-runs.py" \
	"$T/corpus.json" "$BIN" "$T/runs.tsv"
note "$(wc -l <"$T/runs.tsv") runs in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.0f", b - a }') s"
RUNS=$(wc -l <"$T/runs.tsv")
for ctx in direct sh bash env sudo srun docker cut; do
	check "the $ctx context has runs ($(awk -F'\t' -v c=$ctx '$2 == c' "$T/runs.tsv" | wc -l))" \
		between "$(awk -F'\t' -v c=$ctx '$2 == c' "$T/runs.tsv" | wc -l)" 20 100000
done
# the wrappers themselves ran: sudo and srun exit 0 with a program that does
check "sudo ran its programs (exit 0 for $(awk -F'\t' '$2 == "sudo" && $4 == 0' "$T/runs.tsv" | wc -l) of $(awk -F'\t' '$2 == "sudo"' "$T/runs.tsv" | wc -l))" \
	between "$(awk -F'\t' '$2 == "sudo" && $4 == 0' "$T/runs.tsv" | wc -l)" 200 100000
check "srun ran its programs (exit 0 for $(awk -F'\t' '$2 == "srun" && $4 == 0' "$T/runs.tsv" | wc -l) of $(awk -F'\t' '$2 == "srun"' "$T/runs.tsv" | wc -l))" \
	between "$(awk -F'\t' '$2 == "srun" && $4 == 0' "$T/runs.tsv" | wc -l)" 200 100000

# ---- recorded, and redacted -----------------------------------------------------
cut -f3 "$T/runs.tsv" | sort -n | paste -sd, >"$T/pids"
stored=0
for _ in $(seq 1 120); do
	stored=$(q "select count(distinct pid) from process where pid in ($(cat "$T/pids"));")
	[ "$stored" -ge "$RUNS" ] && break
	sleep 0.5
done
check "every run is recorded ($stored of $RUNS pids)" eq "$stored" "$RUNS"
redacted=$(q "select count(distinct pid) from process where pid in ($(cat "$T/pids")) and argv like '%[REDACTED]%';")
check "nearly every run's record holds [REDACTED] ($redacted of $RUNS)" \
	between "$redacted" "$((RUNS * 95 / 100))" "$RUNS"
# a cut run is stored cut, unless its shell ran its one command in its
# place (bash -c 'sshpass ...' becomes sshpass: the pid's record is that)
python3 - "$T/runs.tsv" "$DB" >"$T/cutcheck" <<'PY'
import json, sqlite3, sys
db = sqlite3.connect("file:%s?mode=ro" % sys.argv[2], uri=True, timeout=5)
n = ok = 0
for line in open(sys.argv[1]):
    rid, ctx, pid, rc = line.rstrip("\n").split("\t")
    if ctx != "cut":
        continue
    n += 1
    row = db.execute("select json_extract(json, '$.argv_truncated'), "
                     "json_extract(argv, '$[0]') from process where pid = ? "
                     "order by start_time desc limit 1", (int(pid),)).fetchone()
    if row and (row[0] == 1 or (rid.startswith("code:sh-")
                                and row[1].rsplit("/", 1)[-1] not in ("sh", "bash"))):
        ok += 1
    else:
        print("# not stored cut: %s (pid %s): %s" % (rid, pid, row))
print("%d %d" % (ok, n))
PY
read -r cutok ncut < <(tail -n 1 "$T/cutcheck")
note "$(grep '^#' "$T/cutcheck")"
check "the cut runs are stored as cut ($cutok of $ncut)" eq "$cutok" "$ncut"

# what gets delivered: wait until the sink has nothing left
wait_delivered collector 60
stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0

# ---- no 8 bytes of a secret anywhere the agent wrote --------------------------------
agent_files collector
files=$FILES
check "the HTTP sink received the runs' records" \
	between "$(grep -c '\[REDACTED\]' "$T/recv/records.ndjson" 2>/dev/null)" "$((RUNS * 95 / 100))" 10000000
leaks=""
while IFS= read -r f; do
	hit=$(grep -a -o -F -f "$T/canaries" "$f" | sort -u | head -n 5 | paste -sd' ')
	[ -n "$hit" ] && leaks="$leaks ${f#"$T"/}: $hit;"
done <<<"$files"
check "no file the agent wrote or sent holds 8 bytes in a row of a secret (${leaks:-none})" eq "$leaks" ""
if [ -n "$leaks" ]; then
	# which lines leaked: the runs whose canaries hold a window found
	for f in $files; do grep -a -o -F -f "$T/canaries" "$f"; done | sort -u >"$T/found"
	python3 - "$T/corpus.json" "$T/found" >"$T/leaked" <<'PY'
import json, sys
found = set(open(sys.argv[2]).read().split())
for r in json.load(open(sys.argv[1]))["runs"]:
    if any(c[i:i + 8] in found for c in r["canaries"] for i in range(len(c) - 7)):
        print(r["id"], r["ctx"])
PY
	note "$(wc -l <"$T/leaked") runs leaked, of $(cut -d' ' -f1 "$T/leaked" | sort -u | wc -l) lines; the first:"
	note "$(head -n 20 "$T/leaked")"
fi
finish
