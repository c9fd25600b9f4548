#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_slurm_acct.sh - what jobtrace says of Slurm jobs against what Slurm's
# own accounting says: `sacct` from a real slurmdbd over MariaDB
# (tests/slurm/slurm-env.sh with SLURM_ENV_ACCOUNTING=1, cgroup mode, the
# prolog and epilog of slurm/) and `scontrol`, with the real agent.
#
#   states      a job killed at its time limit (sbatch -t 1, TIMEOUT), one
#               cancelled with scancel (CANCELLED), a script that exits 3
#               and one that kills itself (FAILED), one its cgroup's OOM
#               killer hits while the script exits 0 (OUT_OF_MEMORY), and
#               plain ones (COMPLETED): report's state (text and JSON) is
#               sacct's State, its exit code sacct's ExitCode code:signal
#               (0:125 for the OOM job, not 128+125).
#   arrays      sbatch --array=1-3: the job ids are sacct's A_1, A_2, A_3
#               (not the raw JobIds), array_index 1..3 on job and process
#               records; report --job A has a line per task then the total,
#               report --job A_2 one task, in text, JSON and HTML; cost
#               --job A lists A_1..A_3; rightsize --job A finds the task.
#   cost center a job with --account and jobs with the user's default
#               account: every job record's cost_center is sacct's Account,
#               and cost --by cost-center groups by them, no "(none)".
#   running     report --job on a running job (--mem=400M, touchmem holding
#               100 MiB) names it (scontrol's JobName) and gives its memory
#               efficiency against sacct's ReqMem while it runs.
#
# The time-limit job is as short as Slurm allows (-t 1: one minute; slurmctld
# checks limits every 30 s, so it ends 60 to 90 s after it starts): it runs
# beside the others, the node being declared with 8 CPUs
# (SlurmdParameters=config_overrides), so that the test takes about two
# minutes.
#
# Needs root, kernel BTF, the sqlite3 CLI, python3, and Slurm with slurmdbd
# and mariadb-server (installed from Debian when missing).  Exit 0 pass,
# 1 fail, 77 skipped, 99 hard error.
# Run:  top_builddir=BUILD top_srcdir=SRC bash tests/integration/test_slurm_acct.sh

set -u

. "$(dirname "$0")/lib.sh"
# the OOM job fills its memory limit on purpose
SIGNALS_EXPECTED="memory_near_limit"
. "$top_srcdir/tests/slurm/slurm-env.sh"

SLURM_ENV_ACCOUNTING=1
if ! install_slurm; then
	echo "# error: slurm-wlm, munge, slurmdbd, mariadb-server are missing and could not be installed"
	exit 99
fi
need_built "$AGENT" "$CLI" "$WL/touchmem"
need_commands python3

extra_cleanup() {
	slurm_env_stop
}
start_watchdog 300

# ---- helpers ----------------------------------------------------------------------

# Field KEY of `scontrol show job -o ID` (the first line).
sjob() {
	scontrol show job -o "$1" 2>/dev/null | head -n 1 | tr ' ' '\n' |
		sed -n "s/^$2=//p" | head -n 1
}

# Submit as root; prints the job id.  Arguments go to sbatch.
submit() {
	sbatch --parsable --chdir="$JOBDIR" --output="$JOBDIR/%j.out" "$@" |
		cut -d';' -f1
}

# sacct's "JobID|State|ExitCode|Account|ReqMem" lines of job $1 (the
# allocation only, an array's tasks each), State's first word.
acct() {
	sacct -X -n -P -j "$1" -o JobID,State,ExitCode,Account,ReqMem 2>/dev/null |
		awk -F'|' '{ split($2, s, " "); print $1 "|" s[1] "|" $3 "|" $4 "|" $5 }'
}

# True once sacct has a final state for every task of job $1.
acct_final() {
	local l
	l=$(acct "$1")
	[ -n "$l" ] && ! printf '%s\n' "$l" | grep -qE '\|(PENDING|RUNNING|REQUEUED|SUSPENDED)\|'
}

# The number of job end records of the jobs whose id is $1 or starts
# with "$1_".
n_ends() {
	q "select count(*) from record where type = 'job'
		and (job_id = '$1' or job_id like '$1\_%' escape '\\')
		and json_extract(json, '\$.phase') = 'end';"
}

# Wait (at most $2 s) until sacct has the final state of job $1 and the
# agent stored $3 end records for it (its tasks).
wait_done() {
	for _ in $(seq 1 $(($2 * 5))); do
		if acct_final "$1" && [ "$(n_ends "$1")" -ge "$3" ]; then
			return 0
		fi
		sleep 0.2
	done
	note "job $1: sacct '$(acct "$1" | tr '\n' ' ')', $(n_ends "$1") end records"
	return 1
}

# Wait (at most $2 s) until job $1 runs.
wait_running() {
	for _ in $(seq 1 $(($2 * 5))); do
		[ "$(sjob "$1" JobState)" = RUNNING ] && return 0
		sleep 0.2
	done
	return 1
}

# Field $2 (a dotted path, list items by number) of the JSON file $1;
# "null" when absent.
jq_() {
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    if isinstance(v, list):
        v = v[int(k)] if k.isdigit() and int(k) < len(v) else None
    elif isinstance(v, dict):
        v = v.get(k)
    if v is None:
        break
print("null" if v is None else v)' "$1" "$2" 2>/dev/null || echo "bad json"
}

# ---- Slurm with accounting, and the agent ------------------------------------------

chmod 0755 "$T"
SLURM_ENV_PROLOG=$top_srcdir/slurm/prolog
SLURM_ENV_EPILOG=$top_srcdir/slurm/epilog
SLURM_ENV_JOBTRACE=$CLI
SLURM_ENV_JOBTRACE_CONFIG=$CONF
SLURM_ENV_CPUS=8
SLURM_ENV_FIRST_JOB_ID=$((1000 + RANDOM % 50000))
t0=$(now)
if ! slurm_env_start cgroup "$T/slurm"; then
	check "Slurm with slurmdbd starts and the node becomes idle" false
	finish
fi
note "Slurm with slurmdbd and MariaDB up in $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s"
sacctmgr -i add account proja >/dev/null 2>&1
sacctmgr -i add user root account=proja >/dev/null 2>&1
check "sacctmgr: root may use account proja (and its default account root)" \
	eq "$(sacctmgr -n -P list assoc user=root format=account | sort | tr '\n' ' ')" "proja root "
JOBDIR=$SLURM_ENV_DIR/jobs
mkdir -p "$JOBDIR"
chmod 1777 "$JOBDIR"

# the agent inherits SLURM_CONF, for its background scontrol; a price, so
# that cost groups the jobs
if ! start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"cloud = { imds = \"off\"; }; docker = { enabled = false; }; cost = { node_hour = 1.0; };"; then
	finish
fi
SINCE=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# ---- the jobs ------------------------------------------------------------------------

TO=$(submit -t 1 --wrap 'sleep 300')
CA=$(submit --wrap 'sleep 300')
F3=$(submit --wrap 'sleep 1; exit 3')
F9=$(submit --wrap 'sleep 1; kill -9 $$')
OOM=$(submit --mem=64M --wrap "$WL/touchmem 200 500; sleep 1; exit 0")
ARR=$(submit --array=1-3 --comment=trace-step=arrtask --wrap 'sleep 2')
PA=$(submit --account=proja --wrap 'sleep 1')
RUN=$(submit -J jtlive --mem=400M --wrap "$WL/touchmem 100 8000")
check "sbatch accepts the 8 jobs ($TO $CA $F3 $F9 $OOM $ARR $PA $RUN)" \
	test -n "$TO" -a -n "$CA" -a -n "$F3" -a -n "$F9" -a -n "$OOM" -a \
	-n "$ARR" -a -n "$PA" -a -n "$RUN"

# ---- a running job: its name and live memory efficiency --------------------------------

wait_running "$RUN" 30
check "job $RUN runs" eq "$(sjob "$RUN" JobState)" RUNNING
# until the agent's samples hold touchmem's 100 MiB (its own records)
peak=0
for _ in $(seq 1 50); do
	cli report --job "$RUN" --no-tree --format json >"$T/run.json" 2>"$T/run.err"
	peak=$(jq_ "$T/run.json" efficiency.job.peak_rss_bytes)
	between "$peak" $((95 * MIB)) $((1024 * MIB)) && break
	sleep 0.2
done
cli report --job "$RUN" --no-tree >"$T/run.txt" 2>&1
note "report --job $RUN while it runs:" "$(head -n 20 "$T/run.txt")"
check "report --job $RUN while it runs: state RUNNING" \
	eq "$(jq_ "$T/run.json" job.state)" RUNNING
check "report --job $RUN while it runs: job name jtlive (scontrol's JobName), in text too" \
	eq "$(jq_ "$T/run.json" job.name):$(grep -c '^Job name:    jtlive$' "$T/run.txt")" "jtlive:1"
req=$(slurm_env_bytes "$(acct "$RUN" | cut -d'|' -f5)")
check "report --job $RUN while it runs: the allocation's memory is sacct's ReqMem ($req B)" \
	eq "$(jq_ "$T/run.json" efficiency.mem_bytes)" "$req"
live_pct=$(jq_ "$T/run.json" efficiency.job.memory_efficiency_pct)
check "report --job $RUN while it runs: a memory efficiency (${live_pct}%) of its peak so far $peak B over $req B" \
	near "$live_pct" "$(awk -v a="$peak" -v b="$req" 'BEGIN { print 100 * a / b }')" 0 0.01
check "report --job $RUN while it runs: the text says 'memory ... of 400.0 MiB'" \
	grep -q "memory .* of 400.0 MiB = " "$T/run.txt"

# ---- cancel one ---------------------------------------------------------------------

wait_running "$CA" 30
scancel "$CA"

# ---- every job ends: what sacct says, what jobtrace says --------------------------------

for j in "$CA" "$F3" "$F9" "$OOM" "$PA" "$RUN"; do
	wait_done "$j" 60 1
done
wait_done "$ARR" 60 3
# touchmem held 100 MiB: what it measured of itself, over ReqMem
vmhwm=$(kv "$(cat "$JOBDIR/$RUN.out")" vmhwm_bytes)
check "job $RUN's live memory efficiency ${live_pct}% is touchmem's VmHWM $vmhwm B over sacct's ReqMem $req B within 5%" \
	near "$live_pct" "$(awk -v a="$vmhwm" -v b="$req" 'BEGIN { print 100 * a / b }')" 5 0
# the time limit: one minute, checked every 30 s
wait_done "$TO" 120 1

for j in "$TO" "$CA" "$F3" "$F9" "$OOM" "$PA" "$RUN"; do
	IFS='|' read -r id st ec acc _ <<<"$(acct "$j")"
	cli report --job "$j" --no-tree --format json >"$T/r.$j.json" 2>&1
	cli report --job "$j" --no-tree >"$T/r.$j.txt" 2>&1
	got=$(jq_ "$T/r.$j.json" job.state)
	gec="$(jq_ "$T/r.$j.json" job.exit_code):$(jq_ "$T/r.$j.json" job.exit_signal)"
	check "job $j: state $got, exit code $gec = sacct's $st, $ec" \
		eq "$got $gec" "$st $ec"
	check "job $j: the text says 'State:       $st, exit code $ec'" \
		grep -q "^State:       $st, exit code $ec\( (SIG[A-Z]*)\)\?$" "$T/r.$j.txt"
	check "job $j: cost center '$(jq_ "$T/r.$j.json" job.cost_center)' is sacct's Account '$acc'" \
		eq "$(jq_ "$T/r.$j.json" job.cost_center)" "$acc"
	[ "$got" = "$st" ] || note "$(grep -E '^(Job ID|State)' "$T/r.$j.txt")"
done
note "sacct: $(for j in "$TO" "$CA" "$F3" "$F9" "$OOM" "$PA" "$RUN" "$ARR"; do acct "$j"; done | tr '\n' ' ')"

# ---- the array ----------------------------------------------------------------------

want=$(acct "$ARR" | cut -d'|' -f1 | sort | tr '\n' ' ')
got=$(q "select distinct job_id from record where type = 'job' and (job_id = '$ARR' or job_id like '${ARR}\_%' escape '\\') order by 1;" | tr '\n' ' ')
check "array $ARR: the job records' ids '$got' are sacct's '$want'" eq "$got" "$want"
got=$(q "select distinct job_id || '=' || coalesce(json_extract(json, '\$.job.array_index'), 'null') from process where job_id like '${ARR}\_%' escape '\\' and job_step = 'batch' order by 1;" | tr '\n' ' ')
check "array $ARR: the batch processes carry job ids ${ARR}_N with array_index N ('$got')" \
	eq "$got" "${ARR}_1=1 ${ARR}_2=2 ${ARR}_3=3 "
got=$(q "select group_concat(distinct json_extract(json, '\$.job.array_index')) from record where type = 'job' and job_id = '${ARR}_2';")
check "array $ARR: job ${ARR}_2's records have array_index 2 ('$got')" eq "$got" 2
cli report --job "$ARR" --no-tree >"$T/arr.txt" 2>&1
note "report --job $ARR:" "$(head -n 24 "$T/arr.txt")"
for t in 1 2 3; do
	st=$(acct "$ARR" | awk -F'|' -v id="${ARR}_$t" '$1 == id { print $2 " " $3 }')
	check "report --job $ARR: a line for task ${ARR}_$t with sacct's state and exit code ($st)" \
		grep -qE "^  ${ARR}_$t +${st% *} +${st#* } " "$T/arr.txt"
done
check "report --job $ARR: then a TOTAL line of the 3 tasks" \
	grep -qE "^  TOTAL +3 tasks " "$T/arr.txt"
cli report --job "$ARR" --no-tree --format json >"$T/arr.json" 2>&1
check "report --job $ARR --format json: jobs ${ARR}_1, ${ARR}_2, ${ARR}_3" \
	eq "$(jq_ "$T/arr.json" jobs.0.id) $(jq_ "$T/arr.json" jobs.1.id) $(jq_ "$T/arr.json" jobs.2.id)" \
	"${ARR}_1 ${ARR}_2 ${ARR}_3"
cli report --job "${ARR}_2" --no-tree --format json >"$T/arr2.json" 2>&1
check "report --job ${ARR}_2: that task alone (job ${ARR}_2, $(jq_ "$T/arr2.json" summary.processes) processes, all of it)" \
	eq "$(jq_ "$T/arr2.json" job.id):$(jq_ "$T/arr2.json" jobs):$(jq_ "$T/arr2.json" summary.processes)" \
	"${ARR}_2:null:$(q "select count(*) from process where job_id = '${ARR}_2';")"
cli report --job "$ARR" --format html >"$T/arr.html" 2>&1
check "report --job $ARR --format html: the Job section has the text's line per task, then the total" \
	python3 -c 'import html, re, sys
h = open(sys.argv[1]).read(); a = sys.argv[2]
m = re.search(r"<section><h2>Job</h2>\s*<pre>(.*?)</pre>", h, re.S)
t = html.unescape(m.group(1)) if m else ""
txt = open(sys.argv[3]).read()
rows = [l for l in t.splitlines() if re.match(r"  (%s_[0-9]+|TOTAL) " % a, l)]
want = [l for l in txt.splitlines() if re.match(r"  (%s_[0-9]+|TOTAL) " % a, l)]
sys.exit(0 if len(rows) == 4 and rows == want else 1)' \
	"$T/arr.html" "$ARR" "$T/arr.txt"
cli cost --job "$ARR" --format csv >"$T/arr-cost.csv" 2>&1
note "cost --job $ARR:" "$(cat "$T/arr-cost.csv")"
check "cost --job $ARR: rows ${ARR}_1, ${ARR}_2, ${ARR}_3" \
	eq "$(grep -oE "^job,${ARR}_[0-9]+," "$T/arr-cost.csv" | cut -d, -f2 | sort | tr '\n' ' ')" \
	"${ARR}_1 ${ARR}_2 ${ARR}_3 "
cli rightsize --job "$ARR" --format json >"$T/arr-rs.json" 2>"$T/arr-rs.err"
check "rightsize --job $ARR: task arrtask with its 3 instances, one a task" \
	eq "$(jq_ "$T/arr-rs.json" tasks.0.task):$(jq_ "$T/arr-rs.json" tasks.0.instances)" "arrtask:3"
[ -s "$T/arr-rs.err" ] && note "rightsize: $(head -n 3 "$T/arr-rs.err")"

# ---- cost centers ---------------------------------------------------------------------

cli cost --since "$SINCE" --by cost-center --format csv >"$T/cc.csv" 2>&1
note "cost --by cost-center:" "$(cat "$T/cc.csv")"
check "cost --by cost-center: the groups are sacct's accounts proja and root, no (none)" \
	eq "$(grep -oE '^cost-center,[^,]*,' "$T/cc.csv" | cut -d, -f2 | sort | tr '\n' ' ')" "proja root "

finish
