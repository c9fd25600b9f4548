#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_top_slurm.sh - `jobtrace top`: a run's Slurm jobs still pending in
# squeue are waiting lines of the run, against a real one-node Slurm
# (tests/slurm/slurm-env.sh) and the real agent.
#
# A run (`jobtrace run --run R`, as Snakemake's cluster mode submits: its
# sbatch processes name each job script .../snakejob.RULE.N.sh) submits
# held jobs (sbatch --hold: pending, reason JobHeldUser):
#   two of rule align and one of rule call by their job scripts;
#   one whose comment names the run (trace-run=R trace-step=index);
# the test (root, as the run) submits one whose comment names the run
# (trace-step=qc) from outside it, and user nobody one whose comment names
# R too (a job of another user: not the run's).  References: the job ids sbatch printed and
# what squeue itself lists as pending.  Checked in `top --once --format
# json --run R`: one waiting line per pending job of the run, with its task
# (the rule, or trace-step) and its job id; nobody's job in none; the
# earlier run's tasks not pending are waiting as before (without a job);
# the text frame shows "align (job ID)".  After scancel: no line has a job.
#
# Needs root, kernel BTF, the sqlite3 CLI, python3 and Slurm
# (scripts/install-deps.sh installs them).  Exit 0 pass, 1 fail, 77
# skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_top_slurm.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/slurm/slurm-env.sh"

slurm_env_need
need_built "$AGENT" "$CLI"
need_commands python3
start_watchdog 300

extra_cleanup() {
	[ -n "${DRIVER:-}" ] && kill "$DRIVER" 2>/dev/null
	slurm_env_stop
}

chmod 755 "$T"	# munge and nobody reach their folders in it
start_slurm_and_agent

R=topslurm-$$
W=$T/wf
S=$W/.snakemake/tmp.abc
mkdir -p "$S" "$T/nobody"
chmod 755 "$T/nobody"
for n in align.1 align.2 call.3; do
	printf '#!/bin/sh\nsleep 1\n' >"$S/snakejob.$n.sh"
done
printf '#!/bin/sh\nsleep 1\n' >"$W/index.sh"
cp "$W/index.sh" "$T/nobody/index.sh"
chmod 755 "$S"/*.sh "$W/index.sh" "$T/nobody/index.sh"

# an earlier run of the pipeline: its job scripts of rules align, call,
# index and report ran one after the other (the rules name the task)
S0=$W/.snakemake/tmp.old
mkdir -p "$S0"
for n in align.1 call.2 index.3 report.4; do
	printf '#!/bin/sh\nsleep 0.3\n' >"$S0/snakejob.$n.sh"
done
"$CLI" --config "$CONF" run --job "$R-0" --run "$R-0" --pipeline smk -- bash -c "
	for n in align.1 call.2 index.3 report.4; do bash $S0/snakejob.\$n.sh; done" \
	>"$T/run0.out" 2>&1
check "the earlier run exits 0" eq "$?" 0
wait_q "select count(distinct job_task) from process where job_run = '$R-0';" 4 10 >/dev/null

# the run: it submits, writes the ids, then waits (it is running)
sub() { sbatch --parsable --hold -o /dev/null -e /dev/null --chdir="$T" "$@"; }
"$CLI" --config "$CONF" run --job "$R" --run "$R" --pipeline smk -- bash -c "
	$(declare -f sub)
	T=$T
	for n in align.1 align.2 call.3; do
		sub $S/snakejob.\$n.sh >>$T/ids.jobs 2>>$T/sbatch.err
	done
	sub --comment 'trace-run=$R trace-step=index' $W/index.sh >>$T/ids.comment 2>>$T/sbatch.err
	sleep 120" >"$T/run.out" 2>&1 &
DRIVER=$!
sub --comment "trace-run=$R trace-step=qc" "$W/index.sh" >"$T/ids.outside" 2>>"$T/sbatch.err"
runuser -u nobody -- sbatch --parsable --hold -o /dev/null -e /dev/null \
	--chdir=/tmp --comment "trace-run=$R trace-step=spoof" \
	"$T/nobody/index.sh" >"$T/ids.nobody" 2>>"$T/sbatch.err"
for _ in $(seq 1 100); do
	[ "$(cat "$T/ids.jobs" "$T/ids.comment" 2>/dev/null | wc -l)" -ge 4 ] && break
	sleep 0.1
done
JOBS=$(tr '\n' ' ' <"$T/ids.jobs")
COMMENT=$(cat "$T/ids.comment")
NOBODY=$(cat "$T/ids.nobody")
OUTSIDE=$(cat "$T/ids.outside")
check "sbatch --hold submitted 3 script jobs ($JOBS), one by comment ($COMMENT), one from outside ($OUTSIDE), nobody's ($NOBODY)" \
	eval '[ "$(echo $JOBS | wc -w)" = 3 ] && [ -n "$COMMENT" ] && [ -n "$NOBODY" ] && [ -n "$OUTSIDE" ]'
[ -s "$T/sbatch.err" ] && note "$(cat "$T/sbatch.err")"
PENDING=$(squeue -h -t PENDING -o %i | sort -n | tr '\n' ' ')
check "squeue lists the 6 jobs as pending ($PENDING)" \
	eq "$PENDING" "$(echo $JOBS $COMMENT $OUTSIDE $NOBODY | tr ' ' '\n' | sort -n | tr '\n' ' ')"
# the run's sbatch processes are stored once they ended, and its sleep is
# sampled (a running run: top asks squeue for its pending jobs)
check "the run's 4 sbatch are stored and its sleep sampled" \
	wait_q "select count(*) from process where job_run = '$R' and comm = 'sbatch';
		select count(*) > 0 from record where type = 'sample' and job_id = '$R'
		and json_extract(json, '\$.comm') = 'sleep';" "4
1" 10

cli top --once --format json --run "$R" >"$T/top.json" 2>"$T/top.err"
check "top --once --format json --run exits 0" eq "$?" 0
python3 - "$T/top.json" "$JOBS" "$COMMENT" "$NOBODY" "$OUTSIDE" <<'PY' >"$T/checks"
import json, sys
d = json.load(open(sys.argv[1]))
jobs, comment, nobody = sys.argv[2].split(), sys.argv[3], sys.argv[4]
outside = sys.argv[5]
run = d["runs"][0]
w = [(l["task"], l["job"]) for l in run["children"]
     if l["kind"] == "task" and l["state"] == "waiting"]
def say(ok, msg):
    print(("ok - " if ok else "not ok - ") + msg)
pend = sorted((x for x in w if x[1]), key=str)
want = sorted([("align", jobs[0]), ("align", jobs[1]), ("call", jobs[2]),
               ("index", comment), ("qc", outside)])
say(pend == want, "waiting lines of the pending jobs: %s (want %s)"
    % (pend, want))
say(all(j != nobody for _, j in w), "nobody's job, naming the run, is not"
    " the run's (%s)" % nobody)
rest = sorted((t for t, j in w if not j), key=str)
say(rest == ["report"], "the earlier run's task not pending is waiting"
    " as before: %s" % rest)
exp = [l for l in run["children"] if l.get("task") == "align"
       and l["state"] == "waiting"]
say(all(l["expected_s"] is not None and l["expected_runs"] == 1
        for l in exp), "a pending align has the earlier run's expected time")
PY
while IFS= read -r line; do
	check "${line#*ok - }" eval "[ '${line%% - *}' = ok ]"
done <"$T/checks"
cli top --once --run "$R" >"$T/top.txt" 2>&1
note "$(cat "$T/top.txt")"
check "the text frame names a pending job: align (job ${JOBS%% *})" \
	grep -qE "^waiting +align \(job ${JOBS%% *}\)" "$T/top.txt"

scancel $JOBS $COMMENT $OUTSIDE $NOBODY
for _ in $(seq 1 50); do
	[ -z "$(squeue -h -t PENDING -o %i)" ] && break
	sleep 0.2
done
sleep 1
cli top --once --format json --run "$R" >"$T/top2.json" 2>&1
check "after scancel no waiting line has a job" \
	eval "! python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
r = d[\"runs\"][0]
sys.exit(0 if [l for l in r[\"children\"] if l[\"state\"] == \"waiting\" and l[\"job\"]] else 1)' '$T/top2.json'"

kill "$DRIVER" 2>/dev/null
finish
