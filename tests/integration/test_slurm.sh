#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_slurm.sh - the Slurm prolog, epilog and SPANK plugin against a real
# one-node Slurm 22.05 (tests/slurm/slurm-env.sh) and the real agent, in two
# setups: "cgroup" (proctrack/cgroup, task/cgroup, PrologFlags=Alloc,Contain)
# and "linuxproc" (proctrack/linuxproc, task/none: no job cgroups, so the
# agent must use the slurmstepd ancestry).
#
# For each setup, as the unprivileged user jtuser (created if missing and
# removed again):
#   job A  sbatch --trace-run/--trace-pipeline (SPANK) --account --comment:
#          a fork tree in the batch step, `burn` as step 0, a step that
#          exits 3, `touchmem` as step 2.  Every process row must carry the
#          job id, its step, the user, the account slurmctld reports, the
#          run, pipeline and cost center; the epilog must close the job.
#          CPU time and peak RSS are compared with sstat and with what the
#          programs measured themselves.
#   job B  the run and pipeline only as job environment variables
#          (sbatch --export=ALL,JOBTRACE_RUN_ID=...), read by the plugin in
#          slurmstepd.
#   non-root job-start/job-end/job-update on the control socket: refused.
#   job C  with the agent stopped: runs, the prolog returns in < 1 s, the
#          node is not drained.
# A canary planted in job A's environment and comment must reach no record,
# log or spool file of the agent.
#
# Needs root, kernel BTF, the sqlite3 CLI and the network once (apt-get
# installs slurm-wlm, munge, libslurm-dev when missing).  Exit 0 pass,
# 1 fail, 77 skipped, 99 hard error.  Ends with "N passed, M failed".
#
# Run:  top_builddir=BUILD top_srcdir=SRC bash tests/integration/test_slurm.sh
# JOBTRACE_TEST_KEEP=1 keeps the temporary folder; SLURM_TEST_MODES="cgroup"
# runs one setup only; SLURM_TEST_PLUGIN=none runs without the SPANK plugin
# (run and pipeline then come from words in the job comment).

set -u

. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/slurm/slurm-env.sh"

slurm_env_need
need_built "$AGENT" "$CLI" "$WL/burn" "$WL/forktree" "$WL/touchmem"
if ! "$CLI" job-start --help >/dev/null 2>&1; then
	echo "# error: $CLI has no job-start subcommand"
	exit 99
fi

MODES=${SLURM_TEST_MODES:-cgroup linuxproc}
JTUSER=jtuser
CREATED_USER=
CANARY=jtcanary$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')

# Slurm's daemons, cgroups and folder, and the test user if we made it.
extra_cleanup() {
	slurm_env_stop
	if [ -n "$CREATED_USER" ]; then
		userdel "$JTUSER" 2>/dev/null
	fi
}
start_watchdog 230

# jobs run as jtuser: it must reach the workloads, the CLI and the socket
if ! id -u "$JTUSER" >/dev/null 2>&1; then
	if ! useradd --system --no-create-home --shell /usr/sbin/nologin \
		"$JTUSER"; then
		echo "# error: cannot create user $JTUSER"
		exit 99
	fi
	CREATED_USER=1
fi
JTUID=$(id -u "$JTUSER")
chmod 0755 "$T"
printf '%s\n' "$CANARY" >"$T/canary.pat"
for f in "$WL/burn" "$CLI"; do
	if ! runuser -u "$JTUSER" -- test -x "$f"; then
		echo "# error: $JTUSER cannot execute $f (a parent folder is private)"
		exit 99
	fi
done

# the plugin: built by make, else compiled here when Slurm's headers exist
PLUGIN=
if [ "${SLURM_TEST_PLUGIN:-}" = none ]; then
	note "SLURM_TEST_PLUGIN=none: no SPANK plugin; run and pipeline come from the job comment"
elif [ -f "$top_builddir/slurm/spank_jobtrace.so" ]; then
	PLUGIN=$top_builddir/slurm/spank_jobtrace.so
elif [ -r /usr/include/slurm/spank.h ] && command -v gcc >/dev/null; then
	if gcc -shared -fPIC -O2 -Wall -o "$T/spank_jobtrace.so" \
		"$top_srcdir/slurm/spank_jobtrace.c" 2>"$T/spank-build.log"; then
		PLUGIN=$T/spank_jobtrace.so
	else
		note "the SPANK plugin does not compile:" "$(head -n 20 "$T/spank-build.log")"
	fi
fi
[ "${SLURM_TEST_PLUGIN:-}" = none ] ||
	check "the SPANK plugin is available (${PLUGIN:-none})" test -n "$PLUGIN"

# ---- helpers --------------------------------------------------------------------

# Field KEY of `scontrol show job -o ID` ("" when absent).
sjob() {
	scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' |
		sed -n "s/^$2=//p" | head -n 1
}

# Submit as jtuser; prints the job id.  Arguments go to sbatch.  runuser
# keeps the environment (SLURM_CONF, and the canary of job A).
submit() {
	runuser -u "$JTUSER" -- \
		sbatch --parsable --chdir="$JOBDIR" --output="$JOBDIR/%j.out" \
		"$@" | cut -d';' -f1
}

# Wait until job $1 ended and its epilog ran (at most $2 s); print its state.
wait_job() {
	local st=
	for _ in $(seq 1 $(($2 * 5))); do
		st=$(sjob "$1" JobState)
		case $st in
		PENDING | RUNNING | CONFIGURING | COMPLETING | "") ;;
		*)
			if grep -q "^epilog $1 " "$SLURM_ENV_HOOKLOG"; then
				echo "$st"
				return 0
			fi
			;;
		esac
		sleep 0.2
	done
	echo "${st:-unknown}"
	return 1
}

# While job $1 runs, sample steps 0 and 2 with sstat: "STEP|AveCPU|MaxRSS".
sstat_poll() {
	local s out
	for _ in $(seq 1 300); do
		case $(sjob "$1" JobState) in
		PENDING | RUNNING | CONFIGURING) ;;
		*) return 0 ;;
		esac
		for s in 0 2; do
			out=$(sstat -n -P -j "$1.$s" --format=AveCPU,MaxRSS 2>/dev/null |
				head -n 1)
			[ -n "$out" ] && echo "$s|$out"
		done
		sleep 0.2
	done
}

# While job $1 runs, read the charge peak of its memory cgroup and of its
# step 2's, as the files show them (v1 memory.max_usage_in_bytes, v2
# memory.peak): the highest values seen, "JOB STEP2", on one line at the end.
cg_poll() {
	local j=0 s=0 v f d
	for _ in $(seq 1 600); do
		case $(sjob "$1" JobState) in
		PENDING | RUNNING | CONFIGURING) ;;
		*) break ;;
		esac
		for d in /sys/fs/cgroup/memory/slurm*/uid_*/job_"$1" \
			/sys/fs/cgroup/system.slice/*slurmstepd.scope/job_"$1"; do
			for f in "$d"/memory.max_usage_in_bytes "$d"/memory.peak; do
				[ -r "$f" ] || continue
				v=$(cat "$f" 2>/dev/null) && [ "${v:-0}" -gt "$j" ] && j=$v
				f=$d/step_2/${f##*/}
				v=$(cat "$f" 2>/dev/null) && [ "${v:-0}" -gt "$s" ] && s=$v
			done
		done
		sleep 0.1
	done
	echo "$j $s"
}

# True if A is within PCT percent of B and not below it.
near_not_below() {
	near "$1" "$2" "$3" 0 && awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 >= b + 0) }'
}

# Field $2 (a path like usage.mem_peak_source, or usage.steps.2.cpu_s for
# step "2") of the JSON job record $1; "null" when absent.
usage_of() {
	printf '%s' "$1" | python3 -c '
import json, sys
v = json.load(sys.stdin)
for k in sys.argv[1].split("."):
    if isinstance(v, list):
        v = next((x for x in v if x.get("step") == k), None)
    elif isinstance(v, dict):
        v = v.get(k)
    if v is None:
        break
print("null" if v is None else v)' "$2"
}

# Seconds in a Slurm time "[D-][HH:]MM:SS[.mmm]".
slurm_secs() {
	awk -v t="$1" 'BEGIN {
		if (t == "") exit 1
		d = 0; if (index(t, "-")) { d = substr(t, 1, index(t, "-") - 1); t = substr(t, index(t, "-") + 1) }
		n = split(t, a, ":"); s = 0
		for (i = 1; i <= n; i++) s = s * 60 + a[i]
		printf "%.3f\n", s + d * 86400 }'
}

# Count of process rows of job $1 that match the SQL condition $2.
nrows() {
	q "select count(*) from process where job_id='$1' and ($2);"
}

# Duration (s) of hook $1 ("prolog"/"epilog") for job $2 from the hook log.
hook_secs() {
	awk -v h="$1" -v j="$2" '$1 == h && $2 == j { printf "%.3f\n", $4 - $3; exit }' \
		"$SLURM_ENV_HOOKLOG"
}

# Wait (10 s max) until the agent stored job $1's end record and a row for
# each pid in $2.
wait_records() {
	local p missing
	for _ in $(seq 1 50); do
		missing=
		for p in $2; do
			[ -n "$(row "$p" job_id)" ] || missing="$missing $p"
		done
		if [ -z "$missing" ] &&
			cli export --job "$1" --format ndjson 2>/dev/null |
			grep '"type":"job"' | grep -q '"end_time":"'; then
			return 0
		fi
		sleep 0.2
	done
	return 1
}

# ---- one setup ------------------------------------------------------------------------

# Run every check against a fresh Slurm in mode $1, job ids from $2.
run_mode() {
	local mode=$1 first=$2 m="[$1]"
	local A B C st pids p bad steps want acct tree burn_pid exit3_pid touch_pid
	local batch_pid ext sp_cpu sp_rss self_cpu jt_cpu self_rss jt_rss
	local exp before after err rc n pt et cg_job cg_step2 src peak s2src
	local s2peak sum

	SLURM_ENV_PROLOG=$top_srcdir/slurm/prolog
	SLURM_ENV_EPILOG=$top_srcdir/slurm/epilog
	SLURM_ENV_JOBTRACE=$CLI
	SLURM_ENV_JOBTRACE_CONFIG=$CONF
	SLURM_ENV_PLUGIN=$PLUGIN
	SLURM_ENV_PLUGIN_ARGS="jobtrace=$CLI config=$CONF strict=0"
	SLURM_ENV_FIRST_JOB_ID=$first
	SLURM_ENV_ACCT=
	if ! slurm_env_start "$mode" "$T/slurm-$mode"; then
		check "$m Slurm starts and the node becomes idle" false
		slurm_env_stop
		return
	fi
	check "$m Slurm starts and the node becomes idle (jobacct_gather/$SLURM_ENV_ACCT)" true
	JOBDIR=$SLURM_ENV_DIR/jobs
	COMMENT="cost-center=cc-7"
	[ -n "$PLUGIN" ] || COMMENT="trace-run=RUN42 trace-pipeline=demo-pipe $COMMENT"
	mkdir -p "$JOBDIR"
	chmod 1777 "$JOBDIR"

	# the agent inherits SLURM_CONF, for its background scontrol
	if ! start_agent "rules_dir = \"$top_srcdir/lua-rules\";"; then
		slurm_env_stop
		return
	fi

	# the comment (with the canary) sits in the script, not in any argv:
	# argv is recorded by design
	cat >"$JOBDIR/a.sh" <<-EOF
		#!/bin/sh
		#SBATCH --comment="$COMMENT password=$CANARY"
		echo "batch pid=\$\$"
		"$WL/forktree" 2 2 >tree.\$SLURM_JOB_ID.out
		srun -n1 "$WL/burn" 3 >burn.\$SLURM_JOB_ID.out
		srun -n1 sh -c 'echo "pid=\$\$"; exit 3' >exit3.\$SLURM_JOB_ID.out || true
		srun -n1 "$WL/touchmem" 200 2000 >touch.\$SLURM_JOB_ID.out
		exit 0
	EOF
	cat >"$JOBDIR/b.sh" <<-EOF
		#!/bin/sh
		echo "batch pid=\$\$"
		srun -n1 "$WL/burn" 0.2 >burn.\$SLURM_JOB_ID.out
		"$WL/forktree" 1 2 >tree.\$SLURM_JOB_ID.out
	EOF
	cat >"$JOBDIR/c.sh" <<-EOF
		#!/bin/sh
		srun -n1 /bin/true
		echo done
	EOF
	chmod 0755 "$JOBDIR"/*.sh

	# ---- job A: SPANK options (or comment words), account, canary ----
	if [ -n "$PLUGIN" ]; then
		A=$(JT_SECRET=$CANARY submit --account=projA --trace-run=RUN42 \
			--trace-pipeline=demo-pipe "$JOBDIR/a.sh" 2>"$T/sbatch-a.err")
	else
		A=$(JT_SECRET=$CANARY submit --account=projA "$JOBDIR/a.sh" \
			2>"$T/sbatch-a.err")
	fi
	check "$m sbatch accepts job A as $JTUSER (id '$A')" test -n "$A"
	[ -n "$A" ] || note "$(cat "$T/sbatch-a.err")"
	# ---- job B: run and pipeline only in the job's environment ----
	B=$(submit --export=ALL,JOBTRACE_RUN_ID=RUNENV,JOBTRACE_PIPELINE=env-pipe \
		"$JOBDIR/b.sh" 2>"$T/sbatch-b.err")
	check "$m sbatch accepts job B (id '$B')" test -n "$B"
	[ -n "$B" ] || note "$(cat "$T/sbatch-b.err")"

	sstat_poll "$A" >"$T/sstat.$mode" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
	cg_poll "$A" >"$T/cgpoll.$mode" 2>&1 &
	BG_PIDS="$BG_PIDS $!"
	st=$(wait_job "$A" 60)
	check "$m job A completes (state $st, exit $(sjob "$A" ExitCode))" \
		eq "$st:$(sjob "$A" ExitCode)" "COMPLETED:0:0"
	st=$(wait_job "$B" 30)
	check "$m job B completes (state $st)" eq "$st" COMPLETED

	batch_pid=$(sed -n 's/^batch pid=//p' "$JOBDIR/$A.out")
	tree=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$JOBDIR/tree.$A.out" | tr '\n' ' ')
	burn_pid=$(kv "$(cat "$JOBDIR/burn.$A.out")" pid)
	exit3_pid=$(sed -n 's/^pid=//p' "$JOBDIR/exit3.$A.out")
	touch_pid=$(kv "$(cat "$JOBDIR/touch.$A.out")" pid)
	pids="$batch_pid $tree $burn_pid $exit3_pid $touch_pid"
	note "$m what slurmd passed the prolog (names): $(grep -E '^(SLURM|SPANK|CUDA)' "$SLURM_ENV_DIR/hooks/prolog.$A.env" 2>/dev/null | tr '\n' ' ')" \
		"$m ... and the epilog: $(grep -E '^(SLURM|SPANK|CUDA)' "$SLURM_ENV_DIR/hooks/epilog.$A.env" 2>/dev/null | tr '\n' ' ')"
	note "$m job A pids: batch $batch_pid, tree $tree, burn $burn_pid," \
		"exit3 $exit3_pid, touchmem $touch_pid"
	wait_records "$A" "$pids"
	check "$m the agent stored a row for each of job A's $(echo "$pids" | wc -w) programs and its end record" \
		eq "$?" 0

	# job id and step of each known process
	bad=
	for p in $pids; do
		[ "$(row "$p" job_id)" = "$A" ] || bad="$bad $p:'$(row "$p" job_id)'"
	done
	check "$m every program of job A has job_id $A${bad:+ (wrong:$bad)}" test -z "$bad"
	bad=
	for p in $batch_pid $tree; do
		[ "$(row "$p" job_step)" = batch ] || bad="$bad $p:'$(row "$p" job_step)'"
	done
	check "$m the batch shell and the fork tree are in step 'batch'${bad:+ (wrong:$bad)}" \
		test -z "$bad"
	steps="$(row "$burn_pid" job_step) $(row "$exit3_pid" job_step) $(row "$touch_pid" job_step)"
	check "$m burn is in step 0, the failing step in 1, touchmem in 2 (got '$steps')" \
		eq "$steps" "0 1 2"
	check "$m the failing step's shell exited 3" eq "$(row "$exit3_pid" exit_code)" 3
	steps=$(q "select job_step || ':' || count(*) from process where job_id='$A' group by job_step order by job_step;" | tr '\n' ' ')
	note "$m job A rows per step: $steps"
	if [ "$mode" = cgroup ]; then
		ext=$(q "select job_step from process where job_id='$A' and argv like '%100000000%' limit 1;")
		check "$m the extern step's 'sleep 100000000' is in step 'extern' ('$ext')" eq "$ext" extern
	fi

	# user, account, workflow fields on every row of the job
	n=$(nrows "$A" 1)
	check "$m all $n rows of job A: job_user $JTUSER" \
		eq "$(nrows "$A" "coalesce(job_user,'') <> '$JTUSER'")" 0
	check "$m burn's row has uid $JTUID" eq "$(row "$burn_pid" uid)" "$JTUID"
	acct=$(sjob "$A" Account)
	want=$acct
	[ "$want" = "(null)" ] && want=
	check "$m all rows of job A: job_account '$want' (slurmctld says Account=$acct)" \
		eq "$(nrows "$A" "coalesce(job_account,'') <> '$want'")" 0
	check "$m all rows of job A: job_run RUN42, job_pipeline demo-pipe" \
		eq "$(nrows "$A" "coalesce(job_run,'') <> 'RUN42' or coalesce(job_pipeline,'') <> 'demo-pipe'")" 0
	check "$m all rows of job A: job_cost_center cc-7 (from the comment)" \
		eq "$(nrows "$A" "coalesce(job_cost_center,'') <> 'cc-7'")" 0
	bad=$(q "select pid || ':' || coalesce(job_step,'') || ':' || coalesce(job_user,'') || ':' || coalesce(job_run,'') || ':' || coalesce(job_account,'') || ':' || coalesce(job_cost_center,'') || ':' || coalesce(comm,'') from process where job_id='$A' and (coalesce(job_user,'') <> '$JTUSER' or coalesce(job_run,'') <> 'RUN42' or coalesce(job_account,'') <> '$want' or coalesce(job_cost_center,'') <> 'cc-7') limit 5;")
	[ -n "$bad" ] && note "$m rows that differ (pid:step:user:run:account:cost:comm):" "$bad"

	# the job record
	cli export --job "$A" --format ndjson >"$T/export.$A" 2>&1
	exp=$(grep '"type":"job"' "$T/export.$A" | grep '"end_time":"' | tail -n 1)
	check "$m export --job $A has a job record with an end time" test -n "$exp"
	if [ -n "$exp" ]; then
		check "$m the job record has partition debug, 1 CPU, exit code 0, user $JTUSER" \
			eq "$(printf '%s' "$exp" | grep -c '"partition":"debug"')$(printf '%s' "$exp" | grep -c '"cpus":1[,}]')$(printf '%s' "$exp" | grep -c '"exit_code":0')$(printf '%s' "$exp" | grep -c "\"user\":\"$JTUSER\"")" 1111
		note "$m job record: $(printf '%s' "$exp" | cut -c1-600)"
	else
		note "$m export: $(grep '"type":"job"' "$T/export.$A" | head -n 3)"
	fi
	# what the job used: its memory cgroup's peak (or the sampled sum of
	# RSS without one), per step too; CPU adds up
	if [ -n "$exp" ]; then
		sleep 0.5	# cg_poll ends with the job
		read -r cg_job cg_step2 <"$T/cgpoll.$mode"
		src=$(usage_of "$exp" usage.mem_peak_source)
		peak=$(usage_of "$exp" usage.mem_peak_bytes)
		s2src=$(usage_of "$exp" usage.steps.2.mem_peak_source)
		s2peak=$(usage_of "$exp" usage.steps.2.mem_peak_bytes)
		note "$m usage: $(printf '%s' "$exp" | sed -n 's/.*"usage":\(.*\)}$/\1/p' | cut -c1-700)" \
			"$m the test's own reads of the cgroup files: job peak ${cg_job:-0} B, step 2 peak ${cg_step2:-0} B"
		sum=$(q "select printf('%.6f', sum(cpu_user_s + cpu_sys_s)) from process where job_id='$A';")
		check "$m usage.cpu_s $(usage_of "$exp" usage.cpu_s) within 1% of the sum over job A's process rows ${sum:-?}" \
			near "$(usage_of "$exp" usage.cpu_s)" "$sum" 1 0.001
		if [ "$mode" = cgroup ]; then
			want=cgroup_v1
			[ "$(awk '$1 == "memory" { print $2 }' /proc/cgroups)" = 0 ] && want=cgroup_v2
			check "$m job A's mem_peak_source '$src' and step 2's '$s2src' are $want" \
				eq "$src:$s2src" "$want:$want"
			check "$m job A's mem_peak_bytes ${peak:-?} within 5% of its cgroup's peak ${cg_job:-?} read by the test (and not below it)" \
				near_not_below "$peak" "$cg_job" 5
			check "$m step 2's mem_peak_bytes ${s2peak:-?} within 5% of step_2's cgroup peak ${cg_step2:-?} read by the test" \
				near "$s2peak" "$cg_step2" 5 0
		else
			# no job cgroup: the highest sampled sum of the job's RSS,
			# at least touchmem's 200 MiB while it held them
			check "$m job A's mem_peak_source is 'samples' (no job cgroup), step 2's too ('$src', '$s2src')" \
				eq "$src:$s2src" "samples:samples"
			check "$m step 2's sampled peak ${s2peak:-?} within 10% of touchmem's VmHWM $(kv "$(cat "$JOBDIR/touch.$A.out")" vmhwm_bytes)" \
				near "$s2peak" "$(kv "$(cat "$JOBDIR/touch.$A.out")" vmhwm_bytes)" 10 0
		fi
	fi
	check "$m export --job $A lists job A's processes" \
		test "$(grep -c '"type":"process"' "$T/export.$A")" -ge "$(echo "$pids" | wc -w)"

	# job B: workflow fields from the job's environment (plugin in slurmstepd)
	if [ -n "$PLUGIN" ]; then
		n=$(nrows "$B" "coalesce(job_step,'') <> 'extern'")
		check "$m job B's $n rows (extern step aside) carry job_run RUNENV, job_pipeline env-pipe (JOBTRACE_RUN_ID, JOBTRACE_PIPELINE)" \
			eq "$n:$(nrows "$B" "coalesce(job_step,'') <> 'extern' and (coalesce(job_run,'') <> 'RUNENV' or coalesce(job_pipeline,'') <> 'env-pipe')")" "$n:0"
		[ "$n" -gt 0 ] || note "$m job B has no rows"
		note "$m job B rows per step/run: $(q "select coalesce(job_step,'') || ':' || coalesce(job_run,'') || ':' || count(*) from process where job_id='$B' group by job_step, job_run;" | tr '\n' ' ')"
	fi

	# ---- Slurm's own figures against jobtrace's ----
	self_cpu=$(kv "$(cat "$JOBDIR/burn.$A.out")" cpu_s)
	jt_cpu=$(q "select printf('%.3f', cpu_user_s + cpu_sys_s) from process where pid=$burn_pid and job_id='$A' order by start_time desc limit 1;")
	# a step that is ending reports AveCPU as NO_VAL ("213503982334-14:25:51"):
	# take the last plausible sample
	sp_cpu=$(grep '^0|' "$T/sstat.$mode" | cut -d'|' -f2 | grep -v -- - | tail -n 1)
	sp_cpu=$(slurm_secs "$sp_cpu")
	self_rss=$(kv "$(cat "$JOBDIR/touch.$A.out")" vmhwm_bytes)
	jt_rss=$(row "$touch_pid" peak_rss_bytes)
	sp_rss=$(slurm_env_bytes "$(grep '^2|' "$T/sstat.$mode" | cut -d'|' -f3 | sort -n | tail -n 1)")
	note "$m CPU of 'burn 3' (step $A.0): self ${self_cpu:-?} s, jobtrace ${jt_cpu:-?} s, sstat AveCPU (last sample, whole seconds) ${sp_cpu:-?} s" \
		"$m peak RSS of 'touchmem 200' (step $A.2): self VmHWM ${self_rss:-?} B, jobtrace ${jt_rss:-?} B, sstat MaxRSS ${sp_rss:-?} B" \
		"$m sstat samples: $(wc -l <"$T/sstat.$mode"); last: $(tail -n 2 "$T/sstat.$mode" | tr '\n' ' ')"
	check "$m burn CPU: jobtrace ${jt_cpu:-?} s within 5% of its own getrusage ${self_cpu:-?} s" \
		near "$jt_cpu" "$self_cpu" 5 0.05
	check "$m burn CPU: jobtrace ${jt_cpu:-?} s within 1.2 s of sstat's last AveCPU ${sp_cpu:-?} s (sampled, truncated to seconds)" \
		near "$jt_cpu" "$sp_cpu" 0 1.2
	check "$m touchmem peak RSS: jobtrace ${jt_rss:-?} B within 5% of its VmHWM ${self_rss:-?} B" \
		near "$jt_rss" "$self_rss" 5 0
	check "$m touchmem peak RSS: jobtrace ${jt_rss:-?} B within 10% of sstat MaxRSS ${sp_rss:-?} B" \
		near "$jt_rss" "$sp_rss" 10 0

	# ---- no secret reached the agent's records, logs or spool ----
	# the pattern comes from a file: grep's own argv is recorded too
	bad=$(grep -rlaF -f "$T/canary.pat" "$T/state" "$T/agent.log" "$T/export.$A" \
		"$SLURM_ENV_DIR/hooks" 2>/dev/null | tr '\n' ' ')
	check "$m the canary in job A's environment and comment is in no agent file${bad:+ (found in: $bad)}" \
		test -z "$bad"

	# ---- a user who is not root cannot register, rename or close jobs ----
	before=$(grep -c . "$T/export.$A")
	for sub in "job-start --job 999" "job-end --job $A" "job-update --job $A --run HACK"; do
		# shellcheck disable=SC2086
		err=$(runuser -u "$JTUSER" -- "$CLI" --config "$CONF" $sub --strict 2>&1 >/dev/null)
		rc=$?
		check "$m $JTUSER: '$sub --strict' exits 1 with 'permission denied' (exit $rc: $(printf '%s' "$err" | head -n 1 | cut -c1-120))" \
			eq "$rc:$(printf '%s' "$err" | grep -c 'permission denied')" "1:1"
	done
	err=$(runuser -u "$JTUSER" -- "$CLI" --config "$CONF" job-start --job 999 2>&1 >/dev/null)
	rc=$?
	check "$m $JTUSER: 'job-start --job 999' without --strict exits 0 with one line" \
		eq "$rc:$(printf '%s\n' "$err" | grep -c .)" "0:1"
	sleep 0.5
	check "$m no records of job 999" \
		eq "$(cli export --job 999 --format ndjson 2>/dev/null | grep -c .):$(q "select count(*) from process where job_id='999';")" "0:0"
	cli export --job "$A" --format ndjson >"$T/export2.$A" 2>&1
	after=$(grep -c . "$T/export2.$A")
	check "$m job A unchanged: still $before records, none with run HACK" \
		eq "$after:$(grep -c HACK "$T/export2.$A")" "$before:0"

	# ---- the agent down: jobs still run, the prolog is quick ----
	stop_agent
	note "$m agent stopped (exit $?)"
	if [ -n "$PLUGIN" ]; then
		C=$(submit --trace-run=RUNDOWN "$JOBDIR/c.sh" 2>"$T/sbatch-c.err")
	else
		C=$(submit "$JOBDIR/c.sh" 2>"$T/sbatch-c.err")
	fi
	st=$(wait_job "$C" 30)
	check "$m with the agent down, job C ($C) runs and completes (state $st, exit $(sjob "$C" ExitCode))" \
		eq "$st:$(sjob "$C" ExitCode)" "COMPLETED:0:0"
	pt=$(hook_secs prolog "$C")
	et=$(hook_secs epilog "$C")
	check "$m with the agent down the prolog took ${pt:-?} s (< 1 s) and exited 0" \
		eq "$(between "$pt" 0 0.999 && echo y):$(awk -v j="$C" '$1 == "prolog" && $2 == j { print $5 }' "$SLURM_ENV_HOOKLOG")" "y:0"
	check "$m with the agent down the epilog took ${et:-?} s (< 1 s)" between "$et" 0 0.999
	n=$(grep -c . "$SLURM_ENV_DIR/hooks/prolog.$C.err" 2>/dev/null)
	check "$m with the agent down the prolog logged exactly one line (${n:-0})" eq "${n:-0}" 1
	note "$m prolog's line: $(head -n 2 "$SLURM_ENV_DIR/hooks/prolog.$C.err" 2>/dev/null)" \
		"$m prolog times with the agent up: A $(hook_secs prolog "$A") s, B $(hook_secs prolog "$B") s"
	st=$(sinfo -h -n "$SLURM_ENV_NODE" -o %T)
	check "$m the node is not drained ($st)" eq "$(printf '%s' "$st" | grep -c drain)" 0

	# ---- the machine restored ----
	pids="$SLURM_ENV_CTLD_PID $SLURM_ENV_SLURMD_PID $SLURM_ENV_MUNGED_PID"
	local dir=$SLURM_ENV_DIR
	slurm_env_stop
	bad=
	for p in $pids $(slurm_env_stepds "$dir"); do
		kill -0 "$p" 2>/dev/null && bad="$bad $p"
	done
	check "$m Slurm stopped: no daemon left${bad:+ (alive:$bad)}, folder removed" \
		eq "$bad:$([ -e "$dir" ] && [ -z "${SLURM_ENV_KEEP:-}" ] && echo left)" ":"
}

for mode in $MODES; do
	case $mode in
	cgroup) run_mode cgroup 1000 ;;
	linuxproc) run_mode linuxproc 2000 ;;
	*) echo "# error: unknown mode $mode" ;;
	esac
done
finish
