#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_after_end.sh - a report asked for straight after a job's end sees
# every record of the job.  With the store's default batching (records
# synced every 0.2 s, stored in batches of up to 1 s) a `jobtrace report`
# run the moment `jobtrace run` returned answered "no records for job X",
# and `report --run R` showed a part of the run without a warning.  Now the
# job's end flushes its records to the store and a query first has the
# agent send what it holds and waits (at most 5 s) for the store to have
# it, saying so on stderr when the store is still behind.
#
# The reference is what the test ran: a script that logs its own pid and
# each child's.  Twenty times in a row, with two busy loops beside it on
# the two cores:
#   jobtrace run --job J --run R -- work.sh; jobtrace report --job J;
#   jobtrace report --run R
# must show exactly the logged processes, with the job's end record
# (COMPLETED, usage.processes the same count).  Five more times the job
# is ended by slurm/epilog as slurmd runs it (SLURM_JOB_ID,
# SLURM_JOB_EXIT_CODE2).  Then a store held locked by another writer:
# the report waits its bound and says how many records it lacks.
#
# Ten more times the job is registered with its cgroup and ended the
# moment its processes have: they must find it (their exec may be read
# only as the job ends).
#
# Needs root, kernel BTF, the sqlite3 CLI and python3.  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_after_end.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_commands python3
start_watchdog 400
ROUNDS=${ROUNDS:-20}
EPILOG_ROUNDS=${EPILOG_ROUNDS:-5}
CG_ROUNDS=${CG_ROUNDS:-10}
J=jt-ae-$$

# The test's cgroup goes with it.
extra_cleanup() {
	[ -n "${CGDIR:-}" ] && remove_cgroup "$CGDIR"
}

# the store's defaults (the point of the test): not lib.sh's 0.2 s
FLUSH_INTERVAL=1.0 start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	'cloud = { imds = "off"; };' || finish

# The work of a job: its own pid and each child's into the log $1.
cat >"$T/work.sh" <<'EOF'
#!/bin/sh
echo "$$" >>"$1"
sh -c 'echo "$$" >>"$1"; i=0; while [ $i -lt 3000 ]; do i=$((i + 1)); done' sh "$1"
sleep 0.02 &
echo "$!" >>"$1"
/bin/true &
echo "$!" >>"$1"
wait
EOF
chmod +x "$T/work.sh"

# Two busy loops beside the jobs, one per core.
for _ in 1 2; do
	sh -c 'while :; do :; done' &
	BG_PIDS="$BG_PIDS $!"
done

# Sorted pids (one line) of the processes in report JSON file $1, and
# "state processes" of its job (when it has one).
report_pids() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(str(p) for p in sorted(x["pid"] for x in r["processes"])))' "$1" 2>/dev/null
}
job_end_of() {
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
j = r.get("job") or {}
e = r.get("efficiency") or {}
print(j.get("state"), (e.get("job") or {}).get("processes"))' "$1" 2>/dev/null
}
# Sorted pids of log $1.
logged() {
	sort -n "$1" | tr '\n' ' ' | sed 's/ $//'
}

bad_job=0
bad_run=0
bad_end=0
for i in $(seq 1 "$ROUNDS"); do
	log=$T/pids.$i
	: >"$log"
	"$CLI" --config "$CONF" run --job "$J-$i" --run "$J-r$i" -- "$T/work.sh" "$log"
	"$CLI" --config "$CONF" report --job "$J-$i" --format json \
		>"$T/job.$i.json" 2>"$T/job.$i.err"
	"$CLI" --config "$CONF" report --run "$J-r$i" --format json \
		>"$T/run.$i.json" 2>"$T/run.$i.err"
	want=$(logged "$log")
	n=$(wc -l <"$log")
	got=$(report_pids "$T/job.$i.json")
	if [ "$got" != "$want" ]; then
		bad_job=$((bad_job + 1))
		note "round $i: report --job: pids '$got', the job ran '$want'" \
			"$(cat "$T/job.$i.err")"
	fi
	got=$(report_pids "$T/run.$i.json")
	if [ "$got" != "$want" ]; then
		bad_run=$((bad_run + 1))
		note "round $i: report --run: pids '$got', the run ran '$want'" \
			"$(cat "$T/run.$i.err")"
	fi
	got=$(job_end_of "$T/job.$i.json")
	if [ "$got" != "COMPLETED $n" ]; then
		bad_end=$((bad_end + 1))
		note "round $i: job state and usage.processes '$got', want 'COMPLETED $n'"
	fi
done
check "report --job straight after jobtrace run: every process the job ran, $ROUNDS rounds beside two busy loops ($bad_job incomplete)" \
	eq "$bad_job" 0
check "report --run straight after: every process of the run ($bad_run incomplete)" \
	eq "$bad_run" 0
check "the job's end record is there, COMPLETED, its usage counting every process ($bad_end wrong)" \
	eq "$bad_end" 0
check "no report warned of an incomplete store" \
	eq "$(cat "$T"/job.*.err "$T"/run.*.err | grep -c 'records behind')" 0

# The epilog: slurmd runs it after the job, which the prolog registered
# (here job-start --pid, as a hook without a Slurm cgroup does).
mkfifo "$T/go"
bad_epi=0
for i in $(seq 1 "$EPILOG_ROUNDS"); do
	id=$((900000 + $$ % 1000 * 10 + i))
	log=$T/epi.$i
	: >"$log"
	sh -c 'read x <"$1"; exec "$2" "$3"' sh "$T/go" "$T/work.sh" "$log" &
	pid=$!
	"$CLI" --config "$CONF" job-start --job "$id" --scheduler slurm \
		--pid "$pid" --strict >/dev/null
	echo go >"$T/go"
	wait "$pid"
	env -i SLURM_JOB_ID="$id" SLURM_JOB_EXIT_CODE2=0:0 JOBTRACE="$CLI" \
		JOBTRACE_CONFIG="$CONF" JOBTRACE_STRICT=1 sh "$top_srcdir/slurm/epilog"
	"$CLI" --config "$CONF" report --job "$id" --format json \
		>"$T/epi.$i.json" 2>"$T/epi.$i.err"
	want=$(logged "$log")
	got=$(report_pids "$T/epi.$i.json")
	st=$(job_end_of "$T/epi.$i.json")
	if [ "$got" != "$want" ] || [ "${st%% *}" != COMPLETED ]; then
		bad_epi=$((bad_epi + 1))
		note "epilog round $i: pids '$got' (ran '$want'), state '$st'" \
			"$(cat "$T/epi.$i.err")"
	fi
done
check "report --job straight after the Slurm epilog: every process and the end, $EPILOG_ROUNDS rounds ($bad_epi incomplete)" \
	eq "$bad_epi" 0

# A job registered with its cgroup (a prolog's --cgroup, where the agent
# does not know the scheduler's layout), its processes found by their
# cgroup at exec: ended the moment they have, before the agent's next tick
# has read their events.
if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
	CGROOT=/sys/fs/cgroup		# pure cgroup v2
else
	CGROOT=/sys/fs/cgroup/memory	# hybrid: processes carry the v1 path
fi
CGDIR=$CGROOT/jt_ae_$$
bad_cg=0
if mkdir "$CGDIR" 2>/dev/null; then
	for i in $(seq 1 "$CG_ROUNDS"); do
		log=$T/cg.$i
		: >"$log"
		"$CLI" --config "$CONF" job-start --job "$J-cg$i" --scheduler test \
			--cgroup "/jt_ae_$$" --strict >/dev/null
		(echo "$BASHPID" >"$CGDIR/cgroup.procs" && exec "$T/work.sh" "$log")
		"$CLI" --config "$CONF" job-end --job "$J-cg$i" --scheduler test \
			--exit-code 0 --strict >/dev/null
		"$CLI" --config "$CONF" report --job "$J-cg$i" --format json \
			>"$T/cg.$i.json" 2>"$T/cg.$i.err"
		want=$(logged "$log")
		got=$(report_pids "$T/cg.$i.json")
		st=$(job_end_of "$T/cg.$i.json")
		if [ "$got" != "$want" ] || [ "$st" != "COMPLETED $(wc -l <"$log")" ]; then
			bad_cg=$((bad_cg + 1))
			note "cgroup round $i: pids '$got' (ran '$want'), state and usage.processes '$st'" \
				"$(cat "$T/cg.$i.err")"
		fi
	done
	remove_cgroup "$CGDIR"
	check "a job found by its cgroup, ended straight after its processes: all of them in its report and its usage, $CG_ROUNDS rounds ($bad_cg incomplete)" \
		eq "$bad_cg" 0
else
	note "cannot make $CGDIR: the cgroup-registered case is not run"
fi

for p in $BG_PIDS; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	reaped "$p"
done

# A store that cannot take the records (another writer holds its lock):
# the report waits its bound, then says what it lacks.
lock_store 30
log=$T/pids.locked
: >"$log"
"$CLI" --config "$CONF" run --job "$J-locked" -- "$T/work.sh" "$log"
t0=$(now)
"$CLI" --config "$CONF" report --job "$J-locked" >/dev/null 2>"$T/locked.err"
t1=$(now)
waited=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }')
note "$(cat "$T/locked.err")"
check "a store that is behind: the report says how many records it lacks" \
	grep -q 'warning: the store .* is [0-9]* records behind the agent after waiting 5.0 s' "$T/locked.err"
check "... after waiting its bound, 5 s, not more ($waited s)" between "$waited" 4.9 7
unlock_store

finish
