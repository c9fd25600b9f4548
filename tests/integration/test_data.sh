#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_data.sh - report's Data section and `jobtrace files` on a real
# Snakemake pipeline run in jobscript mode (as test_rightsize.sh runs it).
#
# An eval-style Snakefile: prepare writes out/prep.txt; small reads it and
# writes out/small.txt; big reads it and a reference from outside the run
# (ref/ref.txt), writes out/big.txt, and three scratch files that its
# tools delete: one while open, one after closing it, one through rm
# after closing it (before the writer ends).  The
# references are the Snakefile itself and Snakemake's own
# --detailed-summary (each output's rule and input files), and the files'
# sizes on disk:
#
#  - every rule's declared outputs are in its Data section's outputs, and
#    its declared inputs in its inputs, each with its size on disk (exact);
#  - out/prep.txt as an input of small and big names prepare ("from"), the
#    reference comes from outside the run (from null);
#  - big's scratch files are temporary files of big, in no output list;
#  - `jobtrace files --run R --task big --format csv` lists big's files with
#    the bytes the tools moved (cat read the inputs whole: exact);
#  - the text report has the Data section.
#
# The pipeline runs twice: with files.follow_opens (every open and close
# is seen: all of the above must hold), then with the default (the open
# files at each sample pass and at each process's end): every declared
# output must be there, a declared input may be missing only as the design
# admits (closed between two passes; its task's rchar covers its size),
# and the Data section must say so.
#
# Needs root, kernel BTF, snakemake, python3.  Exit 0 pass, 1 fail, 77
# skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_data.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands snakemake python3
start_watchdog 300

W=$T/wf
TAG=dt$$
mkdir -p "$W/ref"
chmod 755 "$T"
# the reference: 300000 bytes from outside the run
yes reference | head -c 300000 >"$W/ref/ref.txt"

# a tool's scratch file (opened by its absolute path), deleted as the
# third argument says: "open" unlinks it while it is open (the kernel
# sees it at its close), "closed" after closing it, "child" has rm remove
# it after the close, before the tool ends
cat >"$W/scratch.py" <<'PY'
import os, subprocess, sys
path, size, how = os.path.abspath(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
with open(path, "wb") as f:
    f.write(b"s" * size)
    f.flush()
    if how == "open":
        os.unlink(path)
if how == "closed":
    os.unlink(path)
elif how == "child":
    subprocess.run(["rm", path], check=True)
PY
cat >"$W/Snakefile" <<'EOF'
rule all:
    input: "out/big.txt", "out/small.txt"

rule prepare:
    output: "out/prep.txt"
    shell: "head -c 123456 /dev/zero > {output}"

rule small:
    input: "out/prep.txt"
    output: "out/small.txt"
    shell: "wc -c {input} > {output}"

rule big:
    input: "out/prep.txt", "ref/ref.txt"
    output: "out/big.txt"
    shell: "python3 scratch.py out/big.scratch 70000 open; python3 scratch.py out/big.closed 50000 closed; python3 scratch.py out/big.child 30000 child; cat {input} > {output}"
EOF
cat >"$W/submit.sh" <<'EOF'
#!/bin/bash
bash "${@: -1}"
EOF
chmod 755 "$W/submit.sh"

# Run the pipeline under jobtrace as run $1 (the agent is up); its report
# in $T/$1.json and $T/$1.txt.  Returns snakemake's status.
pipeline() {
	local st
	(cd "$W" && CI=true "$CLI" --config "$CONF" run --job "$1-j" \
		--run "$1" --pipeline eval -- snakemake -s Snakefile -j 1 \
		--cluster-sync "$W/submit.sh" --forceall >"$T/$1.smk" 2>&1)
	st=$?
	[ "$st" = 0 ] || note "$(tail -n 15 "$T/$1.smk")"
	# wait until big's cat and the job's end are stored
	for _ in $(seq 1 100); do
		[ "$(q "select count(*) from process where job_run = '$1'
			and job_task = 'big' and comm = 'cat';")" = 1 ] &&
			[ "$(q "select count(*) from record where type = 'job'
			and job_id = '$1-j'
			and json_extract(json, '\$.phase') = 'end';")" = 1 ] &&
			break
		sleep 0.2
	done
	cli report --run "$1" --format json >"$T/$1.json" 2>"$T/$1.err" ||
		note "report --run $1: $(cat "$T/$1.err")"
	cli report --run "$1" >"$T/$1.txt" 2>&1
	return $st
}

# Every rule's declared inputs and outputs (snakemake --detailed-summary)
# against the Data section of report $1, their sizes on disk; one line
# per miss, then "checked N".  $2 = passes: an input its task's tools
# opened and closed between two passes may be missing (the design admits
# it without files.follow_opens) if the task's rchar covers its size: it
# is printed as "admitted: ..." and counted.
declared() {
	python3 - "$T/summary.tsv" "$T/$1.json" "$W" "${2:-}" <<'PY'
import csv, json, os, sys
summary, report, wf, mode = sys.argv[1:5]
data = json.load(open(report)).get("data", {})
tasks = {t["task"]: t for t in data.get("tasks", [])}
rows = list(csv.DictReader(open(summary), delimiter="\t"))
checked = 0
for r in rows:
    rule, out = r["rule"], r["output_file"]
    ins = [i for i in r["input-file(s)"].split(",") if i and i != "-"]
    t = tasks.get(rule)
    if not t:
        print(f"{rule}: no Data section")
        continue
    for lst, rel in [("outputs", out)] + [("inputs", i) for i in ins]:
        p = os.path.join(wf, rel)
        hit = [x for x in t[lst] if x["path"] == p]
        size = os.path.getsize(p)
        checked += 1
        if hit and hit[0]["size_bytes"] != size:
            print(f"{rule}: {rel} size {hit[0]['size_bytes']}, on disk {size}")
        elif hit:
            continue
        elif mode == "passes" and lst == "inputs" and t["rchar"] >= size:
            print(f"admitted: {rule}: {rel} not listed, rchar {t['rchar']}")
        else:
            print(f"{rule}: {rel} not in its {lst}: {[x['path'] for x in t[lst]]}")
print(f"checked {checked}")
PY
}

# A field of the Data section of report $1: task $2's list $3, the entry
# of path $4, key $5.
dget() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))["data"]
t = [x for x in d["tasks"] if x["task"] == sys.argv[2]]
e = [x for x in (t[0][sys.argv[3]] if t else []) if x["path"] == sys.argv[4]]
v = e[0].get(sys.argv[5], "absent") if e else "absent"
print("null" if v is None else v)' "$T/$1.json" "$2" "$3" "$4" "$5"
}

# The lines of task $2's list $3 ("inputs", "outputs", "temporary") in the
# Data section of text report $1.
data_lines() {
	awk -v task="$2" -v list="$3" '
		/^Data \(per workflow task/ { data = 1; next }
		data && /^$/ { exit }
		data && /^[^ ]/ { in_task = index($0, task " (") == 1; next }
		data && /^  [a-z]/ { in_list = index($0, "  " list) == 1; next }
		data && in_task && in_list' "$T/$1.txt"
}

# ---- 1. files.follow_opens: every open and close is seen --------------------
F=$TAG-f
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"files = { enabled = true; follow_opens = true; };" || finish
pipeline "$F"
st=$?
check "follow_opens: snakemake in jobscript mode under jobtrace run exits 0 (got $st)" eq "$st" 0
(cd "$W" && snakemake -s Snakefile -c 1 --detailed-summary >"$T/summary.tsv" 2>"$T/summary.err")
check "snakemake --detailed-summary lists the 3 outputs" \
	eq "$(grep -c '^out/' "$T/summary.tsv")" 3

declared "$F" >"$T/$F.check" 2>&1
note "$(cat "$T/$F.check")"
check "follow_opens: every rule's declared inputs and outputs (snakemake --detailed-summary) are in its Data section with their sizes on disk" \
	eq "$(cat "$T/$F.check")" "checked 6"
check "lineage: small's input out/prep.txt came from prepare" \
	eq "$(dget "$F" small inputs "$W/out/prep.txt" from)" prepare
check "lineage: big's out/prep.txt came from prepare, ref/ref.txt from outside the run" \
	eq "$(dget "$F" big inputs "$W/out/prep.txt" from):$(dget "$F" big inputs "$W/ref/ref.txt" from)" "prepare:null"
check "big's scratch file (written, deleted while open) is a temporary file of big, no output" \
	eq "$(dget "$F" big temporary "$W/out/big.scratch" write_bytes):$(dget "$F" big outputs "$W/out/big.scratch" path)" "70000:absent"
check "big's scratch file closed, then unlinked by its writer, is a temporary file of big, no output" \
	eq "$(dget "$F" big temporary "$W/out/big.closed" write_bytes):$(dget "$F" big outputs "$W/out/big.closed" path)" "50000:absent"
check "big's scratch file closed, then removed by rm before its writer ended, is a temporary file of big, no output" \
	eq "$(dget "$F" big temporary "$W/out/big.child" write_bytes):$(dget "$F" big outputs "$W/out/big.child" path)" "30000:absent"

cli files --run "$F" --task big --format csv >"$T/files.csv" 2>"$T/files.err"
check "files --run --task big --format csv exits 0" eq "$?" 0
# cat read each input whole and wrote their sum
got=$(awk -F, '$4 == "cat" && $5 ~ /ref\/ref.txt$/ { r = $8 } $4 == "cat" && $5 ~ /out\/big.txt$/ { w = $9 } END { print r ":" w }' "$T/files.csv")
check "files: cat read ref/ref.txt whole (300000) and wrote out/big.txt (123456 + 300000 = 423456)" \
	eq "$got" "300000:423456"
check "files: only big's processes" \
	eq "$(awk -F, 'NR > 1 && $3 != "big"' "$T/files.csv" | wc -l)" 0

check "the text report's Data section lists ref/ref.txt among big's inputs, from outside the run" \
	eval 'data_lines "$F" big inputs | grep -q " $W/ref/ref.txt\$"'
check "... and out/prep.txt among big's inputs, from prepare" \
	eval 'data_lines "$F" big inputs | grep -q " $W/out/prep.txt  (from prepare)\$"'
stop_agent

# ---- 2. the default: the open files at each pass and at each end -----------
# A short tool's input, opened and closed between two passes, may be
# missing (doc/architecture.md, "Files"); its outputs are its standard
# output, open at its end, so they are there.
P=$TAG-p
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"files = { enabled = true; };" || finish
pipeline "$P"
st=$?
check "passes: snakemake under jobtrace run exits 0 (got $st)" eq "$st" 0
declared "$P" passes >"$T/$P.check" 2>&1
note "$(cat "$T/$P.check")"
check "passes: every rule's declared outputs are in its Data section with their sizes on disk; each declared input too, or (admitted) its task read at least its size" \
	eq "$(grep -v '^admitted: ' "$T/$P.check")" "checked 6"
check "passes: the Data section says what it can miss (text and JSON name files.follow_opens)" \
	eval 'grep -A3 "^Data (per workflow task" "$T/$P.txt" | grep -q "unless it ran with files.follow_opens" &&
		python3 -c "import json,sys; sys.exit(\"files.follow_opens\" not in json.load(open(sys.argv[1]))[\"data\"][\"note\"])" "$T/$P.json"'

finish
