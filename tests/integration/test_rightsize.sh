#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rightsize.sh - `jobtrace rightsize` on a real Snakemake pipeline run
# in jobscript mode, and its output read back by Snakemake.
#
# An eval-style Snakefile (rules prepare, small and big; big runs touchmem
# with 300 MiB and asks for 2 threads, mem_mb=1000, runtime=30) runs under
# `jobtrace run --job J --run R --pipeline eval` with --cluster-sync: a
# submit script of the test logs its arguments and the job script's start
# and end, and runs the job script with bash, as a cluster node would.
# The job's pipeline "eval" stays on the rules' processes (the rules'
# engine name "snakemake" only fills an empty one), so `rightsize
# --pipeline eval` selects the three runs' processes.
#
#  - after 2 runs: no setting, "big: 2 runs, at least 3 needed", and the
#    Snakemake profile is an empty mapping Snakemake accepts;
#  - after 3: big's used peak lies between the largest VmHWM touchmem
#    printed (its own figure, from /proc) and that + 32 MiB (the shells of
#    the job script; Snakemake's python is left out), the recommendation is
#    400 MiB (mem_mb=420 in Snakemake's MB, mem_mib=400), 1 core, 1 minute,
#    and the p95 wall is the submit script's longest job script time;
#  - the profile written from it: `snakemake --profile DIR` accepts it and
#    every job script is submitted with the profile's mem_mb, mem_mib,
#    threads and runtime;
#  - the Nextflow, Slurm and JSON forms say the same; --source clickhouse
#    (a throw-away ClickHouse the agent delivers to) gives the same JSON.
#
# Needs root, kernel BTF, the sqlite3 CLI, snakemake, clickhouse-server,
# python3 (scripts/install-deps.sh installs them).  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_rightsize.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/clickhouse/ch-env.sh"
need_built "$AGENT" "$CLI" "$WL/touchmem"
need_commands snakemake python3 /usr/sbin/clickhouse-server
start_watchdog 600

extra_cleanup() {
	ch_stop >/dev/null 2>&1
}

W=$T/wf			# the workflow's folder
SUBMITS=$T/submit.log	# what the submit script was given, and when
TAG=rs$$		# job and run ids of this test: $TAG-j1, $TAG-r1 ...
mkdir -p "$W"
chmod 755 "$T"	# the clickhouse user reaches its folder in it

cat >"$W/Snakefile" <<EOF
rule all:
    input: "out/big.txt", "out/small.txt"

rule prepare:
    output: "out/prep.txt"
    resources: mem_mb=100, runtime=5
    shell: "echo prep > {output}"

rule small:
    input: "out/prep.txt"
    output: "out/small.txt"
    resources: mem_mb=100, runtime=5
    shell: "wc -c {input} > {output}; sleep 0.2"

rule big:
    input: "out/prep.txt"
    output: "out/big.txt"
    threads: 2
    resources: mem_mb=1000, runtime=30
    shell: "$WL/touchmem 300 500 > {output}"
EOF
# a cluster's submission, synchronous: log, run the job script, log
cat >"$W/submit.sh" <<EOF
#!/bin/bash
echo "\$(date +%s.%N) submit \$*" >>"$SUBMITS"
bash "\${@: -1}"
rc=\$?
echo "\$(date +%s.%N) done \${@: -1}" >>"$SUBMITS"
exit \$rc
EOF
chmod 755 "$W/submit.sh"
CLUSTER="$W/submit.sh --mem={resources.mem_mb} --mib={resources.mem_mib} -c {threads} -t {resources.runtime}"

# Run the pipeline as job $TAG-j$1, run $TAG-r$1 (CI=true: Snakemake's
# cluster loop polls every second instead of every 10).
run_pipeline() {
	(cd "$W" && CI=true "$CLI" --config "$CONF" run --job "$TAG-j$1" \
		--run "$TAG-r$1" --pipeline eval -- snakemake -s Snakefile -j 1 \
		--cluster-sync "$CLUSTER" --forceall >"$T/snakemake.$1.out" 2>&1)
}

# Wait up to 20 s until run $1's touchmem and its job's end are stored.
wait_run() {
	for _ in $(seq 1 100); do
		[ "$(q "select count(*) from process where job_run = '$TAG-r$1'
			and job_task = 'big' and comm = 'touchmem';")" = 1 ] &&
			[ "$(q "select count(*) from record where type = 'job'
			and job_id = '$TAG-j$1' and json_extract(json, '\$.phase') = 'end';")" = 1 ] &&
			return 0
		sleep 0.2
	done
	return 1
}

# A member of the rightsize JSON on stdin: $1 the task, $2 a python path.
jget() {
	python3 -c 'import json,sys
r = json.load(sys.stdin)
t = [x for x in r["tasks"] if x["task"] == sys.argv[1]]
v = t[0] if t else None
for k in sys.argv[2].split("."):
    v = v.get(k) if isinstance(v, dict) else None
print("null" if v is None else v)' "$1" "$2"
}

# ---- ClickHouse and the agent --------------------------------------------------------
ch_pick_ports
if ! ch_start "$T/ch"; then
	check "clickhouse-server starts on 127.0.0.1:$CH_HTTP_PORT" false
	finish
fi
"$CLI" schema clickhouse | ch_multiquery >"$T/schema.out" 2>&1
check "the ClickHouse schema applies" \
	eq "$(ch_query "SELECT count() FROM system.tables WHERE database = 'jobtrace'")" 7
printf 'user = jobtrace\npassword = jt-secret\n' >"$T/ch.cred"
chmod 600 "$T/ch.cred"
SINKS="sinks = ( { type = \"clickhouse\"; name = \"fleet\"; url = \"$CH_URL\";
    credentials_file = \"$T/ch.cred\"; batch_age = 0.3; } );"
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "$SINKS" || finish

# ---- two runs: too few ------------------------------------------------------------------
for i in 1 2; do
	run_pipeline $i
	st=$?
	check "run $i: snakemake in jobscript mode under jobtrace run exits 0 (got $st)" eq "$st" 0
	[ "$st" = 0 ] || note "$(tail -n 15 "$T/snakemake.$i.out")"
	cp "$W/out/big.txt" "$T/big.$i.txt"
	check "run $i: its records are stored (touchmem of rule big, the job's end)" wait_run $i
done
check "runs 1-2: big was submitted with the Snakefile's values (--mem=1000 --mib=954 -c 2 -t 30)" \
	eq "$(grep -c 'submit --mem=1000 --mib=954 -c 2 -t 30 .*/snakejob\.big\.[0-9]*\.sh$' "$SUBMITS")" 2
check "big's processes carry their run's id and pipeline eval (the job's, not the rules' engine name), python's category workflow-engine" \
	eq "$(q "select count(distinct job_run) || ':' || group_concat(distinct job_pipeline) || ':' ||
		sum(tool_category = 'workflow-engine') from process
		where job_task = 'big' and job_id like '$TAG-j%';")" "2:eval:2"

cli rightsize --pipeline eval >"$T/rs2.txt" 2>&1
st=$?
note "$(cat "$T/rs2.txt")"
check "2 runs: rightsize exits 0 and says big has too few runs" \
	eval '[ $st = 0 ] && grep -q "^  big  *no setting: 2 runs, at least 3 needed$" "$T/rs2.txt"'
mkdir -p "$T/prof2"
cli rightsize --pipeline eval --format snakemake >"$T/prof2/config.yaml" 2>"$T/rs2.err"
check "2 runs: the Snakemake form has no setting, a comment says why, an empty mapping" \
	eval 'grep -qx "# big: 2 runs, at least 3 needed" "$T/prof2/config.yaml" &&
		grep -qx "{}" "$T/prof2/config.yaml" && ! grep -q "set-" "$T/prof2/config.yaml"'
cli rightsize --pipeline eval --format nextflow >"$T/nf2.config" 2>&1
check "2 runs: the Nextflow form has only a comment for big" \
	eval 'grep -qx "    // big: 2 runs, at least 3 needed" "$T/nf2.config" && ! grep -q withName "$T/nf2.config"'

# ---- the third run: a recommendation ------------------------------------------------------
run_pipeline 3
st=$?
check "run 3: snakemake exits 0 (got $st)" eq "$st" 0
cp "$W/out/big.txt" "$T/big.3.txt"
check "run 3: its records are stored" wait_run 3

cli rightsize --pipeline eval --format json >"$T/rs3.json" 2>"$T/rs3.err"
st=$?
note "$(cat "$T/rs3.json" "$T/rs3.err")"
check "rightsize --format json exits 0 with one valid JSON text" \
	eval '[ $st = 0 ] && python3 -m json.tool "$T/rs3.json" >/dev/null'
HWM=$(cat "$T"/big.[123].txt | sed -n 's/.*vmhwm_bytes=\([0-9]*\).*/\1/p' | sort -n | tail -n 1)
PEAK=$(jget big used_p95.mem_peak_bytes <"$T/rs3.json")
note "touchmem's largest VmHWM: $HWM bytes; rightsize's used p95: $PEAK bytes (source $(jget big used_p95.mem_source <"$T/rs3.json"))"
check "big: 3 runs, 3 instances, nothing requested (a shared job)" \
	eq "$(jget big runs <"$T/rs3.json"):$(jget big instances <"$T/rs3.json"):$(jget big requested.mem_bytes <"$T/rs3.json")" "3:3:null"
check "big: used peak $PEAK is touchmem's VmHWM $HWM to + 32 MiB (the shells; python left out)" \
	between "$PEAK" "$HWM" "$((HWM + 32 * MIB))"
check "big: recommended 400 MiB ($(jget big recommendation.mem_bytes <"$T/rs3.json") bytes), 1 cpu, 1 minute" \
	eq "$(jget big recommendation.mem_bytes <"$T/rs3.json"):$(jget big recommendation.cpus <"$T/rs3.json"):$(jget big recommendation.time_min <"$T/rs3.json")" \
	"$((400 * MIB)):1:1"
# the job script's wall as the submit script saw it, the longest of 3
SWALL=$(awk '/ submit .*snakejob\.big\./ { s = $1 } / done .*snakejob\.big\./ { w = $1 - s; if (w > m) m = w } END { printf "%.3f", m }' "$SUBMITS")
WALL=$(jget big used_p95.wall_s <"$T/rs3.json")
check "big: p95 wall $WALL s is the submit script's longest job script, $SWALL s (10 % or 0.1 s)" \
	near "$WALL" "$SWALL" 10 0.1
CORES=$(jget big used_p95.cores <"$T/rs3.json")
CPU=$(q "select max(c) from (select sum(cpu_user_s + cpu_sys_s) as c from process
	where job_task = 'big' and job_run like '$TAG-r%' group by job_run);")
SHORT=$(awk '/ submit .*snakejob\.big\./ { s = $1 } / done .*snakejob\.big\./ { w = $1 - s; if (m == "" || w < m) m = w } END { print m }' "$SUBMITS")
check "big: p95 cores $CORES is above 0 and at most a run's largest CPU seconds $CPU / the shortest job script $SHORT s" \
	awk -v c="$CORES" -v u="$CPU" -v w="$SHORT" 'BEGIN { exit !(c > 0 && c <= u / (w - 0.1)) }'

n=$(cli export --pipeline eval --format ndjson | grep '"type":"job"' | grep -c "\"id\":\"$TAG-j")
check "export --pipeline eval: with the records of the 3 runs' jobs (start and end: 6, got $n)" eq "$n" 6

mkdir -p "$T/prof"
cli rightsize --pipeline eval --format snakemake >"$T/prof/config.yaml" 2>&1
note "$(cat "$T/prof/config.yaml")"
check "the Snakemake form: big=1, big:mem_mb=420, big:mem_mib=400, big:runtime=1" \
	eval 'grep -qx "  - \"big=1\"" "$T/prof/config.yaml" &&
		grep -qx "  - \"big:mem_mb=420\"" "$T/prof/config.yaml" &&
		grep -qx "  - \"big:mem_mib=400\"" "$T/prof/config.yaml" &&
		grep -qx "  - \"big:runtime=1\"" "$T/prof/config.yaml"'
cli rightsize --pipeline eval --format nextflow >"$T/nf3.config" 2>&1
check "the Nextflow form: withName: 'big' { cpus = 1; memory = '400 MB'; time = '1m' }" \
	grep -qx "    withName: 'big' { cpus = 1; memory = '400 MB'; time = '1m' }" "$T/nf3.config"
cli rightsize --pipeline eval --format slurm >"$T/slurm3.txt" 2>&1
check "the Slurm form: big: sbatch --cpus-per-task=1 --mem=400M --time=1" \
	grep -qx "big: sbatch --cpus-per-task=1 --mem=400M --time=1" "$T/slurm3.txt"
cli rightsize --pipeline eval >"$T/rs3.txt" 2>&1
check "the text form answers first: big memory 400 MiB, 1 core, 1 min" \
	eval 'sed -n 2,4p "$T/rs3.txt" | grep -q "^  big  *memory 400 MiB, 1 core, 1 min$"'

# ---- Snakemake reads the profile ------------------------------------------------------------
: >"$SUBMITS"
(cd "$W" && CI=true snakemake --profile "$T/prof" -s Snakefile -j 1 \
	--cluster-sync "$CLUSTER" --forceall >"$T/snakemake.prof.out" 2>&1)
st=$?
check "snakemake --profile DIR accepts the profile and exits 0 (got $st)" eq "$st" 0
[ "$st" = 0 ] || note "$(tail -n 15 "$T/snakemake.prof.out")"
note "$(grep submit "$SUBMITS")"
check "the job script of big was submitted with --mem=420 --mib=400 -c 1 -t 1" \
	eq "$(grep -c 'submit --mem=420 --mib=400 -c 1 -t 1 .*/snakejob\.big\.[0-9]*\.sh$' "$SUBMITS")" 1
bad=0
for r in prepare small big; do
	want="--mem=$(sed -n "s/^  - \"$r:mem_mb=\(.*\)\"$/\1/p" "$T/prof/config.yaml")"
	want="$want --mib=$(sed -n "s/^  - \"$r:mem_mib=\(.*\)\"$/\1/p" "$T/prof/config.yaml")"
	want="$want -c $(sed -n "s/^  - \"$r=\(.*\)\"$/\1/p" "$T/prof/config.yaml")"
	want="$want -t $(sed -n "s/^  - \"$r:runtime=\(.*\)\"$/\1/p" "$T/prof/config.yaml")"
	grep -q "submit $want .*/snakejob\.$r\.[0-9]*\.sh$" "$SUBMITS" || { note "$r: want '$want'"; bad=1; }
done
check "every rule's job script got the profile's mem_mb, mem_mib, threads and runtime" eq "$bad" 0
: >"$SUBMITS"
(cd "$W" && CI=true snakemake --profile "$T/prof2" -s Snakefile -j 1 \
	--cluster-sync "$CLUSTER" --forceall >"$T/snakemake.prof2.out" 2>&1)
st=$?
check "the 2-run profile (no setting) is accepted and changes nothing (exit $st)" \
	eq "$st:$(grep -c 'submit --mem=1000 --mib=954 -c 2 -t 30 .*/snakejob\.big\.' "$SUBMITS")" "0:1"

# ---- the same from ClickHouse ------------------------------------------------------------------
sleep 1	# the last processes' records reach the spool
wait_delivered fleet 30
cli rightsize --pipeline eval --format json --source clickhouse >"$T/rs3.ch.json" 2>"$T/rs3.ch.err"
st=$?
note "$(head -c 400 "$T/rs3.ch.err")"
# the profile runs since then are in both: compare with the store now
cli rightsize --pipeline eval --format json >"$T/rs4.json" 2>&1
check "--source clickhouse: the same JSON as the local store (exit $st)" \
	eval '[ $st = 0 ] && cmp -s "$T/rs3.ch.json" "$T/rs4.json"'
[ "$st" = 0 ] && ! cmp -s "$T/rs3.ch.json" "$T/rs4.json" && note "$(diff "$T/rs3.ch.json" "$T/rs4.json" | head -c 600)"

# ---- usage -------------------------------------------------------------------------------------
cli rightsize --help >"$T/help.txt" 2>&1
check "rightsize --help states the definitions (instance, p95, 1.2 x, 100 MiB, 1.5 x)" \
	eval 'grep -q "topmost process" "$T/help.txt" && grep -q "nearest rank" "$T/help.txt" &&
		grep -q "1.2 x p95 peak" "$T/help.txt" && grep -q "1.5 x p95 wall" "$T/help.txt"'
cli rightsize --job 1 --pipeline eval >/dev/null 2>&1
st1=$?
cli rightsize --pipeline eval --format html >/dev/null 2>"$T/bad.err"
st2=$?
check "bad usage exits 2 (--job and --pipeline: $st1, --format html: $st2, '$(head -n 1 "$T/bad.err")')" eq "$st1:$st2" "2:2"
cli rightsize --pipeline no-such >/dev/null 2>"$T/none.err"
st=$?
check "a pipeline with no task processes: exit 1 and a message ($(head -c 80 "$T/none.err"))" \
	eval '[ $st = 1 ] && grep -q "no processes of a workflow task" "$T/none.err"'

finish
