#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_quiet.sh - quieter defaults, by what the test did:
#  - `jobtrace status` opens with one line that says whether all is well,
#    as `systemctl is-system-running` does: "status: running" on a fresh
#    agent; "status: degraded: ..." naming the SQLite sink while another
#    writer holds its store locked; "status: running" again once it has
#    stored what waited.
#  - collector.record = "jobs": only job processes get a record; the
#    others are counted in the host records' outside_jobs and in status.
#    The agent runs with rules that record only processes whose argv has
#    the test's mark, so the count is exactly what the test ran: five
#    /bin/true and a shell counting to 300000 outside jobs (their CPU what
#    bash's `times` says of its children), a job of three.
# (cloud.imds = "auto" asking only on EC2 is in test_imds.sh.)
#
# Needs root, kernel BTF, the sqlite3 CLI and python3.  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_quiet.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands python3
start_watchdog 180
M=jt-quiet-mark-$$

mark_only_rules "$M"
COLLECTOR='record = "jobs";' start_agent "rules_dir = \"$T/rules\";" \
	'cloud = { imds = "off"; };' || finish

# The first line of `jobtrace status`.
first_line() {
	cli status 2>/dev/null | head -n 1
}

check "a fresh agent: status opens with 'status: running' ($(first_line))" \
	eq "$(first_line)" "status: running"

# ---- collector.record = "jobs" -------------------------------------------------------------

# Seconds of CPU of this script's reaped children, from the file of a
# `times` (a builtin: no fork) in $1.
children_cpu() {
	sed -n 2p "$1" | awk '{ s = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); s += a[1] * 60 + a[2] }
		printf "%.3f", s }'
}

T0=$(now)
status_get outside_jobs_processes
P0=$REPLY
status_get outside_jobs_cpu_s
C0=$REPLY
# between the two status reads the script runs only commands (forks that
# exec): a fork that does not exec would count as a process outside jobs
times >"$T/times0"
/bin/true "$M"
/bin/true "$M"
/bin/true "$M"
/bin/true "$M"
/bin/true "$M"
/bin/sh -c 'i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done' "$M"
times >"$T/times1"
"$CLI" --config "$CONF" run --job "$M-job" -- /bin/sh -c "/bin/true $M; /bin/true $M" "$M"
# the agent counts them as it reads their exits (each tick)
for _ in $(seq 1 50); do
	status_get outside_jobs_processes
	P1=$REPLY
	[ "$P1" -ge $((P0 + 6)) ] 2>/dev/null && break
	sleep 0.1
done
status_get outside_jobs_cpu_s
C1=$REPLY
REF=$(awk -v a="$(children_cpu "$T/times0")" -v b="$(children_cpu "$T/times1")" 'BEGIN { printf "%.3f", b - a }')
note "outside jobs: processes $P0 -> $P1, CPU $C0 -> $C1 s; those six processes' CPU by bash's times: $REF s"
check "status: 'record: jobs ...'" grep -q '^record: jobs' <<<"$(cli status)"
check "outside jobs: the six processes the test ran outside jobs are counted ($P0 -> $P1)" \
	eq "$((P1 - P0))" 6
# times prints milliseconds: its two figures round
check "... with their CPU, what bash's times says of them ($REF s) within 5 ms" \
	awk -v a="$C0" -v b="$C1" -v r="$REF" 'BEGIN { d = b - a - r; exit !(r > 0.05 && d >= -0.005 && d <= 0.005) }'
cli report --job "$M-job" --format json >"$T/job.json" 2>&1
JP=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["processes"]))' "$T/job.json" 2>&1)
check "the job's processes have their records (sh, two /bin/true: $JP)" between "$JP" 3 4
NOJOB=$(q "select count(*) from process where job_id is null and since_time >= $T0;")
check "no process outside a job has a record ($NOJOB since the test began)" eq "$NOJOB" 0
stop_agent
HOST=$(q "select json_extract(json, '\$.outside_jobs.processes') from record where type = 'host'
	and json_extract(json, '\$.phase') = 'stop' order by time desc limit 1;")
check "the host stop record counts them ($HOST, status said $P1)" \
	awk -v h="$HOST" -v p="$P1" 'BEGIN { exit !(h != "" && h >= p) }'

# ---- status: degraded while the store cannot take records, then running ------------------

start_agent "rules_dir = \"$T/rules\";" 'cloud = { imds = "off"; };' || finish
lock_store 30
/bin/true "$M"
line=
for _ in $(seq 1 150); do
	line=$(first_line)
	case $line in "status: degraded"*) break ;; esac
	sleep 0.2
done
note "with the store locked: $line"
check "the store locked by another writer: 'status: degraded: 1 problem: sink sqlite ...' (retrying, or waiting on its insert)" \
	grep -qE '^status: degraded: 1 problem: sink sqlite (retrying: |has not stored what it read [0-9]+ s ago$)' <<<"$line"
unlock_store
for _ in $(seq 1 300); do
	line=$(first_line)
	[ "$line" = "status: running" ] && break
	sleep 0.2
done
check "once the store takes records again: 'status: running' ($line)" eq "$line" "status: running"

finish
