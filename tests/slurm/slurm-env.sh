# SPDX-License-Identifier: GPL-2.0-or-later
#
# slurm-env.sh - a throw-away one-node Slurm for tests (sourced by bash).
#
#   install_slurm            install slurm-wlm, munge, libslurm-dev from Debian
#                            if missing (quiet; needs root and the network)
#   slurm_env_need           install_slurm, or exit 99 saying what is missing
#   slurm_env_start MODE DIR write a configuration under DIR (created, must be
#                            empty or absent) and start munged, slurmctld and
#                            slurmd; wait until the node is idle (30 s max).
#                            MODE: cgroup    proctrack/cgroup, task/cgroup,
#                                            PrologFlags=Alloc,Contain
#                                  linuxproc proctrack/linuxproc, task/none
#   slurm_env_stop           cancel jobs, stop exactly the daemons (and the
#                            job step daemons) started here, remove Slurm's
#                            new cgroups and DIR.  Safe to call twice.
#
# Inputs (environment, all optional):
#   SLURM_ENV_PROLOG, SLURM_ENV_EPILOG  scripts run as Prolog/Epilog through a
#                            wrapper (default: none)
#   SLURM_ENV_JOBTRACE, SLURM_ENV_JOBTRACE_CONFIG, SLURM_ENV_STRICT
#                            exported by the wrapper as JOBTRACE,
#                            JOBTRACE_CONFIG and JOBTRACE_STRICT
#   SLURM_ENV_PLUGIN         a SPANK plugin .so to load (required), with
#   SLURM_ENV_PLUGIN_ARGS    its plugstack.conf arguments
#   SLURM_ENV_ACCT           jobacct_gather plugin to try first (linux)
#   SLURM_ENV_FIRST_JOB_ID   FirstJobId (default 1): give each start its own
#                            range when one agent sees several clusters
#   SLURM_ENV_CPUS           the node's CPUs=N (default 2, what this VM has);
#                            another number adds SlurmdParameters=
#                            config_overrides so that slurmd takes it
#   SLURM_ENV_JOBCOMP        1: JobCompType=jobcomp/filetxt into DIR/jobcomp.txt,
#                            so that `sacct -c` answers (no slurmdbd here)
# Outputs:
#   SLURM_CONF (exported: every client command needs it), SLURM_ENV_DIR,
#   SLURM_ENV_NODE, SLURM_ENV_ACCT (the jobacct_gather plugin in use),
#   SLURM_ENV_HOOKLOG: one line per hook run, "prolog|epilog JOBID START END
#   STATUS" (epoch seconds); each run's stderr is in DIR/hooks/NAME.JOBID.err
#   and the names (not values) of its environment in DIR/hooks/NAME.JOBID.env
#
# Munge: a private munged runs as user munge on a socket under DIR
# (AuthInfo=socket=...), so the machine's own munged, if any, is untouched.
# Slurm listens on two free ports picked at start.

SLURM_ENV_DIR=
SLURM_ENV_NODE=
SLURM_ENV_MUNGED_PID=
SLURM_ENV_CTLD_PID=
SLURM_ENV_SLURMD_PID=
SLURM_ENV_CG_BEFORE=
SLURM_ENV_HOOKLOG=

# Install Slurm and munge from Debian if any part is missing.
install_slurm() {
	local p missing=
	for p in slurm-wlm munge libslurm-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	if [ "$(id -u)" -ne 0 ]; then
		echo "# slurm-env: missing packages:$missing (need root)" >&2
		return 1
	fi
	echo "# slurm-env: installing$missing" >&2
	# shellcheck disable=SC2086
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends $missing >/dev/null 2>&1 || {
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
			--no-install-recommends $missing >/dev/null 2>&1
	}
}

# Exit 99 (a hard error of the test) unless Slurm is installed or can be.
slurm_env_need() {
	install_slurm && return 0
	echo "# error: slurm-wlm, munge and libslurm-dev are missing and could not be installed"
	exit 99
}

# A TCP port in 20000..39999 that nothing listens on (excluding $1).
slurm_env_free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		[ "$p" = "${1:-}" ] && continue
		if [ -z "$(ss -Htln "sport = :$p" 2>/dev/null)" ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# The cgroup v1 directories named slurm* under each controller, one per line.
slurm_env_cgroups() {
	local d
	for d in /sys/fs/cgroup/*/slurm*; do
		[ -d "$d" ] && echo "$d"
	done
}

# Write DIR/slurm.conf (and cgroup.conf) for MODE with jobacct_gather $3.
slurm_env_write_conf() {
	local mode=$1 dir=$2 acct=$3 ctld_port=$4 slurmd_port=$5
	local proctrack task flags jobcomp=none

	[ -n "${SLURM_ENV_JOBCOMP:-}" ] && jobcomp=filetxt

	case $mode in
	cgroup)
		proctrack=proctrack/cgroup
		task=task/cgroup,task/affinity
		flags=Alloc,Contain
		# constrain cores and memory as production sites do, so
		# that job processes sit in cpuset and memory job cgroups
		cat >"$dir/cgroup.conf" <<-EOF
			CgroupPlugin=autodetect
			ConstrainCores=yes
			ConstrainRAMSpace=yes
		EOF
		;;
	linuxproc)
		proctrack=proctrack/linuxproc
		task=task/none
		flags=Alloc
		;;
	*)
		echo "# slurm-env: unknown mode '$mode' (cgroup|linuxproc)" >&2
		return 1
		;;
	esac
	{
		cat <<-EOF
			# written by tests/slurm/slurm-env.sh ($mode)
			ClusterName=jttest
			SlurmctldHost=$SLURM_ENV_NODE
			SlurmctldPort=$ctld_port
			SlurmdPort=$slurmd_port
			SlurmUser=root
			SlurmdUser=root
			AuthType=auth/munge
			AuthInfo=socket=$dir/munge/munge.sock
			CredType=cred/munge
			StateSaveLocation=$dir/state
			SlurmdSpoolDir=$dir/spool
			SlurmctldPidFile=$dir/slurmctld.pid
			SlurmdPidFile=$dir/slurmd.pid
			SlurmctldLogFile=$dir/log/slurmctld.log
			SlurmdLogFile=$dir/log/slurmd.log
			SlurmctldDebug=info
			SlurmdDebug=info
			MpiDefault=none
			ProctrackType=$proctrack
			TaskPlugin=$task
			PrologFlags=$flags
			SelectType=select/cons_tres
			SelectTypeParameters=CR_Core_Memory
			DefMemPerCPU=1000
			JobAcctGatherType=jobacct_gather/$acct
			JobAcctGatherFrequency=task=5
			AccountingStorageType=accounting_storage/none
			JobCompType=jobcomp/$jobcomp
			ReturnToService=2
			SlurmctldTimeout=30
			SlurmdTimeout=60
			InactiveLimit=0
			KillWait=5
			MinJobAge=600
			FirstJobId=${SLURM_ENV_FIRST_JOB_ID:-1}
			PrologEpilogTimeout=20
		EOF
		if [ -n "${SLURM_ENV_PROLOG:-}" ]; then
			echo "Prolog=$dir/hook-prolog"
		fi
		if [ -n "${SLURM_ENV_EPILOG:-}" ]; then
			echo "Epilog=$dir/hook-epilog"
		fi
		echo "PlugStackConfig=$dir/plugstack.conf"
		if [ -n "${SLURM_ENV_JOBCOMP:-}" ]; then
			echo "JobCompLoc=$dir/jobcomp.txt"
		fi
		if [ "${SLURM_ENV_CPUS:-2}" != 2 ]; then
			echo "SlurmdParameters=config_overrides"
		fi
		echo "NodeName=$SLURM_ENV_NODE CPUs=${SLURM_ENV_CPUS:-2} RealMemory=20000 State=UNKNOWN"
		echo "PartitionName=debug Nodes=$SLURM_ENV_NODE Default=YES MaxTime=INFINITE State=UP"
	} >"$dir/slurm.conf"
	: >"$dir/plugstack.conf"
	if [ -n "${SLURM_ENV_PLUGIN:-}" ]; then
		echo "required $SLURM_ENV_PLUGIN ${SLURM_ENV_PLUGIN_ARGS:-}" \
			>"$dir/plugstack.conf"
	fi
	chmod 0644 "$dir"/*.conf
}

# Write the hook wrapper DIR/hook-NAME that runs SCRIPT with the test's
# JOBTRACE settings and logs its start, end and status.
slurm_env_write_hook() {
	local name=$1 script=$2 dir=$3
	cat >"$dir/hook-$name" <<-EOF
		#!/bin/bash
		# $name wrapper written by tests/slurm/slurm-env.sh
		s=\$EPOCHREALTIME
		# names (never values) of what slurmd passed, for the record
		compgen -e | sort >"$dir/hooks/$name.\${SLURM_JOB_ID:-x}.env"
		JOBTRACE='${SLURM_ENV_JOBTRACE:-}' JOBTRACE_CONFIG='${SLURM_ENV_JOBTRACE_CONFIG:-}' \\
			JOBTRACE_STRICT='${SLURM_ENV_STRICT:-0}' \\
			'$script' 2>>"$dir/hooks/$name.\${SLURM_JOB_ID:-x}.err" >/dev/null
		rc=\$?
		e=\$EPOCHREALTIME
		echo "$name \${SLURM_JOB_ID:-x} \$s \$e \$rc" >>"$dir/hooks.log"
		exit \$rc
	EOF
	chmod 0755 "$dir/hook-$name"
}

# Start the private munged; 0 once it answers.
slurm_env_start_munge() {
	local dir=$1
	mkdir -p "$dir/munge"
	chown munge:munge "$dir/munge"
	chmod 0755 "$dir/munge"
	# setpriv execs munged itself, so $! is munged's pid
	setpriv --reuid=munge --regid=munge --init-groups \
		/usr/sbin/munged -F --force \
		--socket="$dir/munge/munge.sock" \
		--pid-file="$dir/munge/munged.pid" \
		--log-file="$dir/munge/munged.log" \
		--seed-file="$dir/munge/munged.seed" </dev/null >/dev/null 2>&1 &
	SLURM_ENV_MUNGED_PID=$!
	for _ in $(seq 1 50); do
		if munge -S "$dir/munge/munge.sock" -n 2>/dev/null |
			unmunge -S "$dir/munge/munge.sock" >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$SLURM_ENV_MUNGED_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "# slurm-env: munged did not start:" >&2
	tail -n 5 "$dir/munge/munged.log" 2>/dev/null | sed 's/^/#   /' >&2
	return 1
}

# Start slurmctld and slurmd on the written config; 0 once slurmd is alive
# after 2 s (slurmd refuses a bad plugin within that time).
slurm_env_start_daemons() {
	local dir=$1
	slurmctld -D -f "$dir/slurm.conf" </dev/null >>"$dir/log/slurmctld.out" 2>&1 &
	SLURM_ENV_CTLD_PID=$!
	slurmd -D -f "$dir/slurm.conf" </dev/null >>"$dir/log/slurmd.out" 2>&1 &
	SLURM_ENV_SLURMD_PID=$!
	for _ in $(seq 1 20); do
		kill -0 "$SLURM_ENV_CTLD_PID" 2>/dev/null || return 1
		kill -0 "$SLURM_ENV_SLURMD_PID" 2>/dev/null || return 1
		sleep 0.1
	done
	return 0
}

# Stop slurmctld and slurmd (SIGTERM, then SIGKILL after 10 s).
slurm_env_stop_daemons() {
	local p
	for p in $SLURM_ENV_SLURMD_PID $SLURM_ENV_CTLD_PID; do
		kill -TERM "$p" 2>/dev/null
	done
	for p in $SLURM_ENV_SLURMD_PID $SLURM_ENV_CTLD_PID; do
		for _ in $(seq 1 100); do
			kill -0 "$p" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SLURM_ENV_SLURMD_PID=
	SLURM_ENV_CTLD_PID=
}

# Start a one-node Slurm in MODE under DIR (see the top of this file).
slurm_env_start() {
	local mode=$1 dir=$2 ctld_port slurmd_port state='' c
	if [ -n "$SLURM_ENV_DIR" ]; then
		echo "# slurm-env: already started in $SLURM_ENV_DIR" >&2
		return 1
	fi
	for c in slurmctld slurmd sinfo munge unmunge ss setpriv; do
		if ! command -v "$c" >/dev/null; then
			echo "# slurm-env: $c is missing (install_slurm)" >&2
			return 1
		fi
	done
	SLURM_ENV_NODE=$(hostname)
	SLURM_ENV_DIR=$dir
	SLURM_ENV_CG_BEFORE=$(slurm_env_cgroups)
	mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/hooks"
	chmod 0755 "$dir" "$dir/log" "$dir/spool"
	SLURM_ENV_HOOKLOG=$dir/hooks.log
	: >"$SLURM_ENV_HOOKLOG"
	export SLURM_CONF=$dir/slurm.conf
	[ -n "${SLURM_ENV_PROLOG:-}" ] &&
		slurm_env_write_hook prolog "$SLURM_ENV_PROLOG" "$dir"
	[ -n "${SLURM_ENV_EPILOG:-}" ] &&
		slurm_env_write_hook epilog "$SLURM_ENV_EPILOG" "$dir"
	ctld_port=$(slurm_env_free_port) || return 1
	slurmd_port=$(slurm_env_free_port "$ctld_port") || return 1

	slurm_env_start_munge "$dir" || return 1
	SLURM_ENV_ACCT=${SLURM_ENV_ACCT:-linux}
	slurm_env_write_conf "$mode" "$dir" "$SLURM_ENV_ACCT" \
		"$ctld_port" "$slurmd_port" || return 1
	if ! slurm_env_start_daemons "$dir"; then
		slurm_env_stop_daemons
		if [ "$SLURM_ENV_ACCT" = none ]; then
			echo "# slurm-env: slurmctld/slurmd exited at start:" >&2
			tail -n 5 "$dir/log/slurmd.log" "$dir/log/slurmctld.log" \
				2>/dev/null | sed 's/^/#   /' >&2
			return 1
		fi
		echo "# slurm-env: slurmd fails with jobacct_gather/$SLURM_ENV_ACCT;" \
			"retrying with none" >&2
		SLURM_ENV_ACCT=none
		rm -rf "$dir/state" && mkdir -p "$dir/state"
		slurm_env_write_conf "$mode" "$dir" none "$ctld_port" \
			"$slurmd_port" || return 1
		slurm_env_start_daemons "$dir" || return 1
	fi
	for _ in $(seq 1 150); do
		state=$(sinfo -h -n "$SLURM_ENV_NODE" -o %T 2>/dev/null)
		[ "$state" = idle ] && return 0
		kill -0 "$SLURM_ENV_SLURMD_PID" 2>/dev/null || break
		sleep 0.2
	done
	echo "# slurm-env: node not idle after 30 s (state '$state'):" >&2
	tail -n 5 "$dir/log/slurmd.log" "$dir/log/slurmctld.log" 2>/dev/null |
		sed 's/^/#   /' >&2
	return 1
}

# Pids of slurmstepd processes holding a file under DIR open (ours).
slurm_env_stepds() {
	local p f
	for p in $(pgrep -x slurmstepd 2>/dev/null); do
		for f in /proc/"$p"/fd/*; do
			case $(readlink "$f" 2>/dev/null) in
			"$1"/*)
				echo "$p"
				break
				;;
			esac
		done
	done
}

# Stop everything slurm_env_start started and remove DIR.
slurm_env_stop() {
	local dir=$SLURM_ENV_DIR d p ids
	[ -n "$dir" ] || return 0
	if [ -n "$SLURM_ENV_CTLD_PID" ] && kill -0 "$SLURM_ENV_CTLD_PID" 2>/dev/null; then
		ids=$(timeout 10 squeue -h -o %i 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$ids" ] && timeout 10 scancel --quiet $ids 2>/dev/null
		for _ in $(seq 1 50); do
			[ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
			sleep 0.2
		done
	fi
	slurm_env_stop_daemons
	# job step daemons outlive slurmd: stop ours (they log under DIR)
	for p in $(slurm_env_stepds "$dir"); do
		kill -TERM "$p" 2>/dev/null
	done
	sleep 0.5
	for p in $(slurm_env_stepds "$dir"); do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "$SLURM_ENV_MUNGED_PID" ]; then
		kill -TERM "$SLURM_ENV_MUNGED_PID" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "$SLURM_ENV_MUNGED_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$SLURM_ENV_MUNGED_PID" 2>/dev/null
		wait "$SLURM_ENV_MUNGED_PID" 2>/dev/null
		SLURM_ENV_MUNGED_PID=
	fi
	# cgroups Slurm made during this run, deepest first
	for d in $(slurm_env_cgroups); do
		printf '%s\n' "$SLURM_ENV_CG_BEFORE" | grep -qxF -- "$d" && continue
		find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
	done
	if [ -z "${SLURM_ENV_KEEP:-}" ]; then
		rm -rf "$dir"
	fi
	unset SLURM_CONF
	SLURM_ENV_DIR=
}
