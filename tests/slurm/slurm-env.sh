# SPDX-License-Identifier: GPL-2.0-or-later
#
# slurm-env.sh - a throw-away one-node Slurm for tests (sourced by bash).
#
#   install_slurm            install slurm-wlm, munge, libslurm-dev from Debian
#                            if missing (quiet; needs root and the network);
#                            with SLURM_ENV_ACCOUNTING=1 slurmdbd and
#                            mariadb-server too
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
#   slurm_env_bytes SIZE     bytes in a size as Slurm prints it ("1216K",
#                            "400M", "1G", "512"); fails on ""
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
#   SLURM_ENV_ACCOUNTING     1: accounting as sites run it, so that `sacct`
#                            answers: a private mariadbd (datadir under DIR,
#                            127.0.0.1 on a free port), its slurm_acct_db and
#                            user, a slurmdbd on a free port, the cluster
#                            added with sacctmgr, and slurm.conf's
#                            AccountingStorageType=accounting_storage/slurmdbd.
#                            About 6 s more at start.  Off: no slurmdbd, as
#                            before (accounting_storage/none)
# Outputs:
#   SLURM_CONF (exported: every client command needs it, sacct and
#   sacctmgr too), SLURM_ENV_DIR,
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
SLURM_ENV_MARIADB_PID=
SLURM_ENV_DBD_PID=
SLURM_ENV_DBD_PORT=
SLURM_ENV_CG_BEFORE=
SLURM_ENV_HOOKLOG=

# Install Slurm and munge from Debian if any part is missing.
install_slurm() {
	local p missing= pkgs="slurm-wlm munge libslurm-dev"
	[ -n "${SLURM_ENV_ACCOUNTING:-}" ] && pkgs="$pkgs slurmdbd mariadb-server"
	for p in $pkgs; do
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

# Bytes in a Slurm size "1216K" / "200M" / "1G" / "512".
slurm_env_bytes() {
	awk -v v="$1" 'BEGIN {
		if (v == "") exit 1
		u = substr(v, length(v)); n = v + 0; m = 1
		if (u == "K") m = 1024; else if (u == "M") m = 1048576; else if (u == "G") m = 1073741824
		printf "%d\n", n * m }'
}

# Exit 99 (a hard error of the test) unless Slurm is installed or can be.
slurm_env_need() {
	install_slurm && return 0
	echo "# error: slurm-wlm, munge and libslurm-dev are missing and could not be installed"
	exit 99
}

# A TCP port in 20000..39999 that nothing listens on (excluding the
# ports given as arguments).
slurm_env_free_port() {
	local p
	for _ in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		case " $* " in *" $p "*) continue ;; esac
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
	local proctrack task flags jobcomp=none storage=none

	[ -n "${SLURM_ENV_JOBCOMP:-}" ] && jobcomp=filetxt
	[ -n "${SLURM_ENV_ACCOUNTING:-}" ] && storage=slurmdbd

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
			AccountingStorageType=accounting_storage/$storage
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
		if [ -n "${SLURM_ENV_ACCOUNTING:-}" ]; then
			echo "AccountingStorageHost=localhost"
			echo "AccountingStoragePort=$SLURM_ENV_DBD_PORT"
			# for slurmdbd this is munged's socket (slurm.conf(5))
			echo "AccountingStoragePass=$dir/munge/munge.sock"
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

# Wait (10 s at most) until the command in $2... succeeds while pid $1
# lives; 0 when it did.
slurm_env_wait_for() {
	local pid=$1
	shift
	for _ in $(seq 1 100); do
		"$@" >/dev/null 2>&1 && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Start a private mariadbd on 127.0.0.1:$2 with its data under DIR/mysql,
# and make slurm_acct_db and its user; 0 once it answers.
slurm_env_start_mariadb() {
	local dir=$1 port=$2 sql
	mkdir -p "$dir/mysql"
	if ! mariadb-install-db --no-defaults --user=root --datadir="$dir/mysql/data" \
		--auth-root-authentication-method=socket --skip-test-db \
		>"$dir/log/mariadb-install.log" 2>&1; then
		echo "# slurm-env: mariadb-install-db failed:" >&2
		tail -n 5 "$dir/log/mariadb-install.log" | sed 's/^/#   /' >&2
		return 1
	fi
	# as root (--user=root): the test folder's parents may be private
	mariadbd --no-defaults --user=root --datadir="$dir/mysql/data" \
		--socket="$dir/mysql/mysqld.sock" --port="$port" \
		--bind-address=127.0.0.1 --pid-file="$dir/mysql/mysqld.pid" \
		--log-error="$dir/log/mariadbd.log" --innodb-buffer-pool-size=32M \
		</dev/null >/dev/null 2>&1 &
	SLURM_ENV_MARIADB_PID=$!
	sql="CREATE DATABASE slurm_acct_db;
		CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'jttest';
		GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';"
	slurm_env_wait_for "$SLURM_ENV_MARIADB_PID" mariadb --no-defaults \
		-S "$dir/mysql/mysqld.sock" -u root -e 'SELECT 1' &&
		mariadb --no-defaults -S "$dir/mysql/mysqld.sock" -u root \
			-e "$sql" && return 0
	echo "# slurm-env: mariadbd did not start:" >&2
	tail -n 5 "$dir/log/mariadbd.log" 2>/dev/null | sed 's/^/#   /' >&2
	return 1
}

# Start slurmdbd on port $3 over mariadbd's port $2 and add the cluster;
# 0 once sacctmgr lists it.
slurm_env_start_dbd() {
	local dir=$1 myport=$2 port=$3
	# slurmdbd reads slurmdbd.conf next to $SLURM_CONF; 0600, its user's
	cat >"$dir/slurmdbd.conf" <<-EOF
		# written by tests/slurm/slurm-env.sh (accounting)
		AuthType=auth/munge
		AuthInfo=socket=$dir/munge/munge.sock
		DbdHost=localhost
		DbdPort=$port
		SlurmUser=root
		PidFile=$dir/slurmdbd.pid
		LogFile=$dir/log/slurmdbd.log
		DebugLevel=info
		StorageType=accounting_storage/mysql
		StorageHost=127.0.0.1
		StoragePort=$myport
		StorageUser=slurm
		StoragePass=jttest
		StorageLoc=slurm_acct_db
	EOF
	chmod 0600 "$dir/slurmdbd.conf"
	slurmdbd -D </dev/null >>"$dir/log/slurmdbd.out" 2>&1 &
	SLURM_ENV_DBD_PID=$!
	if slurm_env_wait_for "$SLURM_ENV_DBD_PID" sacctmgr -n -P list cluster; then
		sacctmgr -i add cluster jttest >/dev/null 2>&1
		sacctmgr -n -P list cluster format=cluster 2>/dev/null |
			grep -qx jttest && return 0
	fi
	echo "# slurm-env: slurmdbd did not start or took no cluster:" >&2
	tail -n 5 "$dir/log/slurmdbd.log" 2>/dev/null | sed 's/^/#   /' >&2
	return 1
}

# Stop pid $1 with SIGTERM, then SIGKILL after 10 s.
slurm_env_kill() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
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
	local mode=$1 dir=$2 ctld_port slurmd_port my_port state='' c
	if [ -n "$SLURM_ENV_DIR" ]; then
		echo "# slurm-env: already started in $SLURM_ENV_DIR" >&2
		return 1
	fi
	c="slurmctld slurmd sinfo munge unmunge ss setpriv"
	[ -n "${SLURM_ENV_ACCOUNTING:-}" ] &&
		c="$c slurmdbd sacctmgr mariadbd mariadb mariadb-install-db"
	for c in $c; do
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
	if [ -n "${SLURM_ENV_ACCOUNTING:-}" ]; then
		my_port=$(slurm_env_free_port "$ctld_port" "$slurmd_port") || return 1
		SLURM_ENV_DBD_PORT=$(slurm_env_free_port "$ctld_port" \
			"$slurmd_port" "$my_port") || return 1
	fi
	slurm_env_write_conf "$mode" "$dir" "$SLURM_ENV_ACCT" \
		"$ctld_port" "$slurmd_port" || return 1
	if [ -n "${SLURM_ENV_ACCOUNTING:-}" ]; then
		# sacctmgr finds slurmdbd through slurm.conf: written first
		slurm_env_start_mariadb "$dir" "$my_port" || return 1
		slurm_env_start_dbd "$dir" "$my_port" "$SLURM_ENV_DBD_PORT" ||
			return 1
	fi
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
	# slurmdbd before mariadbd and munged, which it uses
	slurm_env_kill "$SLURM_ENV_DBD_PID"
	slurm_env_kill "$SLURM_ENV_MARIADB_PID"
	slurm_env_kill "$SLURM_ENV_MUNGED_PID"
	SLURM_ENV_DBD_PID=
	SLURM_ENV_MARIADB_PID=
	SLURM_ENV_MUNGED_PID=
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
