#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_docker_batch.sh - containers to AWS Batch jobs, against a real
# dockerd (its own data root, socket and no networking, in the test's
# folder) and an image made offline from busybox-static:
#   1. a container created as AWS Batch creates one (the Batch environment
#      with -e, the ECS labels, the ECS agent's cgroup parent /ecs/TASK,
#      --cpus 1.5 --memory 256m) in which, before it starts, runc's own
#      bootstrap runs and ends (`runc init`, moved into the container's
#      cgroup, re-executing itself from a sealed copy as runc does: what
#      runc's own timing does at random, done here every time), then it
#      runs a known number of processes: each process record carries the
#      job (ID:7 for array index 7), attempt, queue, compute environment and
#      task ARN; the job has exactly one start and one end record, with the
#      allocation Docker reports (2 CPUs, 256 MiB), the exit code and every
#      process in the usage; `jobtrace cost --by job` counts it once; a
#      container without the Batch environment is only a container;
#   2. dockerd stopped (SIGSTOP): storms of short processes in containers
#      the agent has not seen are all recorded as fast as with Docker
#      answering, `jobtrace status` answers at once and says the look-ups
#      timed out; they run on after SIGCONT;
#   2b. a Batch container that ends while dockerd is stopped: Docker cannot
#      say it ended, its cgroup stays empty: the job ends once, after
#      docker.end_grace;
#   3. a socket answering garbage, then none at all: records flow, the job
#      fields stay null, status counts error and absent with the reason;
#   4. no canary (environment values outside the allowlist, one that only
#      looks allowlisted, the garbage answer's) in any file the agent wrote.
#
# Needs root, kernel BTF, docker.io and busybox-static (scripts/install-deps.sh).
# Exit 0 pass, 1 fail, 77 skipped (dockerd cannot start here), 99 error.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/spawnstorm"
# Debian's docker.io; /usr/local/bin/docker may be something else
DOCKERD=/usr/sbin/dockerd
DOCKER_CLI=/usr/bin/docker
RUNC=/usr/sbin/runc	# what docker.io runs containers with
for f in "$DOCKERD" "$DOCKER_CLI" "$RUNC" /bin/busybox; do
	[ -x "$f" ] || { echo "# error: $f is missing (run scripts/install-deps.sh: docker.io, busybox-static)"; exit 99; }
done
start_watchdog 240

DK=$T/dk
DSOCK=$DK/docker.sock
DOCKERD_PID=
FAKE_PID=
IPT_BEFORE=
# where cgroup v2 is: hybrid (unified) or pure
CG2=/sys/fs/cgroup
[ -f /sys/fs/cgroup/unified/cgroup.procs ] && CG2=/sys/fs/cgroup/unified
TASK=$(tr -d '-' </proc/sys/kernel/random/uuid)
TASK3=$(tr -d '-' </proc/sys/kernel/random/uuid)	# section 2b's
FAKE_CGS=$T/fake-cgroups	# one made-up container's cgroup a line

dk() {
	timeout 60 "$DOCKER_CLI" -H "unix://$DSOCK" "$@"
}

# A fresh 64-hex container id.
hexid() {
	head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'
}

extra_cleanup() {
	local d
	[ -n "$FAKE_PID" ] && kill "$FAKE_PID" 2>/dev/null
	if [ -n "$DOCKERD_PID" ]; then
		kill -CONT "$DOCKERD_PID" 2>/dev/null
		dk rm -f "jt-batch-$$" "jt-plain-$$" "jt-stopped-$$" >/dev/null 2>&1
		kill -TERM "$DOCKERD_PID" 2>/dev/null
		for _ in $(seq 1 100); do
			kill -0 "$DOCKERD_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$DOCKERD_PID" 2>/dev/null
	fi
	[ -f "$FAKE_CGS" ] && while read -r d; do
		remove_cgroup "$d"
	done <"$FAKE_CGS"
	for d in /sys/fs/cgroup/*/ecs/"$TASK" /sys/fs/cgroup/ecs/"$TASK" \
		/sys/fs/cgroup/*/ecs/"$TASK3" /sys/fs/cgroup/ecs/"$TASK3"; do
		[ -d "$d" ] || continue
		# a container's own, when runc did not remove it
		find "$d" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null
		rmdir "$d" 2>/dev/null
		rmdir "$(dirname "$d")" 2>/dev/null	# /ecs, when empty
	done
	# dockerd's /docker parents, when no other dockerd has containers there
	for d in /sys/fs/cgroup/*/docker /sys/fs/cgroup/docker; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	# what dockerd left mounted under the test's folder
	grep -o " $T/[^ ]*" /proc/mounts 2>/dev/null | sort -r | while read -r m; do
		umount -l "$m" 2>/dev/null
	done
	if [ -n "$IPT_BEFORE" ] && command -v iptables-save >/dev/null &&
		[ "$(iptables-save 2>/dev/null | grep -v '^#')" != "$IPT_BEFORE" ]; then
		echo "# dockerd changed iptables: restoring the rules saved before it"
		printf '%s\n' "$IPT_BEFORE" | iptables-restore
	fi
}

# ---- dockerd of our own, an image from busybox -------------------------------------
command -v iptables-save >/dev/null && IPT_BEFORE=$(iptables-save 2>/dev/null | grep -v '^#')
mkdir -p "$DK/data" "$DK/exec" "$T/rootfs/bin"
"$DOCKERD" --data-root "$DK/data" --exec-root "$DK/exec" -H "unix://$DSOCK" \
	--pidfile "$DK/dockerd.pid" --bridge=none --iptables=false --ip-masq=false \
	>"$DK/dockerd.log" 2>&1 &
DOCKERD_PID=$!
BG_PIDS="$BG_PIDS $DOCKERD_PID"
up=
for _ in $(seq 1 150); do
	if [ "$(curl -s -m 2 --unix-socket "$DSOCK" http://docker/_ping 2>/dev/null)" = OK ]; then
		up=yes
		break
	fi
	kill -0 "$DOCKERD_PID" 2>/dev/null || break
	sleep 0.2
done
if [ -z "$up" ]; then
	echo "# skipped: dockerd does not start here; its log ends:"
	tail -n 15 "$DK/dockerd.log" | sed 's/^/#   /'
	exit 77
fi
cp /bin/busybox "$T/rootfs/bin/busybox"
for a in sh sleep true; do ln -s busybox "$T/rootfs/bin/$a"; done
img=jt-batch-test:$$
if ! tar -C "$T/rootfs" -c . | dk import - "$img" >"$DK/import.log" 2>&1; then
	check "docker import of a busybox root file system" false
	note "$(cat "$DK/import.log")"
	finish
fi
note "dockerd $(dk version --format '{{.Server.Version}}' 2>/dev/null) up, image $img; cgroup v2 at $CG2"

# look-ups of a stopped dockerd hang 3 s each: 9 s for three containers;
# a node price, for the cost of the job
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"docker = { socket = \"$DSOCK\"; timeout = 3.0; end_grace = 1.0; };
	cost = { node_hour = 3.6; };" || finish

# Wait (up to $2 s) until the SQL count $1 is at least $3; prints it.
wait_count() {
	local n=0
	for _ in $(seq 1 $(($2 * 5))); do
		n=$(q "$1")
		[ "${n:-0}" -ge "$3" ] && break
		sleep 0.2
	done
	printf '%s' "$n"
}

# Wait until the agent has handled every kernel event up to now: a marker
# process started now is in the store ($1 names it).
agent_caught_up() {
	/bin/true "jt-marker-$$-$1"
	[ "$(wait_count "select count(*) from process where exe = '/bin/true'
		and argv like '%jt-marker-$$-$1%';" 15 1)" -ge 1 ]
}

# Wait (up to $1 s) until `jobtrace status` says $2 is $3.
wait_status() {
	local v=
	for _ in $(seq 1 $(($1 * 5))); do
		v=$(cli status | sed -n "s/^$2: //p")
		[ "$v" = "$3" ] && return 0
		sleep 0.2
	done
	note "status $2 is '$v', not '$3' after $1 s"
	return 1
}

# ---- 1. an AWS Batch job's container ------------------------------------------------
JOBID=$(cat /proc/sys/kernel/random/uuid)
ARN="arn:aws:ecs:us-east-1:123456789012:task/jt-cluster/$TASK"
NTRUE=20
# the container's processes: sh (its first, State.Pid), sleep, NTRUE trues
NPROC=$((NTRUE + 2))
# then sh counts to NSPIN (builtins, no process): CPU enough to compare
NSPIN=200000
CID=$(dk create --name "jt-batch-$$" --network none --cgroup-parent "/ecs/$TASK" \
	-e AWS_BATCH_JOB_ID="$JOBID" -e AWS_BATCH_JOB_ATTEMPT=2 \
	-e AWS_BATCH_JOB_ARRAY_INDEX=7 -e AWS_BATCH_JQ_NAME=jt-queue \
	-e AWS_BATCH_CE_NAME=jt-ce-spot -e JOBTRACE_RUN_ID=run-$$ \
	-e JOBTRACE_STEP=align -e SECRET_CANARY=canaryD1secret \
	-e AWS_BATCH_JOB_SECRET=canaryD2looksallowed -e JOBTRACE_TOKEN=canaryD3 \
	-e 'SECRET_QUOTED=canaryD4"q\x' \
	--label "com.amazonaws.ecs.task-arn=$ARN" \
	--label com.amazonaws.ecs.container-name=default \
	--label com.amazonaws.ecs.cluster=jt-cluster \
	--cpus 1.5 --memory 256m "$img" /bin/sh -c \
	"sleep 2; i=0; while [ \$i -lt $NTRUE ]; do /bin/true; i=\$((i+1)); done;
	i=0; while [ \$i -lt $NSPIN ]; do i=\$((i+1)); done; exit 3" \
	2>"$DK/batch.err")
# runc's bootstrap before the command: runc moves `runc init` into the
# container's cgroup, which re-executes itself from a sealed copy
# (/dev/fd/N) and, here without its parent, ends (status 1).  When runc's
# move came before that re-exec (a race runc wins or loses by a few ms),
# the container had a first process that ended before its command: its
# job was ended there and a second one started with the command.
mkdir -p "$CG2/ecs/$TASK/$CID"
sh -c "echo \$\$ >$CG2/ecs/$TASK/$CID/cgroup.procs &&
	export _LIBCONTAINER_INITPIPE=3 && exec $RUNC init 3</dev/null" 2>"$DK/bootstrap.err"
note "runc's bootstrap in the container's cgroup, status $?: $(head -c 120 "$DK/bootstrap.err")"
# the agent has seen it end and has no container entry left waiting for
# Docker: before the fix, one whose job had started and ended by then
check "the agent handled the bootstrap's exit before the container starts" \
	agent_caught_up bootstrap
check "... and awaits no Docker answer (docker_containers: 0)" \
	wait_status 10 docker_containers 0
dk start "$CID" >/dev/null
st=$(dk wait "$CID" 2>&1)
check "the Batch container ran and exited with its code 3 (status $st)" eq "$st" 3
# the reference for the job's usage: its ECS task's cgroup, read once the
# container's last process is gone (cgroup v1 or v2, whichever has it)
ref_cpu= ref_mem=
for f in /sys/fs/cgroup/cpuacct/ecs/"$TASK"/cpuacct.usage \
	/sys/fs/cgroup/cpu,cpuacct/ecs/"$TASK"/cpuacct.usage; do
	[ -f "$f" ] && ref_cpu=$(awk '{ printf "%.3f", $1 / 1e9 }' "$f") && break
done
[ -z "$ref_cpu" ] && [ -f "$CG2/ecs/$TASK/cpu.stat" ] &&
	ref_cpu=$(awk '$1 == "usage_usec" { printf "%.3f", $2 / 1e6 }' "$CG2/ecs/$TASK/cpu.stat")
for f in /sys/fs/cgroup/memory/ecs/"$TASK"/memory.max_usage_in_bytes \
	"$CG2/ecs/$TASK/memory.peak"; do
	[ -f "$f" ] && ref_mem=$(cat "$f") && break
done
# what Docker itself says of the limits: the reference for the allocation
lim=$(curl -s --unix-socket "$DSOCK" "http://docker/containers/$CID/json" |
	python3 -c 'import json, sys; h = json.load(sys.stdin)["HostConfig"]
print(-(-h["NanoCpus"] // 10**9), h["Memory"])')
want_cpus=${lim% *}
want_mem=${lim#* }
dk rm "$CID" >/dev/null
note "container $CID in /ecs/$TASK; Docker's limits: NanoCpus/1e9 rounded up $want_cpus, Memory $want_mem"

JOBSEL="job_id = '$JOBID:7'"
# the end record comes once Docker says the container has ended
n=$(wait_count "select count(*) from record where type = 'job' and $JOBSEL
	and json_extract(json, '\$.phase') = 'end';" 15 1)
agent_caught_up batch >/dev/null
r=$(q "select p || '=' || n from (select json_extract(json, '\$.phase') as p,
	count(*) as n from record where type = 'job' and $JOBSEL group by p)
	order by p;" | paste -sd' ')
check "the Batch job has exactly one start and one end record ($r)" \
	eq "$r" "end=1 start=1"
n=$(wait_count "select count(*) from process where container = 'ecs://$CID';" 10 $NPROC)
check "the container's $NPROC processes (sh, sleep, $NTRUE x true) are recorded with container ecs://ID ($n)" \
	eq "$n" "$NPROC"
r=$(q "select count(*) from process where container = 'ecs://$CID' and $JOBSEL
	and job_scheduler = 'aws-batch'
	and json_extract(json, '\$.job.attempt') = 2
	and json_extract(json, '\$.job.array_index') = 7
	and json_extract(json, '\$.job.queue') = 'jt-queue'
	and json_extract(json, '\$.job.compute_environment') = 'jt-ce-spot'
	and json_extract(json, '\$.job.ecs_task_arn') = '$ARN'
	and json_extract(json, '\$.job.run') = 'run-$$'
	and json_extract(json, '\$.job.task') = 'align';")
check "all $NPROC carry job $JOBID:7 of aws-batch, attempt 2, array index 7, queue, CE, task ARN, run and step ($r)" \
	eq "$r" "$NPROC"
note "$(q "select comm || ' ' || coalesce(job_id, 'null') from process where container = 'ecs://$CID' group by comm, job_id;" | paste -sd';')"

note "job records: $(q "select json_extract(json, '\$.phase') || ' cpus=' || json_extract(json, '\$.allocation.cpus') || ' mem=' || json_extract(json, '\$.allocation.mem_bytes') || ' exit=' || coalesce(json_extract(json, '\$.exit_code'), 'null') || ' procs=' || coalesce(json_extract(json, '\$.usage.processes'), '-') from record where type = 'job' and $JOBSEL;" | paste -sd';')"
r=$(q "select count(*) from record where type = 'job' and $JOBSEL and
	json_extract(json, '\$.phase') = 'start' and
	json_extract(json, '\$.allocation.cpus') = ${want_cpus:-x} and
	json_extract(json, '\$.allocation.mem_bytes') = ${want_mem:-x} and
	json_extract(json, '\$.job.ecs_task_arn') = '$ARN' and
	json_extract(json, '\$.job.attempt') = 2;")
check "one job start record with the container's allocation as Docker reports it: $want_cpus CPUs, $want_mem bytes ($r)" \
	eq "$r|$want_cpus|$want_mem" "1|2|268435456"
r=$(q "select json_extract(json, '\$.exit_code') || '|' ||
	json_extract(json, '\$.usage.processes') || '|' ||
	(json_extract(json, '\$.usage.cpu_s') > 0) || '|' ||
	(abs(julianday(json_extract(json, '\$.start_time')) - (select
		julianday(min(json_extract(json, '\$.start_time'))) from process
		where container = 'ecs://$CID')) * 86400 < 0.001) || '|' ||
	(abs(julianday(json_extract(json, '\$.end_time')) - (select
		julianday(max(json_extract(json, '\$.end_time'))) from process
		where container = 'ecs://$CID')) * 86400 < 0.001)
	from record where type = 'job' and $JOBSEL and json_extract(json, '\$.phase') = 'end';")
check "one job end record: exit code 3, usage.processes $NPROC, CPU counted, from the first process's start to the last exit (within 1 ms: the clocks' offset is read again at times) ($r)" \
	eq "$r" "3|$NPROC|1|1|1"
r=$(q "select json_extract(json, '\$.usage.cpu_s') || '|' ||
	coalesce(json_extract(json, '\$.usage.mem_peak_bytes'), 'null')
	from record where type = 'job' and $JOBSEL and json_extract(json, '\$.phase') = 'end';")
note "job end usage cpu_s|mem_peak_bytes: $r; the task's cgroup: ${ref_cpu:-?} s CPU, ${ref_mem:-?} bytes peak"
# the cgroup also charges runc's set-up before the exec of sh, and the
# processes' CPU before they joined it: a few ms either way
check "the job's CPU (${r%%|*} s) is the task cgroup's (${ref_cpu:-none} s) within 5 % + 30 ms" \
	awk -v a="${r%%|*}" -v b="${ref_cpu:-x}" 'BEGIN { d = a - b; if (d < 0) d = -d
		exit !(b + 0 > 0.1 && d <= 0.05 * b + 0.03) }'
check "the job's memory peak (${r#*|}) is the task cgroup's peak (${ref_mem:-none})" \
	eq "${r#*|}" "${ref_mem:-none}"

# a container without the Batch environment is only a container
PLAIN=$(dk run -d --name "jt-plain-$$" --network none \
	-e SECRET_CANARY=canaryD5plain "$img" /bin/sh -c 'sleep 1; /bin/true; exit 0' \
	2>"$DK/plain.err")
dk wait "$PLAIN" >/dev/null
dk rm "$PLAIN" >/dev/null
n=$(wait_count "select count(*) from process where container = 'docker://$PLAIN';" 10 3)
r=$(q "select count(*) || '|' || count(job_id) from process where container = 'docker://$PLAIN';")
check "the plain container's 3 processes are recorded as docker://ID with no job ($r)" eq "$r" "3|0"
check "no job record but the Batch job's ($(q "select count(*) from record where type = 'job' and job_id != '$JOBID:7';"))" \
	eq "$(q "select count(*) from record where type = 'job' and job_id != '$JOBID:7';")" 0
# what the job cost, counted once
cli cost --job "$JOBID:7" --by job --format csv >"$T/cost.csv" 2>"$T/cost.err"
note "cost --job ID:7 --by job: $(tr -d '\r' <"$T/cost.csv" | paste -sd';')"
r=$(tr -d '\r' <"$T/cost.csv" | awk -F, -v j="$JOBID:7" '
	$1 == "job" && $2 == j { n++; c = $4; p = $8 }
	$1 == "total" { t = $7 }
	END { print n + 0 "|" t "|" p "|" c }')
want=$(q "select json_extract(json, '\$.cost.amount') from record where
	type = 'job' and $JOBSEL and json_extract(json, '\$.phase') = 'end';")
check "cost --by job: one row for the job, TOTAL counts 1 job, $NPROC processes, its cost that of its end record ($want) ($r)" \
	awk -v r="$r" -v n="$NPROC" -v w="$want" 'BEGIN { split(r, a, "|")
		exit !(a[1] == 1 && a[2] == 1 && a[3] == n && w + 0 > 0 &&
			a[4] - w < 1e-9 && w - a[4] < 1e-9) }'

out=$(cli status)
note "$(printf '%s\n' "$out" | grep '^docker')"
# each container is looked up once, and the Batch one again at its end
# (until Docker says it has ended, or no longer knows it)
check "status: look-ups ok (at least 2), none failed, no job waiting for its end" \
	eq "$(printf '%s\n' "$out" | awk '/^docker_lookups_ok: / { print ($2 >= 2) }')|$(printf '%s\n' "$out" | sed -n 's/^docker_\(lookups_timeout\|lookups_error\|lookups_absent\|batch_jobs_ending\): //p' | paste -sd,)" "1|0,0,0,0"

# ---- 2. dockerd stopped: records keep flowing ------------------------------------------
N=300
# A storm of N /bin/true in a cgroup named like a new container; prints
# the container's id after the storm ended.
storm_in_container() {
	local id cg
	id=$(hexid)
	cg=$CG2/docker/$id
	mkdir -p "$cg"
	echo "$cg" >>"$FAKE_CGS"
	sh -c "echo \$\$ > $cg/cgroup.procs && exec $WL/spawnstorm $N /bin/true" \
		>"$T/storm-$id.out" 2>&1
	printf '%s' "$id"
}

# Seconds (0.1 steps, up to $2) until the storms in containers $1 have
# their N records of /bin/true each (spawnstorm's own are left out: an
# ASan build re-execs itself).
time_to_store() {
	local want=0 cond="" id t0 t
	for id in $1; do
		cond="$cond${cond:+,}'docker://$id'"
		want=$((want + N))
	done
	t0=$(now)
	for _ in $(seq 1 $(($2 * 10))); do
		[ "$(q "select count(*) from process where container in ($cond) and exe = '/bin/true';")" -ge "$want" ] && break
		sleep 0.1
	done
	t=$(now)
	awk -v a="$t0" -v b="$t" 'BEGIN { printf "%.1f", b - a }'
}

base_id=$(storm_in_container)
base_t=$(time_to_store "$base_id" 20)
note "Docker answering: the $N records of a storm in a new container stored $base_t s after it"

kill -STOP "$DOCKERD_PID"
t0=$(now)
ids="$(storm_in_container) $(storm_in_container) $(storm_in_container)"
s0=$(now)
stall_t=$(time_to_store "$ids" 30)
# the third look-up still hangs (3 storms took well under 6 s)
s1=$(now)
out=$(cli status)
s2=$(now)
storm_s=$(awk -v a="$t0" -v b="$s0" 'BEGIN { printf "%.1f", b - a }')
stat_s=$(awk -v a="$s1" -v b="$s2" 'BEGIN { printf "%.2f", b - a }')
hung=$(printf '%s\n' "$out" | sed -n 's/^docker_lookups_timeout: //p')
r=$(q "select count(*) || '|' || count(job_id) from process where container in
	($(printf "'docker://%s'," $ids | sed 's/,$//')) and exe = '/bin/true';")
check "dockerd stopped: 3 storms in 3 new containers ($storm_s s) are all recorded, $((3 * N)) records of /bin/true, no job ($r)" \
	eq "$r" "$((3 * N))|0"
check "... stored $stall_t s after the last storm, as fast as with Docker answering ($base_t s; bound: that + 1 s, at most 2 s)" \
	awk -v a="$stall_t" -v b="$base_t" 'BEGIN { exit !(a <= b + 1 && a <= 2) }'
check "... and 'jobtrace status' answered in $stat_s s while a look-up still hung ($hung of 3 timed out so far; < 1 s)" \
	awk -v a="$stat_s" -v h="$hung" 'BEGIN { exit !(a < 1 && h < 3) }'
for _ in $(seq 1 75); do
	out=$(cli status)
	[ "$(printf '%s\n' "$out" | sed -n 's/^docker_lookups_timeout: //p')" -ge 3 ] && break
	sleep 0.2
done
note "$(printf '%s\n' "$out" | grep '^docker')"
check "status: the 3 look-ups timed out, and says so ($(printf '%s\n' "$out" | sed -n 's/^docker_last_error: //p'))" \
	eq "$(printf '%s\n' "$out" | awk '/^docker_lookups_timeout: / { print ($2 >= 3) }')|$(printf '%s\n' "$out" | grep -c '^docker_last_error: container .*Timeout')" "1|1"
kill -CONT "$DOCKERD_PID"
check "dockerd answers again after SIGCONT" \
	eq "$(curl -s -m 5 --unix-socket "$DSOCK" http://docker/_ping)" OK
note "stall: $(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }') s from SIGSTOP to SIGCONT"

# ---- 2b. a Batch container that ends while dockerd is stopped ----------------------------
# Docker cannot say the container has ended: its cgroup, empty since, does
# after end_grace (1 s).  The container waits on a FIFO the test writes to.
JOB3=$(cat /proc/sys/kernel/random/uuid)
mkdir -p "$T/x"
mkfifo "$T/x/go"
CID3=$(dk run -d --name "jt-stopped-$$" --network none --cgroup-parent "/ecs/$TASK3" \
	-e AWS_BATCH_JOB_ID="$JOB3" -v "$T/x:/x" "$img" /bin/sh -c 'read l </x/go; exit 4' \
	2>"$DK/stopped.err")
n=$(wait_count "select count(*) from record where type = 'job' and job_id = '$JOB3'
	and json_extract(json, '\$.phase') = 'start';" 15 1)
check "2b: the job of the container started (${n:-0} start record)" eq "${n:-0}" 1
kill -STOP "$DOCKERD_PID"
t0=$(now)
timeout 20 sh -c "echo go >$T/x/go"
n=$(wait_count "select count(*) from record where type = 'job' and job_id = '$JOB3'
	and json_extract(json, '\$.phase') = 'end';" 20 1)
t1=$(now)
kill -CONT "$DOCKERD_PID"
r=$(q "select json_extract(json, '\$.phase') || ':' || coalesce(json_extract(json, '\$.exit_code'), '-')
	|| ':' || coalesce(json_extract(json, '\$.usage.processes'), '-') from record
	where type = 'job' and job_id = '$JOB3' order by json_extract(json, '\$.phase') desc;" | paste -sd' ')
check "2b: dockerd stopped, the container's end ended its job once ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s after: a look-up timing out, then its cgroup empty for 1 s): start, end with exit code 4 and 1 process ($r)" \
	eq "$r" "start:-:- end:4:1"
check "2b: the agent says why: its cgroup stayed empty while Docker could not say" \
	grep -q "docker: container ${CID3:0:12}: Docker cannot say (timeout), its cgroup /ecs/$TASK3/$CID3 stayed empty" "$T/agent.log"
dk rm -f "$CID3" >/dev/null

stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0

# ---- 3. garbage, then nobody, at the socket ----------------------------------------------
FSOCK=$T/fake.sock
python3 "$top_srcdir/tests/integration/docker-fake.py" "$FSOCK" garbage &
FAKE_PID=$!
BG_PIDS="$BG_PIDS $FAKE_PID"
for _ in $(seq 1 50); do [ -e "$FSOCK.ready" ] && break; sleep 0.1; done
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"docker = { socket = \"$FSOCK\"; timeout = 1.0; };" || finish
# A storm in a new container meets a broken Docker ($1 says how): its
# records flow, without a job; status counts look-up outcome $2 and its
# last error matches $3.
storm_meets() {
	local id t r out
	id=$(storm_in_container)
	t=$(time_to_store "$id" 20)
	r=$(q "select count(*) || '|' || count(job_id) from process where container = 'docker://$id' and exe = '/bin/true';")
	check "$1: the storm's $N records stored in $t s, no job ($r)" \
		eq "$r" "$N|0"
	for _ in $(seq 1 25); do
		out=$(cli status)
		[ "$(printf '%s\n' "$out" | sed -n "s/^docker_lookups_$2: //p")" -ge 1 ] && break
		sleep 0.2
	done
	check "$1: status counts the look-up as $2, and why ($(printf '%s\n' "$out" | sed -n 's/^docker_last_error: //p'))" \
		eq "$(printf '%s\n' "$out" | awk -v k="docker_lookups_$2:" '$1 == k { print ($2 >= 1) }')|$(printf '%s\n' "$out" | grep -c "^docker_last_error: container .*$3")" "1|1"
}

storm_meets "garbage from the socket" error "answer refused: not valid JSON at byte"
kill "$FAKE_PID"
wait "$FAKE_PID" 2>/dev/null
reaped "$FAKE_PID"
FAKE_PID=
rm -f "$FSOCK"
storm_meets "no socket at all" absent "$FSOCK: Couldn't connect"
stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0

# ---- 4. no canary in anything the agent wrote ----------------------------------------------
files=$(find "$T/state" "$T/run" "$T/agent.log" -type f 2>/dev/null | sort)
note "files searched: $(printf '%s\n' "$files" | sed "s|^$T/||" | paste -sd' ')"
# shellcheck disable=SC2086 # one file a word
check "a spool segment was searched, and the store holds the job's queue in clear text" \
	eq "$(printf '%s\n' "$files" | grep -c '\.seg$' | awk '{ print ($1 >= 1) }')|$(grep -a -l -F jt-queue $files 2>/dev/null | grep -c '/jobtrace.db' | awk '{ print ($1 >= 1) }')" "1|1"
for c in canaryD1 canaryD2 canaryD3 canaryD4 canaryD5 canaryG1; do
	hits=$(printf '%s\n' "$files" | while read -r f; do grep -a -l -F "$c" "$f"; done)
	check "no file the agent wrote holds $c (${hits:-none})" eq "$hits" ""
done
finish
