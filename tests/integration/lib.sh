# SPDX-License-Identifier: GPL-2.0-or-later
#
# lib.sh - shared by the integration tests: assertions, the SQLite query
# helpers, starting and stopping the agent, clean-up and the summary line.
# A test sets top_builddir/top_srcdir, sources this file, and may define
# extra_cleanup.  Tests print "ok - ..." / "not ok - ..." lines and end with
# "N passed, M failed".

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
WL=$top_builddir/tests/workload
AGENT=$top_builddir/jobtraced
CLI=$top_builddir/jobtrace
MIB=$((1024 * 1024))
. "$top_srcdir/scripts/pidtree.sh"	# below

if [ "$(id -u)" -ne 0 ]; then
	echo "# skipped: needs root"
	exit 77
fi
if [ ! -r /sys/kernel/btf/vmlinux ]; then
	echo "# skipped: no kernel BTF at /sys/kernel/btf/vmlinux"
	exit 77
fi
if ! command -v sqlite3 >/dev/null; then
	echo "# error: the sqlite3 CLI is missing (Debian package sqlite3)"
	exit 99
fi

passed=0
failed=0
T=$(mktemp -d /tmp/jobtrace-it.XXXXXX)
CONF=$T/jobtrace.conf
DB=$T/state/jobtrace.db
AGENT_PID=
WATCHDOG_PID=
BG_PIDS=
CLEANED=

# ---- helpers ------------------------------------------------------------------

# Record one assertion: check "message" cmd args...
check() {
	local msg=$1
	shift
	if "$@"; then
		echo "ok - $msg"
		passed=$((passed + 1))
	else
		echo "not ok - $msg"
		failed=$((failed + 1))
	fi
}

# Print evidence lines, each prefixed with "# ".
note() {
	local line
	for line in "$@"; do
		printf '%s\n' "$line" | sed 's/^/# /'
	done
}

# The value of KEY in a "k=v k=v" truth line.
kv() {
	printf '%s\n' "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# Run SQL against the agent's database.
q() {
	sqlite3 -batch -noheader -cmd '.timeout 5000' "$DB" "$1" 2>&1
}

# Wait up to $3 s until SQL $1 answers $2.
wait_q() {
	for _ in $(seq 1 $(($3 * 5))); do
		[ "$(q "$1")" = "$2" ] && return 0
		sleep 0.2
	done
	note "after $3 s: '$(q "$1")', want '$2'"
	return 1
}

# Columns COLS of the newest process row for PID (a pid may repeat).
row() {
	q "select $2 from process where pid=$1 order by start_time desc, id desc limit 1;"
}

# Columns COLS of the newest process row for PID once it is stored (the
# agent flushes every 0.2 s here): waits up to 5 s, prints "" if none.
row_wait() {
	local r=""
	for _ in $(seq 1 50); do
		r=$(row "$1" "$2")
		[ -n "$r" ] && break
		sleep 0.1
	done
	printf '%s' "$r"
}

# True if A is within PCT percent of B, or within ABS of it.
near() {
	awk -v a="$1" -v b="$2" -v p="$3" -v m="$4" 'BEGIN {
		if (a == "" || b == "") exit 1
		d = a - b; if (d < 0) d = -d
		t = b * p / 100; if (t < 0) t = -t; if (t < m) t = m
		exit !(d <= t) }'
}

# True if LO <= A <= HI (numbers; empty fails).
between() {
	awk -v a="$1" -v l="$2" -v h="$3" 'BEGIN {
		if (a == "") exit 1; exit !(a + 0 >= l + 0 && a + 0 <= h + 0) }'
}

# True if string A equals B.
eq() {
	[ "$1" = "$2" ]
}

# Exit 99 unless every FILE is an executable the build made.
need_built() {
	local f
	for f in "$@"; do
		[ -x "$f" ] && continue
		echo "# error: $f is not built (make check builds it)"
		exit 99
	done
}

# Exit unless every COMMAND is there: 99 naming it (scripts/install-deps.sh
# installs it), or with --skip first 77 (a machine may lack it).
need_commands() {
	local skip= c
	[ "$1" = --skip ] && { skip=1; shift; }
	for c in "$@"; do
		command -v "$c" >/dev/null && continue
		if [ -n "$skip" ]; then
			echo "# skipped: $c is missing"
			exit 77
		fi
		echo "# error: $c is missing (scripts/install-deps.sh installs it)"
		exit 99
	done
}

# Epoch seconds with nanoseconds.
now() {
	date +%s.%N
}

# Epoch seconds with microseconds, without a fork: bash's own clock, for
# stamping a read on both sides (a stamp taken by a command after a read
# can come long after it on a loaded machine).
stamp() {
	local LC_ALL=C
	REPLY=$EPOCHREALTIME
}

# Wait up to 5 s for the child named $2 of process $1; set CHILD to its
# pid, then print "t0 delayacct_blkio_ticks starttime_ticks t1" (fields
# 42 and 22 of its /proc/PID/stat, read between epoch times t0 and t1)
# every 0.05 s until it is gone, or a zombie (its figure final: a parent
# that does not reap it at once lets the last line be the kernel's final
# figure).
poll_blkio() {
	local st t0
	CHILD=
	for _ in $(seq 1 100); do
		CHILD=$(pgrep -P "$1" -x "$2") && break
		sleep 0.05
	done
	while stamp && t0=$REPLY && read -r -a st <"/proc/$CHILD/stat" 2>/dev/null; do
		stamp
		echo "$t0 ${st[41]} ${st[21]} $REPLY"
		[ "${st[2]}" = Z ] && break
		sleep 0.05
	done
}

# The jobtrace CLI with this test's configuration, bounded in time.
cli() {
	timeout 20 "$CLI" --config "$CONF" "$@"
}

# The jobtrace CLI as user $1 (the rest are its arguments), bounded in time.
cli_as() {
	local u=$1
	shift
	timeout 30 runuser -u "$u" -- "$CLI" --config "$CONF" "$@"
}

# Wait up to 10 s until the store has $2 process records of job $1.
wait_records() {
	for _ in $(seq 1 100); do
		[ "$(q "select count(*) from process where job_id = '$1';")" -ge "$2" ] &&
			return 0
		sleep 0.1
	done
	return 1
}

# The agent's status value of KEY.
status_of() {
	cli status 2>/dev/null | sed -n "s/^$1: //p"
}

# Set REPLY to the agent's status value of KEY, forking only the CLI
# (this script's forks that never exec are recorded: see mark_only_rules);
# with FILE, from a status saved there (several values of one moment).
status_get() {
	local line src=${2:-$T/status.get}
	REPLY=
	[ -n "${2:-}" ] || cli status >"$src" 2>/dev/null
	while IFS= read -r line; do
		case $line in "$1: "*) REPLY=${line#"$1: "}; return 0 ;; esac
	done <"$src"
}

# Wait (up to $2 s) until sink $1 has nothing left to deliver; forks
# nothing that does not exec.
wait_delivered() {
	local lag
	for _ in $(seq 1 $(($2 * 5))); do
		status_get "sink.$1.lag_records"
		lag=$REPLY
		[ "$lag" = 0 ] && return 0
		sleep 0.2
	done
	note "sink $1 still has '$lag' records to deliver after $2 s"
	note "$(cli status 2>&1 | grep "^sink\.$1\.")"
	return 1
}

# Hold the SQLite store $DB locked for writing (another writer's
# transaction, as a backup tool would) for at most $1 seconds, in the
# background: returns once the lock is taken; LOCKER is its pid.
lock_store() {
	rm -f "$T/locked"
	mkfifo "$T/locked"
	python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("BEGIN IMMEDIATE")
with open(sys.argv[2], "w") as f:
    f.write("locked\n")
time.sleep(float(sys.argv[3]))' "$DB" "$T/locked" "$1" &
	LOCKER=$!
	BG_PIDS="$BG_PIDS $LOCKER"
	read -r _ <"$T/locked"
}

# Let the store go (lock_store).
unlock_store() {
	kill "$LOCKER" 2>/dev/null
	wait "$LOCKER" 2>/dev/null
	reaped "$LOCKER"
}

# Every record id in the SQLite store $DB, sorted.
sqlite_ids() {
	q "select id from process union all select id from record;" | sort
}

# Run spawnstorm N /bin/true [ARGS...]; prints its pid.
storm() {
	local n=$1
	shift
	"$WL/spawnstorm" "$n" /bin/true "$@" >"$T/storm.out" 2>&1
	kv "$(cat "$T/storm.out")" pid
}

# Rules in $T/rules that record only processes whose argv has the word $1
# (the rest of the node, other tests too, stays in the kernel).  This
# script's own subshells, forks that never exec, are recorded: they are
# few, but a test that waits for a quiet store must not fork any.
mark_only_rules() {
	mkdir -p "$T/rules"
	cat >"$T/rules/10-test.lua" <<LUA
jobtrace.rule("test-workload-only", function(p, d)
  if p.pid == $$ then d.include = false; d.children = true; return end
  for _, a in ipairs(p.argv) do
    if a == "$1" then return end
  end
  d.include = false
end)
LUA
}

# Stop the agent with SIGTERM; returns its exit status (124 on timeout).
stop_agent() {
	local st
	[ -n "$AGENT_PID" ] || return 0
	kill -TERM "$AGENT_PID" 2>/dev/null
	for _ in $(seq 1 100); do
		if ! kill -0 "$AGENT_PID" 2>/dev/null; then
			wait "$AGENT_PID"
			st=$?
			AGENT_PID=
			return $st
		fi
		sleep 0.1
	done
	kill -KILL "$AGENT_PID" 2>/dev/null
	wait "$AGENT_PID" 2>/dev/null
	AGENT_PID=
	return 124
}

# Forget a background pid once it has been reaped (it may be reused).
reaped() {
	BG_PIDS=$(printf '%s\n' $BG_PIDS | grep -vx "$1" | tr '\n' ' ')
}

# Kill what is left in the test's cgroup folder $1 and remove it.
remove_cgroup() {
	local p
	[ -n "$1" ] && [ -d "$1" ] || return 0
	for p in $(cat "$1/cgroup.procs" 2>/dev/null); do
		kill -KILL "$p" 2>/dev/null
	done
	sleep 0.2
	rmdir "$1" 2>/dev/null
}

# Remove what the test made; keep $T when something failed.  Runs once.
cleanup() {
	local p
	[ -n "$CLEANED" ] && return
	CLEANED=1
	[ -n "$WATCHDOG_PID" ] && kill "$WATCHDOG_PID" 2>/dev/null
	for p in $BG_PIDS; do
		kill -KILL "$p" 2>/dev/null
	done
	if [ -n "$AGENT_PID" ]; then
		kill -TERM "$AGENT_PID" 2>/dev/null
		sleep 1
		kill -KILL "$AGENT_PID" 2>/dev/null
	fi
	# a test's own leftovers (cgroups, files): it defines extra_cleanup
	if declare -F extra_cleanup >/dev/null; then
		extra_cleanup
	fi
	if [ "$failed" -eq 0 ] && [ -z "${JOBTRACE_TEST_KEEP:-}" ]; then
		rm -rf "$T"
	else
		echo "# kept $T (agent.log, jobtrace.db, workload output)"
	fi
}
trap cleanup EXIT
trap 'echo "# interrupted"; exit 1' INT TERM

# The issue-14 signals the test's agent raised that the test did not
# expect: every test checks the suite's workloads raise none of stall,
# io_bound, slower_than_usual, memory_near_limit unless it lists the kind
# in SIGNALS_EXPECTED (test_signals.sh makes each happen on purpose).
no_stray_signals() {
	local got k stray=
	[ -f "$DB" ] || return 0
	# a store that cannot be read is a failure, not "no signal"
	got=$(sqlite3 -cmd ".timeout 5000" "file:$DB?mode=ro" "select distinct json_extract(json, '\$.kind')
		from record where type = 'signal' and json_extract(json, '\$.kind') in
		('stall', 'io_bound', 'slower_than_usual', 'memory_near_limit');" 2>&1) ||
		stray=" (store not read: $got)"
	for k in $got; do
		[ -n "$stray" ] && break
		case " ${SIGNALS_EXPECTED:-} " in
		*" $k "*) ;;
		*) stray="$stray $k" ;;
		esac
	done
	check "no stall, io_bound, slower_than_usual or memory_near_limit signal the test did not cause on purpose (${stray:-none})" \
		test -z "$stray"
}

# The files the agent wrote or its HTTP sink received (store with its WAL,
# spool segments and ack files, run folder, log, $T/recv) into FILES, one a
# line; checks that the store, a spool segment and the ack file of sink $1
# are among them (a test that searches them for canaries).
agent_files() {
	FILES=$(find "$T/state" "$T/run" "$T/agent.log" "$T/recv" -type f 2>/dev/null | sort)
	note "files written: $(printf '%s\n' "$FILES" | sed "s|^$T/||" | paste -sd' ')"
	check "the store, a spool segment and the sinks' ack files were searched" \
		eq "$(printf '%s\n' "$FILES" | grep -c '/state/jobtrace.db$')|$(printf '%s\n' "$FILES" |
			grep -c '/spool/.*\.seg$')|$(printf '%s\n' "$FILES" | grep -c "/spool/$1.ack\$")" "1|1|1"
}

# Check that no process record in the agent's store has a block-I/O delay
# no process could have had: more than 64 threads waiting all its life, +1 s
# (the kernel's impossible per-thread figures are left out by the agent;
# `blkio_delay_impossible` in status counts them).
no_impossible_blkio() {
	local got
	[ -f "$DB" ] || return 0
	got=$(sqlite3 -cmd ".timeout 5000" "file:$DB?mode=ro" "select count(*) || ' ' ||
		coalesce(max(blkio_delay_s), 0) from process where blkio_delay_s >
		64 * (coalesce(end_time, start_time) - start_time) + 1;" 2>&1)
	check "no process record whose io.blkio_delay_s is more than 64 x its wall + 1 s (count, largest: $got)" \
		test "${got%% *}" = 0
}

# Clean up, print the summary line last, and exit 0 only if all passed.
finish() {
	no_stray_signals
	no_impossible_blkio
	cleanup
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && exit 0
	exit 1
}

# Abort the test if it runs longer than $1 seconds (a hung agent or CLI).
start_watchdog() {
	(
		trap 'kill $s 2>/dev/null; exit 0' TERM
		sleep "$1" &
		s=$!
		wait $s && echo "# watchdog: test took over $1 s, aborting" &&
			kill -TERM $$
	) 2>/dev/null &
	WATCHDOG_PID=$!
}

# Write $CONF (extra agent { } settings in $1, extra top-level groups in $2,
# extra store { } settings in $3) and start the agent; returns 1
# if it does not answer `jobtrace status` within 20 s.  SAMPLE_INTERVAL:
# the collector's (1.0 s unless set), COLLECTOR: more collector { }
# settings; FLUSH_INTERVAL: the store's (0.2 s unless set).  START_S: seconds
# from its launch (LAUNCH_T0, epoch s) to its first answer, from its event
# loop (asked every 20 ms).
start_agent() {
	local up=no
	# the agent makes state_dir (0700) itself
	mkdir -p "$T/run"
	cat > "$CONF" <<CONFEOF
log = { level = "info"; };
agent = { state_dir = "$T/state"; run_dir = "$T/run"; ${1:-} };
collector = { sample_interval = ${SAMPLE_INTERVAL:-1.0};${COLLECTOR:+ $COLLECTOR} };
store = { flush_interval = ${FLUSH_INTERVAL:-0.2}; ${3:-} };
${2:-}
CONFEOF
	LAUNCH_T0=$(now)
	"$AGENT" --config "$CONF" --foreground >>"$T/agent.log" 2>&1 &
	AGENT_PID=$!
	for _ in $(seq 1 1000); do
		if ! kill -0 "$AGENT_PID" 2>/dev/null; then
			wait "$AGENT_PID"
			note "agent exited with status $? during start-up"
			AGENT_PID=
			break
		fi
		if cli status >/dev/null 2>&1; then
			up=yes
			break
		fi
		sleep 0.02
	done
	START_S=$(awk -v a="$LAUNCH_T0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
	check "agent answers 'jobtrace status' within 20 s" eq "$up" yes
	if [ "$up" != yes ]; then
		note "agent.log (last 30 lines):"
		note "$(tail -n 30 "$T/agent.log")"
		return 1
	fi
	return 0
}

# A one-node Slurm in cgroup mode (tests/slurm/slurm-env.sh, sourced by the
# test; its prolog and epilog use this test's configuration) under $T/slurm,
# then the agent with the rules; the test finishes if either fails.
start_slurm_and_agent() {
	SLURM_ENV_JOBTRACE_CONFIG=$CONF
	SLURM_ENV_FIRST_JOB_ID=$((1000 + RANDOM % 50000))
	if ! slurm_env_start cgroup "$T/slurm"; then
		check "Slurm starts and the node becomes idle" false
		finish
	fi
	start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
		"cloud = { imds = \"off\"; }; docker = { enabled = false; };" || finish
}

# A free loopback port (bound and released: the caller binds it next).
free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Start the fake server $FAKE (a python script run by $PY) in folder $1
# (args $2...); sets FAKE_PID and FAKE_PORT.
start_fake() {
	local dir=$1
	shift
	mkdir -p "$dir"
	FAKE_PORT=$(free_port)
	"$PY" "$FAKE" "$FAKE_PORT" "$dir" "$@" 2>>"$dir/fake.err" &
	FAKE_PID=$!
	BG_PIDS="$BG_PIDS $FAKE_PID"
	for _ in $(seq 1 100); do
		[ -s "$dir/port" ] && return 0
		sleep 0.05
	done
	note "the fake did not start: $(cat "$dir/fake.err")"
	return 1
}

# Stop the fake started last.
stop_fake() {
	kill "$FAKE_PID" 2>/dev/null
	wait "$FAKE_PID" 2>/dev/null
	reaped "$FAKE_PID"
}

# ---- a full-screen view in tmux session $TMUX_S ------------------------------------
# the screen as text
screen() { tmux capture-pane -p -t "$TMUX_S"; }
# wait (10 s at most) until the screen has (grep -E) $1, or lacks it
screen_has() {
	for _ in $(seq 1 100); do
		screen | grep -qE "$1" && return 0
		sleep 0.1
	done
	return 1
}
screen_lacks() {
	for _ in $(seq 1 100); do
		screen | grep -qE "$1" || return 0
		sleep 0.1
	done
	return 1
}
