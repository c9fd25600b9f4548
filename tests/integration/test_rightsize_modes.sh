#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rightsize_modes.sh - `jobtrace rightsize` and `report` on Debian's
# Snakemake 7.21 in both of its modes, three runs each, against each
# rule's known peak and threads (issue 21, item 3).
#
# One Snakefile, run unchanged with unchanged command lines: rules m100,
# m300 (1 thread each) and m600 (threads: 2), each a shell of `touchmem
# N 200` (N MiB, held 0.2 s), then CPU work (`burn 0.5`, one thread; m600:
# `threads 2 1`, two threads of 0.5 s), between `date` stamps, then the
# job's memory cgroup's max_usage_in_bytes (cluster mode only).
#
#  1. cluster mode on the local Slurm (cgroup mode, jobtrace's prolog and
#     epilog): `snakemake -j 3 --cluster "sbatch ..."`, three times.  The
#     submitting sbatch processes carry the rule (the rules give it) and
#     are no instance: per rule 3 runs, 3 instances, each its job; the
#     used peak is the jobs' cgroup peak: from the largest
#     max_usage_in_bytes the jobs read at their end to + 16 MiB (what the
#     job script's python does after), and at least touchmem's VmHWM (its
#     own figure) and N MiB; requested: -c threads, --mem mem_mb.
#  2. local mode: `snakemake --cores 2`, three times.  Every rule's
#     processes carry the rule (from Snakemake's job log) and the run (the
#     log's name); per rule 3 runs, 3 instances, the used peak from the
#     largest VmHWM to + 8 MiB (the rule's bash and date beside it).
#  In both: memory recommended = ceil(1.2 x used) up to 100 MiB (>= 1.2 x
#  N MiB); cores = max(1, ceil(p95 cores used)): a single-threaded rule 1
#  (its p95 at most 1.0: one thread never shows more CPU than wall time),
#  and no rule more than its threads (p95 at most threads + 2 %); in
#  local mode the p95 is the rule's workloads' own CPU (getrusage, which
#  touchmem, burn and threads print) over the time between its shell's
#  date stamps, the largest of the 3 runs, to 5 % or 0.05 (the agent adds
#  the shell's bash, date and sh, and touchmem's exit, which frees the
#  memory after its getrusage: tens of ms over about 2 s); the
#  report's instances and memory peak by task are rightsize's (JSON);
#  the Snakemake profile holds the recommendation and `snakemake
#  --profile DIR -n` reads it (mem_mb, mem_mib, runtime, threads).
#  Whether m600 gets 2 cores depends on the CPU this shared VM leaves it
#  (its p95 is noted); the rule is checked, not the load.
#
# Needs root, kernel BTF, the sqlite3 CLI, snakemake, python3 and Slurm
# (scripts/install-deps.sh installs them).  Exit 0 pass, 1 fail, 77
# skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_rightsize_modes.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/slurm/slurm-env.sh"

slurm_env_need
need_built "$AGENT" "$CLI" "$WL/touchmem" "$WL/burn" "$WL/threads"
need_commands snakemake python3
start_watchdog 600

extra_cleanup() {
	slurm_env_stop
}

W=$T/wf
RULES="m100 m300 m600"
mkdir -p "$W"
chmod 0755 "$T" "$W"

# MiB and threads of a rule.
mib_of() { echo "${1#m}"; }
threads_of() { [ "$1" = m600 ] && echo 2 || echo 1; }

cat >"$W/cgpeak.sh" <<'EOF'
#!/bin/sh
# the job's memory cgroup (v1, Slurm's job_N level) at its highest so far
cg=$(sed -n 's|^[0-9]*:memory:\(.*/job_[0-9]*\).*|\1|p' /proc/self/cgroup)
[ -n "$cg" ] && echo "cgroup_peak_bytes=$(cat "/sys/fs/cgroup/memory$cg/memory.max_usage_in_bytes")"
exit 0
EOF
{
	echo 'rule all:'
	echo '    input: "out/m100.txt", "out/m300.txt", "out/m600.txt"'
	for r in $RULES; do
		work="$WL/burn 0.5"
		[ "$r" = m600 ] && work="$WL/threads 2 1"
		cat <<EOF

rule $r:
    output: "out/$r.txt"
    threads: $(threads_of $r)
    resources: mem_mb=$(($(mib_of $r) + 900))
    shell: "echo start=\$(date +%s.%N) > {output}; $WL/touchmem $(mib_of $r) 200 >> {output}; $work >> {output}; echo end=\$(date +%s.%N) >> {output}; sh $W/cgpeak.sh >> {output}"
EOF
	done
} >"$W/Snakefile"

# Task $2's members of the JSON file $1 ("tasks" of rightsize, else
# "by_task" of report) as "key=value" words, dotted keys flattened:
# runs=3 used_p95.cores=0.8 ...
task_kv() {
	python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))
t = [x for x in r.get("tasks", r.get("by_task", [])) if x.get("task") == sys.argv[2]]
def flat(p, v):
    if isinstance(v, dict):
        for k, w in v.items():
            flat(p + k + ".", w)
    else:
        print("%s=%s" % (p[:-1], "null" if v is None else v), end=" ")
flat("", t[0] if t else {})' "$1" "$2"
}

# The largest KEY=value of rule $2's outputs of mode $1 (the 3 runs).
ref_max() {
	cat "$T/$1".[123]."$2".txt 2>/dev/null | sed -n "s/.*$3=\([0-9.]*\).*/\1/p" |
		sort -g | tail -n 1
}

# The largest of rule $1's local runs' cores: its workloads' own CPU
# (getrusage: burn's and threads' cpu_s, touchmem's cpu_seconds) over the
# time between its shell's date stamps.
ref_cores() {
	for i in 1 2 3; do
		awk '{ for (k = 1; k <= NF; k++) { split($k, v, "=")
			if (v[1] == "cpu_s" || v[1] == "cpu_seconds") c += v[2]
			if (v[1] == "start") s = v[2]
			if (v[1] == "end") e = v[2] } }
			END { if (e > s) printf "%.6f\n", c / (e - s) }' "$T/local.$i.$1.txt"
	done | sort -g | tail -n 1
}

# What rightsize recommends for a p95 peak of $1 bytes: ceil(1.2 x peak)
# up to a multiple of 100 MiB (exact integer arithmetic).
want_mem() {
	python3 -c 'import sys
p = int(sys.argv[1]); s = 100 << 20
need = (p * 6 + 4) // 5
print(max(s, (need + s - 1) // s * s))' "$1"
}

# Check the rightsize JSON $1 of mode $2 (cluster or local) against the
# rules' known peaks and threads and the outputs' references.
check_rightsize() {
	local js=$1 mode=$2 r n t v peak lo hi rec cores want src
	for r in $RULES; do
		n=$(mib_of "$r")
		t=$(threads_of "$r")
		v=$(task_kv "$js" "$r")
		note "$mode $r: $v"
		check "$mode $r: 3 runs, 3 instances" \
			eq "$(kv "$v" runs):$(kv "$v" instances)" "3:3"
		peak=$(kv "$v" used_p95.mem_peak_bytes)
		src=$(kv "$v" used_p95.mem_source)
		hwm=$(ref_max "$mode" "$r" vmhwm_bytes)
		if [ "$mode" = cluster ]; then
			lo=$(ref_max "$mode" "$r" cgroup_peak_bytes)
			hi=$((${lo:-0} + 16 * MIB))
			check "$mode $r: the job's peak $peak ($src) is its cgroup's max_usage_in_bytes read by the jobs ($lo) to + 16 MiB, above touchmem's VmHWM $hwm and $n MiB" \
				eval '[ "$src" = job ] && between "$peak" "$lo" "$hi" &&
					[ "$peak" -ge "${hwm:-0}" ] && [ "$peak" -ge $((n * MIB)) ]'
			check "$mode $r: requested -c $t, --mem $((n + 900)) MiB" \
				eq "$(kv "$v" requested.cpus):$(kv "$v" requested.mem_bytes)" \
				"$t:$(((n + 900) * MIB))"
		else
			check "$mode $r: the peak $peak ($src) is touchmem's largest VmHWM $hwm (>= $n MiB) to + 8 MiB" \
				eval '[ "$src" = processes ] && [ "${hwm:-0}" -ge $((n * MIB)) ] &&
					between "$peak" "$hwm" "$((hwm + 8 * MIB))"'
		fi
		rec=$(kv "$v" recommendation.mem_bytes)
		want=$(want_mem "$peak")
		check "$mode $r: memory recommended $rec = ceil(1.2 x $peak) up to 100 MiB ($want), at least 1.2 x $n MiB" \
			eval '[ "$rec" = "$want" ] && [ "$rec" -ge $((n * MIB * 6 / 5)) ]'
		cores=$(kv "$v" used_p95.cores)
		rec=$(kv "$v" recommendation.cpus)
		want=$(awk -v c="$cores" 'BEGIN { n = int(c); if (n < c) n++; if (n < 1) n = 1; print n }')
		check "$mode $r ($t thread(s)): p95 cores $cores at most $t + 2 %, recommended $rec = max(1, ceil(p95))" \
			eval '[ "$rec" = "$want" ] && awk -v c="$cores" -v t="$t" "BEGIN { exit !(c > 0 && c <= t * 1.02) }"'
		if [ "$t" = 1 ]; then
			check "$mode $r: single-threaded: p95 cores $cores <= 1.0, 1 core recommended" \
				eval '[ "$rec" = 1 ] && awk -v c="$cores" "BEGIN { exit !(c <= 1.0) }"'
		fi
		[ "$mode" = local ] || continue
		want=$(ref_cores "$r")
		check "$mode $r: p95 cores $cores is the rule's own CPU (getrusage) over its wall (date), the largest of 3 runs, $want, to 5 % or 0.05" \
			near "$cores" "$want" 5 0.05
	done
}

# The report's instances and memory peaks by task (JSON $1) are
# rightsize's (JSON $2): p95 of 3 is the largest.
check_report() {
	local mode=$1 rj=$2 rs=$3 r a b bad=
	for r in $RULES; do
		a=$(task_kv "$rj" "$r")
		b=$(task_kv "$rs" "$r")
		[ -n "$(kv "$a" instances)" ] &&
			[ "$(kv "$a" instances):$(kv "$a" mem_peak_bytes)" = \
			"$(kv "$b" instances):$(kv "$b" used_p95.mem_peak_bytes)" ] ||
			bad="$bad $r"
	done
	check "$mode: report's instances and memory peak by task are rightsize's (${bad:-all three})" \
		test -z "$bad"
}

# Write the Snakemake profile of rightsize --since @$1 into $2 and check
# that `snakemake --profile $2 -n` sets every rule as it says.
check_profile() {
	local since=$1 dir=$2 mode=$3 r mb mib rt th bad=
	mkdir -p "$dir"
	cli rightsize --since "@$since" --format snakemake >"$dir/config.yaml" 2>"$dir/err"
	note "$(cat "$dir/config.yaml")"
	(cd "$W" && snakemake --profile "$dir" --cores 2 -n --forceall >"$dir/dry.out" 2>&1)
	check "$mode: snakemake --profile DIR -n accepts the profile (exit $?)" \
		grep -q "^rule m600:" "$dir/dry.out"
	for r in $RULES; do
		mb=$(sed -n "s/^  - \"$r:mem_mb=\(.*\)\"$/\1/p" "$dir/config.yaml")
		mib=$(sed -n "s/^  - \"$r:mem_mib=\(.*\)\"$/\1/p" "$dir/config.yaml")
		rt=$(sed -n "s/^  - \"$r:runtime=\(.*\)\"$/\1/p" "$dir/config.yaml")
		th=$(sed -n "s/^  - \"$r=\(.*\)\"$/\1/p" "$dir/config.yaml")
		[ -n "$mb" ] && [ -n "$th" ] && [ "$mib" -ge $(($(mib_of "$r") * 6 / 5)) ] &&
			[ "$th" -le "$(threads_of "$r")" ] || { bad="$bad $r(profile)"; continue; }
		awk -v r="$r" -v want="resources: tmpdir=/tmp, mem_mb=$mb, mem_mib=$mib, runtime=$rt" '
			$0 == "rule " r ":" { inr = 1; next }
			inr && index($0, want) { ok = 1 }
			/^$/ { inr = 0 }
			END { exit !ok }' "$dir/dry.out" || bad="$bad $r(dry-run)"
		awk -v r="$r" -v th="$th" '$1 == r && $3 == th && $4 == th { ok = 1 }
			END { exit !ok }' "$dir/dry.out" || bad="$bad $r(threads)"
	done
	check "$mode: the profile's mem_mb, mem_mib (>= 1.2 x N MiB), runtime and threads (<= the rule's) are what snakemake -n sets (${bad:-all})" \
		test -z "$bad"
}

# ---- Slurm and the agent --------------------------------------------------------
SLURM_ENV_PROLOG=$top_srcdir/slurm/prolog
SLURM_ENV_EPILOG=$top_srcdir/slurm/epilog
SLURM_ENV_JOBTRACE=$CLI
start_slurm_and_agent

# ---- 1. cluster mode ---------------------------------------------------------------
T0=$(now)
TASKS="job_task in ('m100', 'm300', 'm600')"
for i in 1 2 3; do
	s=$(now)
	(cd "$W" && CI=true snakemake -j 3 --forceall --latency-wait 10 \
		--cluster "sbatch --parsable -c {threads} --mem={resources.mem_mb} -o $W/slurm-%j.out" \
		>"$T/cluster.$i.out" 2>&1)
	st=$?
	check "cluster run $i: snakemake exits 0 (got $st, $(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s)" eq "$st" 0
	[ "$st" = 0 ] || note "$(tail -n 20 "$T/cluster.$i.out")"
	for r in $RULES; do cp "$W/out/$r.txt" "$T/cluster.$i.$r.txt" 2>/dev/null; done
	check "cluster run $i: the 3 jobs' end records and touchmem processes are stored" \
		wait_q "select count(*) from record where type = 'job' and json_extract(json, '\$.phase') = 'end'
			and job_id in (select job_id from process where since_time >= $T0 and $TASKS and comm = 'touchmem');
			select count(*) from process where since_time >= $T0 and $TASKS and comm = 'touchmem' and job_id is not null;" \
		"$((3 * i))
$((3 * i))" 30
done
sb=$(q "select count(*) || ':' || count(distinct job_task) || ':' || count(job_id) from process
	where since_time >= $T0 and tool_name = 'sbatch' and $TASKS;")
check "cluster: the 9 submitting sbatch processes carry their rule (3 rules), outside any job ($sb)" eq "$sb" "9:3:0"
cli rightsize --since "@$T0" --format json >"$T/rs.cluster.json" 2>"$T/rs.cluster.err"
note "$(cli rightsize --since "@$T0" 2>&1)"
check_rightsize "$T/rs.cluster.json" cluster
cli report --since "@$T0" --format json --no-tree >"$T/report.cluster.json" 2>&1
check_report cluster "$T/report.cluster.json" "$T/rs.cluster.json"
check_profile "$T0" "$T/prof.cluster" cluster

# ---- 2. local mode -------------------------------------------------------------------
sleep 1		# the cluster's last records end before T1
T1=$(now)
for i in 1 2 3; do
	s=$(now)
	(cd "$W" && snakemake --cores 2 --forceall >"$T/local.$i.out" 2>&1)
	st=$?
	check "local run $i: snakemake --cores 2 exits 0 (got $st, $(awk -v a="$s" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s)" eq "$st" 0
	[ "$st" = 0 ] || note "$(tail -n 20 "$T/local.$i.out")"
	for r in $RULES; do cp "$W/out/$r.txt" "$T/local.$i.$r.txt" 2>/dev/null; done
	# the rules' bash -c (each rule's last to end) and touchmem N in rule
	# mN, burn in m100 and m300, threads in m600
	check "local run $i: the 3 rules' bash and 6 workloads are stored, each with its rule" \
		wait_q "select count(*) from process where since_time >= $T1 and (
			(comm = 'bash' and $TASKS and json_extract(argv, '\$[1]') = '-c')
			or (comm = 'touchmem' and job_task = 'm' || json_extract(argv, '\$[1]'))
			or (comm = 'burn' and job_task in ('m100', 'm300'))
			or (comm = 'threads' and job_task = 'm600'));" "$((9 * i))" 20
done
logs=$(ls "$W/.snakemake/log" | sed 's/\.snakemake\.log$//' | sort | tail -n 3 | tr '\n' ' ')
runs=$(q "select group_concat(r, ' ') from (select distinct job_run as r from process
	where since_time >= $T1 and $TASKS order by r);")
check "local: the rules' processes carry the run of their Snakemake invocation, its log's name ($runs = ${logs% })" \
	eq "$runs" "${logs% }"
cli rightsize --since "@$T1" --format json >"$T/rs.local.json" 2>"$T/rs.local.err"
note "$(cli rightsize --since "@$T1" 2>&1)"
check_rightsize "$T/rs.local.json" local
cli report --since "@$T1" --format json --no-tree >"$T/report.local.json" 2>&1
check_report local "$T/report.local.json" "$T/rs.local.json"
cli report --since "@$T1" --no-tree >"$T/report.local.txt" 2>&1
check "local: the text report has the three rules by workflow task" \
	eval '[ "$(sed -n "/^By workflow task/,/^\$/p" "$T/report.local.txt" | grep -cE "^  m(100|300|600) ")" = 3 ]'
check_profile "$T1" "$T/prof.local" local
note "the test took $SECONDS s"

finish
