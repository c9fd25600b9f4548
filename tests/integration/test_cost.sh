#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_cost.sh - a job's cost, efficiency and waste flags in its end record,
# against the real one-node Slurm 22.05 (tests/slurm/slurm-env.sh, cgroup
# mode, the prolog and epilog of slurm/) and the real agent, every figure
# against an independent reference:
#
#   elapsed   sacct -c -j ID -o ElapsedRaw (slurmctld's own start and end,
#             from jobcomp/filetxt: there is no slurmdbd here)
#   CPU       what burn measured of itself (getrusage)
#   share     max(CPUs / node_cpus, memory / node_mem), from this test's own
#             configuration numbers
#
# The node is declared with CPUs=4 (SlurmdParameters=config_overrides; the
# VM has 2), so that a job can ask for 4 CPUs and use one.  The agent runs
# with waste.time_min_elapsed = 5 (so that a short job can show the time
# flag) and default thresholds otherwise.
#
#   job A  --cpus-per-task=2 --mem=1G --time=10, burn 10 (one CPU busy):
#          cost.node_hour = 3.6, node_cpus = 4, node_mem_gib = 1.5, so the
#          share is max(2/4, 1/1.5) = 2/3 and cost = 3.6 x 2/3 x elapsed /
#          3600; flags cpu_underused (about 0.5), memory_overrequested
#          (touches almost nothing of 1G), time_overrequested (11 s of 600).
#   reload to rates: core_hour = 0.05, gib_hour = 0.01 (the host price then
#          4 x 0.05 + 1.5 x 0.01), live.
#   job B  the same shape: cost = (2 x 0.05 + 1 x 0.01) x elapsed / 3600,
#          formula rates, share null.
#   job C  --cpus-per-task=4 --mem=400M --time=1, burn 8: cpu_underused.
#   job D  --cpus-per-task=1 --mem=400M --time=1: burn 38 (so at least
#          38 s of its 60) at nice -15, so that other work on this 2-core
#          VM does not take its CPU, while touchmem holds 300 MiB (75 %):
#          uses what it asked, no flags.
#   prices (no Slurm): the agent again, with cloud.imds_url at
#          tests/integration/fake-imds.py (a spot c5.2xlarge in eu-west-1,
#          as EC2 documents it) and a prices file: the host price is the
#          spot column; `jobtrace run` jobs cost that x share x elapsed;
#          with the spot price '-' the cost is null with a note (not the
#          on-demand price, not node_hour); a bad line is named FILE:LINE.
#
# Tolerance of the elapsed time: ElapsedRaw is whole seconds of slurmctld's
# start and end (each truncated: up to 1 s either way), and the agent's
# start and end are when the prolog and epilog reached it, which this test
# measures from the hook log (prolog start - StartTime, epilog end -
# EndTime); |agent - sacct| must be within 1 s plus those offsets.
#
# Needs root, kernel BTF, the sqlite3 CLI, python3, and Slurm (installed from
# Debian when missing).  Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
# Run:  top_builddir=BUILD top_srcdir=SRC bash tests/integration/test_cost.sh

set -u

. "$(dirname "$0")/lib.sh"
# job E passes 90 % of its memory limit on purpose (lib.sh's no_stray_signals)
SIGNALS_EXPECTED="memory_near_limit"
. "$top_srcdir/tests/slurm/slurm-env.sh"

slurm_env_need
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/touchmem"
if ! command -v python3 >/dev/null; then
	echo "# error: python3 is missing"
	exit 99
fi

extra_cleanup() {
	slurm_env_stop
}
start_watchdog 420

GIB=1073741824
NODE_HOUR=3.6
NODE_CPUS=4
NODE_MEM_GIB=1.5
CORE_HOUR=0.05
GIB_HOUR=0.01

# Write the agent's extra groups: cost { $1 }, the rest fixed.
groups() {
	cat <<-EOF
		cloud = { imds = "off"; };
		docker = { enabled = false; };
		cost = { $1 node_cpus = $NODE_CPUS; node_mem_gib = $NODE_MEM_GIB; };
		waste = { time_min_elapsed = 5; };
	EOF
}

# Field $2 (dotted path) of job $1's end record, "null" when absent.
endrec() {
	q "select coalesce(json_extract(json, '\$.$2'), 'null') from record
		where type = 'job' and job_id = '$1'
		and json_extract(json, '\$.phase') = 'end' order by time desc limit 1;"
}

# Field KEY of `scontrol show job -o ID`.
sjob() {
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' |
		sed -n "s/^$2=//p" | head -n 1
}

# Submit a batch script; prints the job id.  Arguments go to sbatch.
submit() {
	sbatch --parsable --chdir="$JOBDIR" --output="$JOBDIR/%j.out" "$@" |
		cut -d';' -f1
}

# Wait (at most $2 s) until job $1 ended, its epilog ran, the agent stored
# its end record and sacct -c knows it; 0 then.
wait_done() {
	for _ in $(seq 1 $(($2 * 5))); do
		case $(sjob "$1" JobState) in
		PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;;
		*)
			if grep -q "^epilog $1 " "$SLURM_ENV_HOOKLOG" &&
				[ "$(endrec "$1" phase)" = end ] &&
				[ -n "$(elapsed_raw "$1")" ]; then
				return 0
			fi
			;;
		esac
		sleep 0.2
	done
	note "job $1: state '$(sjob "$1" JobState)', hooks:" \
		"$(grep " $1 " "$SLURM_ENV_HOOKLOG")"
	return 1
}

# sacct's ElapsedRaw of job $1 (from the job completion file).
elapsed_raw() {
	sacct -c -n -P -j "$1" -o ElapsedRaw 2>/dev/null | head -n 1
}

# Epoch seconds of a Slurm time "2026-11-24T07:07:26" (local time zone).
epoch_of() {
	date -d "$1" +%s
}

# Seconds the hooks added to the elapsed time of job $1: (prolog start -
# StartTime) + (epilog end - EndTime) magnitudes, each at least 0.
hook_slack() {
	local s e
	s=$(epoch_of "$(sjob "$1" StartTime)")
	e=$(epoch_of "$(sjob "$1" EndTime)")
	awk -v j="$1" -v s="$s" -v e="$e" '
		$1 == "prolog" && $2 == j { p = $3 - s; if (p < 0) p = -p }
		$1 == "epilog" && $2 == j { q = $4 - e; if (q < 0) q = -q }
		END { printf "%.3f\n", p + q }' "$SLURM_ENV_HOOKLOG"
}

# awk arithmetic on the numbers given as a, b, c, d: prints the result.
calc() {
	awk -v a="${2:-0}" -v b="${3:-0}" -v c="${4:-0}" -v d="${5:-0}" \
		"BEGIN { printf \"%.9f\n\", $1 }"
}

# True if the flags array (JSON text) $1 is exactly the names in $2.
flags_are() {
	python3 -c 'import json, sys
got = json.loads(sys.argv[1]) if sys.argv[1] != "null" else None
want = sys.argv[2].split()
sys.exit(0 if got == want else 1)' "$1" "$2"
}

# What burn measured of its CPU in job $1's output (the sum of every burn).
burn_cpu() {
	grep -o 'cpu_s=[0-9.]*' "$JOBDIR/$1.out" |
		awk -F= '{ s += $2 } END { if (NR) printf "%.6f\n", s }'
}

# Job $1's usage.mem_peak_bytes is its memory cgroup's max_usage_in_bytes
# at its last process's exit: at least what the job script read at its
# end (PEAK_SH), at most what the shell's last steps (a file written) can
# add to it, 1 MiB.
check_peak() {
	local job=$1 peak
	peak=$(cat "$JOBDIR/peak.$job" 2>/dev/null)
	note "job $job: memory.max_usage_in_bytes read by the job '$peak'," \
		"usage.mem_peak_bytes $(endrec "$job" usage.mem_peak_bytes) ($(endrec "$job" usage.mem_peak_source))"
	check "job $job: usage.mem_peak_bytes is the job cgroup's memory.max_usage_in_bytes read at its end ('$peak') to +1 MiB, source cgroup_v1" \
		eval '[ -n "$peak" ] &&
			between "$(endrec "$job" usage.mem_peak_bytes)" "$peak" "$((peak + MIB))" &&
			[ "$(endrec "$job" usage.mem_peak_source)" = cgroup_v1 ]'
}

# ---- Slurm and the agent ---------------------------------------------------------

# munged (user munge) and the jobs must reach into the test folder
chmod 0755 "$T"
SLURM_ENV_PROLOG=$top_srcdir/slurm/prolog
SLURM_ENV_EPILOG=$top_srcdir/slurm/epilog
SLURM_ENV_JOBTRACE=$CLI
SLURM_ENV_JOBTRACE_CONFIG=$CONF
SLURM_ENV_CPUS=$NODE_CPUS
SLURM_ENV_JOBCOMP=1
SLURM_ENV_FIRST_JOB_ID=$((1000 + RANDOM % 50000))
if ! slurm_env_start cgroup "$T/slurm"; then
	check "Slurm starts with CPUs=$NODE_CPUS and the node becomes idle" false
	finish
fi
check "Slurm starts with CPUs=$NODE_CPUS and the node becomes idle" \
	eq "$(sinfo -h -N -o %c)" "$NODE_CPUS"
JOBDIR=$SLURM_ENV_DIR/jobs
mkdir -p "$JOBDIR"
chmod 1777 "$JOBDIR"

# the agent inherits SLURM_CONF, for its background scontrol
if ! start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"$(groups "node_hour = $NODE_HOUR;")"; then
	finish
fi

# the host record's price: node_hour and the configured node size
hp=$(q "select json_extract(json, '\$.price.per_hour') || ' ' ||
	json_extract(json, '\$.price.source') || ' ' ||
	json_extract(json, '\$.price.node_cpus') || ' ' ||
	json_extract(json, '\$.price.node_mem_bytes') from record
	where type = 'host' order by time limit 1;")
for _ in $(seq 1 25); do
	[ -n "$hp" ] && break
	sleep 0.2
	hp=$(q "select json_extract(json, '\$.price.per_hour') || ' ' ||
		json_extract(json, '\$.price.source') || ' ' ||
		json_extract(json, '\$.price.node_cpus') || ' ' ||
		json_extract(json, '\$.price.node_mem_bytes') from record
		where type = 'host' order by time limit 1;")
done
check "host record: price 3.6 config:node_hour, 4 CPUs, 1.5 GiB ('$hp')" \
	eq "$hp" "3.6 config:node_hour 4 $(calc 'int(a * b)' 1.5 $GIB | cut -d. -f1)"
check "status: cost.node_price: 3.6 USD an hour (config:node_hour)" \
	eq "$(status_of cost.node_price)" "3.6 USD an hour (config:node_hour)"

# The end of a job script: the job's own memory cgroup peak (the job_N
# level of v1, gone after the job) as the kernel kept it, read by the job.
PEAK_SH="cg=\$(sed -n 's|^[0-9]*:memory:\\(.*/job_[0-9]*\\).*|\\1|p' /proc/self/cgroup)
cat \"/sys/fs/cgroup/memory\$cg/memory.max_usage_in_bytes\" >\"$JOBDIR/peak.\$SLURM_JOB_ID\""
cat >"$JOBDIR/burn.sh" <<EOF
#!/bin/sh
"$WL/burn" "\$1"
$PEAK_SH
EOF
cat >"$JOBDIR/fit.sh" <<EOF
#!/bin/sh
"$WL/touchmem" 300 2000 >touch.\$SLURM_JOB_ID.out &
# at a high priority (the job runs as root): other work on this small VM
# must not take the CPU the job asked for and uses
nice -n -15 "$WL/burn" 38
wait
$PEAK_SH
EOF
cat >"$JOBDIR/near.sh" <<EOF
#!/bin/sh
exec "$WL/touchmem" 185 4000
EOF
chmod 0755 "$JOBDIR"/*.sh

# ---- job A: the share by allocation, all three flags --------------------------------

A=$(submit --cpus-per-task=2 --mem=1G --time=10 "$JOBDIR/burn.sh" 10 2>"$T/sbatch-a.err")
check "sbatch accepts job A (id '$A')" test -n "$A"
[ -n "$A" ] || note "$(cat "$T/sbatch-a.err")"
check "job A ends, its epilog runs, its end record is stored" wait_done "$A" 60

el=$(elapsed_raw "$A")
ael=$(endrec "$A" cost.elapsed_s)
slack=$(calc 'a + 1' "$(hook_slack "$A")")
note "job A: sacct ElapsedRaw $el s, the agent's $ael s, tolerance $slack s" \
	"job A: cost $(endrec "$A" cost)" \
	"job A: efficiency $(endrec "$A" efficiency) flags $(endrec "$A" flags)"
check "A: elapsed is sacct's ElapsedRaw within $slack s" near "$ael" "$el" 0 "$slack"
check "A: allocation 2 CPUs, 1 GiB, time limit 600 s (scontrol TimeLimit)" \
	eq "$(endrec "$A" allocation.cpus) $(endrec "$A" allocation.mem_bytes) $(endrec "$A" allocation.time_limit_s)" \
	"2 $GIB 600"
share=$(calc '(a / b > 1 / c ? a / b : 1 / c)' 2 $NODE_CPUS $NODE_MEM_GIB)
check "A: share max(2/4, 1/1.5) = $share" near "$(endrec "$A" cost.share)" "$share" 0 0.000001
check "A: formula allocation_share, source config:node_hour, USD" \
	eq "$(endrec "$A" cost.formula) $(endrec "$A" cost.source) $(endrec "$A" cost.currency)" \
	"allocation_share config:node_hour USD"
want=$(calc 'a * b * c / 3600' $NODE_HOUR "$share" "$el")
tol=$(calc 'a * b * c / 3600' $NODE_HOUR "$share" "$slack")
check "A: cost 3.6 x $share x sacct's $el s / 3600 = $want (within $tol)" \
	near "$(endrec "$A" cost.amount)" "$want" 0 "$tol"
check "A: cost is the formula of its own elapsed_s (to 1e-6)" \
	near "$(endrec "$A" cost.amount)" "$(calc 'a * b * c / 3600' $NODE_HOUR "$share" "$ael")" 0 0.0000011
bc=$(burn_cpu "$A")
want=$(calc 'a / (2 * b)' "$bc" "$el")
check "A: efficiency.cpu is burn's $bc CPU-s / (2 x $el s) = $want (within 0.06)" \
	near "$(endrec "$A" efficiency.cpu)" "$want" 0 0.06
check_peak "$A"
check "A: efficiency.memory is usage.mem_peak_bytes / 1 GiB" \
	near "$(endrec "$A" efficiency.memory)" \
	"$(calc 'a / b' "$(endrec "$A" usage.mem_peak_bytes)" $GIB)" 0 0.000001
check "A: efficiency.time is sacct's elapsed / 600 s" \
	near "$(endrec "$A" efficiency.time)" "$(calc 'a / 600' "$el")" 0 "$(calc 'a / 600' "$slack")"
check "A: flags cpu_underused, memory_overrequested, time_overrequested" \
	flags_are "$(endrec "$A" flags)" "cpu_underused memory_overrequested time_overrequested"

cli report --job "$A" --no-tree >"$T/report-a.txt" 2>&1
check "report --job A shows the cost line" \
	grep -q "^Cost:        $(endrec "$A" cost.amount | awk '{ printf "%.6f", $1 }') USD = 3.6/h x share 0.6667" "$T/report-a.txt"
check "report --job A shows the flags" \
	grep -q "^Flags:       cpu_underused, memory_overrequested, time_overrequested" "$T/report-a.txt"
cli report --job "$A" --no-tree --format json >"$T/report-a.json" 2>&1
check "report --job A --format json has job.cost.amount and job.flags" \
	python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))["job"]
sys.exit(0 if abs(j["cost"]["amount"] - float(sys.argv[2])) < 1e-9 and
         j["flags"] == ["cpu_underused", "memory_overrequested", "time_overrequested"] else 1)' \
	"$T/report-a.json" "$(endrec "$A" cost.amount)"

# `jobtrace cost` splits the job's cost over its processes by CPU time: by
# tool and by task the groups add up to the end record's amount (1e-9),
# and each tool's part is its CPU share of that amount.
for by in tool task job; do
	cli cost --job "$A" --by $by --format json >"$T/cost-a-$by.json" 2>"$T/cost-a-$by.err"
	check "cost --job A --by $by: the groups add up to the job's $(endrec "$A" cost.amount) USD" \
		python3 -c 'import json, sys
r = json.load(open(sys.argv[1])); want = float(sys.argv[2])
t = [x for x in r["totals"] if x["currency"] == "USD"]
g = [x for x in r["groups"] if x["currency"] == "USD" and x["kind"] == "group"]
cpu = sum(x["cpu_s"] for x in g)
ok = len(t) == 1 and abs(t[0]["cost"] - want) < 1e-9 and \
    abs(sum(x["cost"] for x in g) - want) < 1e-9 and len(g) >= 1 and \
    all(abs(x["cost"] - want * x["cpu_s"] / cpu) < 1e-9 for x in g) if cpu > 0 else False
sys.exit(0 if ok else 1)' "$T/cost-a-$by.json" "$(endrec "$A" cost.amount)"
done
note "cost --job A --by tool: $(cat "$T/cost-a-tool.json")"
check "cost --job A --by tool: burn has the largest part" \
	python3 -c 'import json, sys
g = [x for x in json.load(open(sys.argv[1]))["groups"] if x["kind"] == "group"]
sys.exit(0 if max(g, key=lambda x: x["cost"])["name"] == "burn" else 1)' "$T/cost-a-tool.json"

# ---- reload to rates; job B --------------------------------------------------------

groups "core_hour = $CORE_HOUR; gib_hour = $GIB_HOUR;" >"$T/groups.conf"
sed -i '/^cloud = \|^docker = \|^cost = \|^waste = /d' "$CONF"
cat "$T/groups.conf" >>"$CONF"
cli reload >/dev/null 2>&1
rate=$(calc 'a * b + c * d' $NODE_CPUS $CORE_HOUR $NODE_MEM_GIB $GIB_HOUR)
for _ in $(seq 1 25); do
	grep -q "cost: the node costs .* (config:rates" "$T/agent.log" && break
	sleep 0.2
done
check "reload: the node price is the rates' $rate an hour, live" \
	grep -q "cost: the node costs $(calc 'a' "$rate" | sed 's/0*$//') USD an hour (config:rates" "$T/agent.log"

B=$(submit --cpus-per-task=2 --mem=1G --time=10 "$JOBDIR/burn.sh" 10 2>"$T/sbatch-b.err")
check "sbatch accepts job B (id '$B')" test -n "$B"
check "job B ends and its end record is stored" wait_done "$B" 60
el=$(elapsed_raw "$B")
slack=$(calc 'a + 1' "$(hook_slack "$B")")
note "job B: sacct ElapsedRaw $el s, tolerance $slack s, cost $(endrec "$B" cost)"
per=$(calc '2 * a + 1 * b' $CORE_HOUR $GIB_HOUR)
check "B: formula rates, source config:rates, share null" \
	eq "$(endrec "$B" cost.formula) $(endrec "$B" cost.source) $(endrec "$B" cost.share)" \
	"rates config:rates null"
check "B: price_per_hour 2 x $CORE_HOUR + 1 x $GIB_HOUR = $per" \
	near "$(endrec "$B" cost.price_per_hour)" "$per" 0 0.000001
check "B: cost $per x sacct's $el s / 3600 (within $per x $slack s / 3600)" \
	near "$(endrec "$B" cost.amount)" "$(calc 'a * b / 3600' "$per" "$el")" 0 \
	"$(calc 'a * b / 3600' "$per" "$slack")"

# ---- job C: asks for 4 CPUs, uses one -------------------------------------------------

C=$(submit --cpus-per-task=4 --mem=400M --time=1 "$JOBDIR/burn.sh" 8 2>"$T/sbatch-c.err")
check "sbatch accepts job C with 4 CPUs (id '$C')" test -n "$C"
check "job C ends and its end record is stored" wait_done "$C" 60
el=$(elapsed_raw "$C")
bc=$(burn_cpu "$C")
note "job C: sacct ElapsedRaw $el s, burn $bc CPU-s, efficiency $(endrec "$C" efficiency), flags $(endrec "$C" flags)"
check "C: allocation 4 CPUs" eq "$(endrec "$C" allocation.cpus)" 4
check "C: efficiency.cpu is burn's CPU / (4 x $el s) (within 0.06)" \
	near "$(endrec "$C" efficiency.cpu)" "$(calc 'a / (4 * b)' "$bc" "$el")" 0 0.06
check "C: flags include cpu_underused" \
	python3 -c 'import json, sys; sys.exit(0 if "cpu_underused" in json.loads(sys.argv[1]) else 1)' \
	"$(endrec "$C" flags)"

# ---- job D: uses what it asked ---------------------------------------------------------

D=$(submit --cpus-per-task=1 --mem=400M --time=1 "$JOBDIR/fit.sh" 2>"$T/sbatch-d.err")
check "sbatch accepts job D (id '$D')" test -n "$D"
check "job D ends and its end record is stored" wait_done "$D" 90
el=$(elapsed_raw "$D")
bc=$(burn_cpu "$D")
touched=$(kv "$(cat "$JOBDIR/touch.$D.out" 2>/dev/null)" touched_bytes)
note "job D: sacct ElapsedRaw $el s, burn $bc CPU-s, touchmem $touched bytes," \
	"job D: efficiency $(endrec "$D" efficiency), flags $(endrec "$D" flags)," \
	"job D: memory peak $(endrec "$D" usage.mem_peak_bytes) ($(endrec "$D" usage.mem_peak_source))"
check "D: touchmem touched 300 MiB (75 % of 400M)" eq "$touched" $((300 * MIB))
check "D: efficiency.cpu is burn's CPU / $el s (within 0.06), at least 0.65" \
	eval 'near "$(endrec "$D" efficiency.cpu)" "$(calc "a / b" "$bc" "$el")" 0 0.06 &&
		between "$(endrec "$D" efficiency.cpu)" 0.65 1.2'
check_peak "$D"
check "D: efficiency.memory at least 300 MiB / 400 MiB and at most 1" \
	between "$(endrec "$D" efficiency.memory)" 0.75 1
check "D: efficiency.time is sacct's elapsed / 60 s, at least 0.6" \
	eval 'near "$(endrec "$D" efficiency.time)" "$(calc "a / 60" "$el")" 0 0.04 &&
		between "$(endrec "$D" efficiency.time)" 0.6 1'
check "D: no flags" eq "$(endrec "$D" flags)" "[]"

# ---- job E: near its memory limit (the signal of a Slurm job's cgroup) ------------------
# Slurm's task/cgroup sets the job's v1 memory limit (ConstrainRAMSpace); the
# agent finds the job's memory cgroup from its processes' (no cgroup was
# registered by the prolog).  185 of 200 MiB touched: over 90 %, no OOM.
# Job D (about 79 % of 400M at its peak) must not raise it.
E=$(submit --cpus-per-task=1 --mem=200M --time=1 "$JOBDIR/near.sh" 2>"$T/sbatch-e.err")
check "sbatch accepts job E (id '$E')" test -n "$E"
check "job E ends and its end record is stored" wait_done "$E" 60
sig=$(q "select json_extract(json, '\$.evidence.mem_bytes') || ' ' ||
	json_extract(json, '\$.evidence.limit_bytes') from record where type = 'signal'
	and json_extract(json, '\$.kind') = 'memory_near_limit' and job_id = '$E';")
note "job E: memory_near_limit evidence (mem limit): ${sig:-none}"
check "E: one memory_near_limit signal, at least 90 % of the cgroup's 200 MiB limit" \
	eval 'set -- $sig; [ $# -eq 2 ] && [ "$2" -eq $((200 * MIB)) ] &&
		[ "$1" -ge $((200 * MIB * 9 / 10)) ] && [ "$1" -le "$2" ]'
check "E: no OOM kill" eq "$(q "select count(*) from record where type = 'signal'
	and json_extract(json, '\$.kind') = 'oom_kill' and job_id = '$E';")" 0
check "D: no memory_near_limit (at most ~79 % of its limit)" \
	eq "$(q "select count(*) from record where type = 'signal'
	and json_extract(json, '\$.kind') = 'memory_near_limit' and job_id = '$D';")" 0

# ---- a prices file and the instance's identity (no Slurm) ------------------------------
# tests/integration/fake-imds.py answers as EC2's IMDSv2 documents: a spot
# c5.2xlarge in eu-west-1.  The table's spot column prices the node; with
# the spot price unknown ('-') the cost is null with a note, never the
# on-demand price nor node_hour; a bad line is named by file and line.

stop_agent
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/imds"
python3 "$top_srcdir/tests/integration/fake-imds.py" "$PORT" "$T/imds" 2>>"$T/imds/fake.err" &
FAKE_PID=$!
BG_PIDS="$BG_PIDS $FAKE_PID"
for _ in $(seq 1 100); do
	[ -s "$T/imds/port" ] && break
	sleep 0.05
done
PRICES=$T/prices.tsv
printf '# jobtrace prices v1\neu-west-1\tc5.2xlarge\t0.34\t0.1234\tUSD\nus-east-1\tc5.2xlarge\t0.34\t0.1\tUSD\n' >"$PRICES"
sed -i '/^cloud = \|^docker = \|^cost = \|^waste = /d' "$CONF"
{
	echo "cloud = { imds = \"on\"; imds_url = \"http://127.0.0.1:$PORT\"; };"
	echo "docker = { enabled = false; };"
	echo "cost = { prices_file = \"$PRICES\"; node_hour = 3.6; node_cpus = 8; node_mem_gib = 16; };"
} >>"$CONF"
"$AGENT" --config "$CONF" --foreground >>"$T/agent.log" 2>&1 &
AGENT_PID=$!
for _ in $(seq 1 100); do
	[ "$(q "select count(*) from record where type = 'host' and
		json_extract(json, '\$.price.source') like 'prices:%';")" -ge 1 ] 2>/dev/null && break
	sleep 0.1
done
hp=$(q "select json_extract(json, '\$.price.per_hour') || ' ' || json_extract(json, '\$.price.source')
	|| ' ' || json_extract(json, '\$.cloud.lifecycle') from record where type = 'host'
	and json_extract(json, '\$.price.source') like 'prices:%' order by time desc limit 1;")
check "host record: the spot column of eu-west-1 c5.2xlarge ('$hp')" \
	eq "$hp" "0.1234 prices:$PRICES spot"

# Run job $1 as `jobtrace run` with 2 CPUs and 2 GiB, burning 1 s; sets
# RUN_WALL to the seconds the run took, measured around it.
run_job() {
	local t0 t1
	t0=$(now)
	cli run --job "$1" --cpus 2 --mem-mb 2048 -- "$WL/burn" 1 >/dev/null 2>&1
	t1=$(now)
	RUN_WALL=$(calc 'b - a' "$t0" "$t1")
	for _ in $(seq 1 50); do
		[ "$(endrec "$1" phase)" = end ] && return 0
		sleep 0.1
	done
	return 1
}

P1=cost-p1-$$
check "jobtrace run job $P1 ends with an end record" run_job "$P1"
ael=$(endrec "$P1" cost.elapsed_s)
note "job $P1: run took $RUN_WALL s, cost $(endrec "$P1" cost)"
check "$P1: elapsed between burn's 1 s and the run's $RUN_WALL s" between "$ael" 1 "$RUN_WALL"
check "$P1: price 0.1234 from the prices file, share max(2/8, 2/16) = 0.25" \
	eq "$(endrec "$P1" cost.price_per_hour) $(endrec "$P1" cost.share) $(endrec "$P1" cost.source)" \
	"0.1234 0.25 prices:$PRICES"
check "$P1: cost 0.1234 x 0.25 x elapsed / 3600" \
	near "$(endrec "$P1" cost.amount)" "$(calc 'a * 0.25 * b / 3600' 0.1234 "$ael")" 0 0.0000011

# the spot price unknown: null and a note, not the on-demand 0.34 nor node_hour
printf 'eu-west-1\tc5.2xlarge\t0.34\t-\tUSD\n' >"$PRICES"
cli reload >/dev/null 2>&1
P2=cost-p2-$$
check "jobtrace run job $P2 ends with an end record" run_job "$P2"
note "job $P2: cost $(endrec "$P2" cost)"
check "$P2: amount, price and source null" \
	eq "$(endrec "$P2" cost.amount) $(endrec "$P2" cost.price_per_hour) $(endrec "$P2" cost.source)" \
	"null null null"
check "$P2: the note says there is no spot price and why" \
	eq "$(endrec "$P2" cost.note)" \
	"no spot price of c5.2xlarge in eu-west-1 in the prices file (the on-demand price is not used for a spot instance)"
# a broken line: the file and line
printf '# x\neu-west-1\tc5.2xlarge\t0,34\t0.1\tUSD\n' >"$PRICES"
cli reload >/dev/null 2>&1
P3=cost-p3-$$
check "jobtrace run job $P3 ends with an end record" run_job "$P3"
check "status: cost.node_price: none, with the file and line" \
	eq "$(status_of cost.node_price)" \
	"none ($PRICES:2: on-demand price \"0,34\": want a decimal number >= 0 (like 0.096) or '-')"
check "$P3: the note names $PRICES:2" \
	eq "$(endrec "$P3" cost.note)" \
	"$PRICES:2: on-demand price \"0,34\": want a decimal number >= 0 (like 0.096) or '-'"

finish
