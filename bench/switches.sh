#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/switches.sh BUILD_DIR [ROUND_TRIPS]
#
# What the sched_switch hook (jt_switch) costs a context switch that is not a
# dead task's last one: two processes bounce a byte over two pipes
# ROUND_TRIPS times (100000: about 400000 context switches, no process
# starts or exits), with the agent running and kernel.bpf_stats_enabled=1.
# Prints jt_switch's run count, the machine's context switches in the same
# window (/proc/stat ctxt) and run_time_ns per run.  The figure includes
# the two clock reads that bpf_stats adds to every run.  Both processes
# sleep in read on a pipe: jt_switch looks at their system call (not a
# network or child wait), jt_wakeup (its runs and ns per run printed too,
# when the build has it) finds no sleep of theirs.  Needs root, jq,
# bpftool and python3.
set -eu
BUILD=${1:?usage: bench/switches.sh BUILD_DIR [ROUND_TRIPS]}
N=${2:-100000}
T=$(mktemp -d /tmp/jobtrace-switches.XXXXXX)
AGENT_PID=
old_stats=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	sysctl -q -w kernel.bpf_stats_enabled="$old_stats"
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
mkdir -p "$T/state" "$T/run"
echo "agent = { state_dir = \"$T/state\"; run_dir = \"$T/run\"; };" >"$T/conf"
"$BUILD/jobtraced" --config "$T/conf" --foreground >"$T/log" 2>&1 &
AGENT_PID=$!
for _ in $(seq 1 50); do
	grep -qs '^prog_id:' /proc/"$AGENT_PID"/fdinfo/* && break
	sleep 0.2
done
sleep 1
ids=$(grep -h '^prog_id:' /proc/"$AGENT_PID"/fdinfo/* | awk '{ print $2 }' | sort -un | jq -s -c .)
stat() {
	bpftool prog show -j | jq -r --argjson ids "$ids" --arg name "${1:-jt_switch}" \
		'[.[] | select((.id as $i | $ids | index($i)) and .name == $name)][0] |
		 if . == null then "none none" else
		 "\(.run_time_ns // 0) \(.run_cnt // 0)" end'
}
sysctl -q -w kernel.bpf_stats_enabled=1
read -r ns0 n0 <<<"$(stat)"
read -r wns0 wn0 <<<"$(stat jt_wakeup)"
x0=$(awk '/^ctxt / { print $2 }' /proc/stat)
python3 - "$N" <<'PY'
import os, sys
n = int(sys.argv[1])
r1, w1 = os.pipe()
r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    for _ in range(n):
        os.read(r1, 1)
        os.write(w2, b"x")
    os._exit(0)
for _ in range(n):
    os.write(w1, b"x")
    os.read(r2, 1)
os.waitpid(pid, 0)
PY
read -r ns1 n1 <<<"$(stat)"
read -r wns1 wn1 <<<"$(stat jt_wakeup)"
x1=$(awk '/^ctxt / { print $2 }' /proc/stat)
runs=$((n1 - n0))
echo "jt_switch: $runs runs, $((x1 - x0)) context switches in /proc/stat, $(( (ns1 - ns0) / (runs > 0 ? runs : 1) )) ns per run ($N pipe round trips)"
[ "$wn1" = none ] || wruns=$((wn1 - wn0))
[ "$wn1" = none ] ||
	echo "jt_wakeup: $wruns runs, $(( (wns1 - wns0) / (wruns > 0 ? wruns : 1) )) ns per run"
