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

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish

(cd "$W" && CI=true "$CLI" --config "$CONF" run --job "$TAG-j" --run "$TAG-r" \
	--pipeline eval -- snakemake -s Snakefile -j 1 \
	--cluster-sync "$W/submit.sh" --forceall >"$T/snakemake.out" 2>&1)
st=$?
check "snakemake in jobscript mode under jobtrace run exits 0 (got $st)" eq "$st" 0
[ "$st" = 0 ] || note "$(tail -n 15 "$T/snakemake.out")"
(cd "$W" && snakemake -s Snakefile -c 1 --detailed-summary >"$T/summary.tsv" 2>"$T/summary.err")
check "snakemake --detailed-summary lists the 3 outputs" \
	eq "$(grep -c '^out/' "$T/summary.tsv")" 3

# Wait until big's cat and the job's end are stored.
for _ in $(seq 1 100); do
	[ "$(q "select count(*) from process where job_run = '$TAG-r'
		and job_task = 'big' and comm = 'cat';")" = 1 ] &&
		[ "$(q "select count(*) from record where type = 'job'
		and job_id = '$TAG-j' and json_extract(json, '\$.phase') = 'end';")" = 1 ] &&
		break
	sleep 0.2
done

cli report --run "$TAG-r" --format json >"$T/report.json" 2>"$T/report.err"
check "report --run --format json exits 0" eq "$?" 0

# Every rule's declared inputs and outputs (from --detailed-summary) in its Data
# section with their sizes on disk: one line per miss.
python3 - "$T/summary.tsv" "$T/report.json" "$W" >"$T/data.check" 2>&1 <<'PY'
import csv, json, os, sys
summary, report, wf = sys.argv[1:4]
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
    def find(lst, rel):
        p = os.path.join(wf, rel)
        return [x for x in t[lst] if x["path"] == p]
    for lst, rel in [("outputs", out)] + [("inputs", i) for i in ins]:
        hit = find(lst, rel)
        size = os.path.getsize(os.path.join(wf, rel))
        if not hit:
            print(f"{rule}: {rel} not in its {lst}: {[x['path'] for x in t[lst]]}")
        elif hit[0]["size_bytes"] != size:
            print(f"{rule}: {rel} size {hit[0]['size_bytes']}, on disk {size}")
        checked += 1
print(f"checked {checked}")
PY
note "$(cat "$T/data.check")"
check "every rule's declared inputs and outputs (snakemake --detailed-summary) are in its Data section with their sizes on disk" \
	eq "$(cat "$T/data.check")" "checked 6"

# A field of the Data section: task $1's list $2, the entry of path $3, key $4.
dget() {
	python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))["data"]
t = [x for x in d["tasks"] if x["task"] == sys.argv[2]]
e = [x for x in (t[0][sys.argv[3]] if t else []) if x["path"] == sys.argv[4]]
v = e[0].get(sys.argv[5], "absent") if e else "absent"
print("null" if v is None else v)' "$T/report.json" "$@"
}
check "lineage: small's input out/prep.txt came from prepare" \
	eq "$(dget small inputs "$W/out/prep.txt" from)" prepare
check "lineage: big's out/prep.txt came from prepare, ref/ref.txt from outside the run" \
	eq "$(dget big inputs "$W/out/prep.txt" from):$(dget big inputs "$W/ref/ref.txt" from)" "prepare:null"
check "big's scratch file (written, deleted while open) is a temporary file of big, no output" \
	eq "$(dget big temporary "$W/out/big.scratch" write_bytes):$(dget big outputs "$W/out/big.scratch" path)" "70000:absent"
check "big's scratch file closed, then unlinked by its writer, is a temporary file of big, no output" \
	eq "$(dget big temporary "$W/out/big.closed" write_bytes):$(dget big outputs "$W/out/big.closed" path)" "50000:absent"
check "big's scratch file closed, then removed by rm before its writer ended, is a temporary file of big, no output" \
	eq "$(dget big temporary "$W/out/big.child" write_bytes):$(dget big outputs "$W/out/big.child" path)" "30000:absent"

cli files --run "$TAG-r" --task big --format csv >"$T/files.csv" 2>"$T/files.err"
check "files --run --task big --format csv exits 0" eq "$?" 0
# cat read each input whole and wrote their sum
got=$(awk -F, '$4 == "cat" && $5 ~ /ref\/ref.txt$/ { r = $8 } $4 == "cat" && $5 ~ /out\/big.txt$/ { w = $9 } END { print r ":" w }' "$T/files.csv")
check "files: cat read ref/ref.txt whole (300000) and wrote out/big.txt (123456 + 300000 = 423456)" \
	eq "$got" "300000:423456"
check "files: only big's processes" \
	eq "$(awk -F, 'NR > 1 && $3 != "big"' "$T/files.csv" | wc -l)" 0

cli report --run "$TAG-r" >"$T/report.txt" 2>&1
# the lines of task $1's list $2 ("inputs", "outputs", "temporary") in
# the text report's Data section
data_lines() {
	awk -v task="$1" -v list="$2" '
		/^Data \(per workflow task/ { data = 1; next }
		data && /^$/ { exit }
		data && /^[^ ]/ { in_task = index($0, task " (") == 1; next }
		data && /^  [a-z]/ { in_list = index($0, "  " list) == 1; next }
		data && in_task && in_list' "$T/report.txt"
}
check "the text report's Data section lists ref/ref.txt among big's inputs, from outside the run" \
	eval 'data_lines big inputs | grep -q " $W/ref/ref.txt\$"'
check "... and out/prep.txt among big's inputs, from prepare" \
	eval 'data_lines big inputs | grep -q " $W/out/prep.txt  (from prepare)\$"'

finish
