#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_shared.sh - the agent on a node shared with users who may be hostile.
# Two unprivileged users made for the test (jt-sh-alice, jt-sh-bob, removed
# at the end): alice holds hundreds of idle control connections while root's
# hooks register and close jobs, a storm of short processes runs and bob
# asks for the status; folders another user owns or can write are refused
# at start; the store, the state folder and the socket get their modes.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/userdel/runuser and
# /usr/bin/python3.  Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_shared.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/spawnstorm"
need_commands --skip useradd userdel runuser
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "# error: $PY is missing (the users run the connection holder with it)"
	exit 99
fi
HOLD=$top_srcdir/tests/integration/conn-hold.py
SOCK=$T/run/jobtraced.sock
ALICE=jt-sh-alice
BOB=jt-sh-bob

# The test's users go with it.
extra_cleanup() {
	userdel "$ALICE" 2>/dev/null
	userdel "$BOB" 2>/dev/null
}

# Run a command as user $1.
as() {
	local u=$1
	shift
	runuser -u "$u" -- "$@"
}

# The value of key $2 in a conn-hold.py summary file $1.
stat_of() {
	kv "$(cat "$1" 2>/dev/null)" "$2"
}

# Wait up to 20 s until conn-hold.py's file $1 says key $2 is at least $3.
wait_for() {
	for _ in $(seq 1 100); do
		[ "$(stat_of "$1" "$2")" -ge "$3" ] 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# Seconds from $1 to $2.
secs() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

# The agent's user+system CPU seconds so far.
agent_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' \
		"/proc/$AGENT_PID/stat"
}

# Sockets the agent has open.
agent_sockets() {
	find "/proc/$AGENT_PID/fd" -lname 'socket:*' 2>/dev/null | wc -l
}

# Start the agent with agent { $1 } and a run_dir of $T/run, and the
# top-level groups $3; prints its output, returns its exit status (124: it
# did not refuse, it ran).
try_start() {
	printf 'agent = { %s run_dir = "%s"; rules_dir = "%s"; };\n%s\n' "$1" \
		"${2:-$T/run}" "$top_srcdir/lua-rules" "${3:-}" >"$T/planted.conf"
	timeout 20 "$AGENT" --config "$T/planted.conf" --foreground 2>&1
}

# Start with agent { $1 } (run_dir $2, or $T/run when empty) and the
# top-level groups $5; check "$4" that it exits 2 with the message $3 (a
# fixed string).
refused() {
	local out st
	out=$(try_start "$1" "$2" "${5:-}")
	st=$?
	note "$out"
	check "$4 ($st)" eq "$st:$(grep -cF "$3" <<<"$out")" "2:1"
}

# job-start and job-end of job $1 through the hook path (the CLI, its
# default 500 ms timeout, --strict so a failure shows); sets HOOK_ST,
# T_CALL (epoch when job-start was called), LAT_START and LAT_END (s).
hook_pair() {
	local t0 t1 t2 s1 s2
	t0=$(now)
	cli job-start --strict --job "$1" --scheduler test --user alice \
		>"$T/$1.hook" 2>&1
	s1=$?
	t1=$(now)
	cli job-end --strict --job "$1" --scheduler test --exit-code 0 \
		>>"$T/$1.hook" 2>&1
	s2=$?
	t2=$(now)
	HOOK_ST=$s1:$s2
	T_CALL=$t0
	LAT_START=$(secs "$t0" "$t1")
	LAT_END=$(secs "$t1" "$t2")
}

start_watchdog 300
extra_cleanup
useradd --system --no-create-home --shell /usr/sbin/nologin "$ALICE" &&
	useradd --system --no-create-home --shell /usr/sbin/nologin "$BOB" || {
	echo "# error: useradd failed"
	exit 99
}
ALICE_UID=$(id -u "$ALICE")
# the users reach the socket and read the configuration, nothing else;
# alice writes her counts in a folder of her own
chmod 0711 "$T"
install -d -o "$ALICE" "$T/alice-out"

# ---- planted folders: refused at start, exit 2, the message names them ---------------
mkdir "$T/alice-dir" "$T/alice-run"
chown "$ALICE:" "$T/alice-dir" "$T/alice-run"
ln -s "$T/alice-dir" "$T/state-link"
refused "state_dir = \"$T/state-link\";" "" \
	"agent.state_dir = \"$T/state-link\": $T/alice-dir is owned by another user than root (owner uid $ALICE_UID ($ALICE)" \
	"state_dir a link to $ALICE's folder: exit 2, the message names agent.state_dir, the folder and its owner"
check "nothing was made in $ALICE's folder ($(ls -A "$T/alice-dir" | tr '\n' ' '))" \
	eq "$(ls -A "$T/alice-dir" | wc -l)" 0
refused "state_dir = \"$T/state-s\";" "" \
	"spool.dir = \"$T/alice-dir/spool\": $T/alice-dir is owned by another user than root (owner uid $ALICE_UID ($ALICE)" \
	"spool.dir in $ALICE's folder: exit 2, the message names spool.dir, the folder and its owner" \
	"spool = { dir = \"$T/alice-dir/spool\"; };"
check "no spool folder was made in $ALICE's folder before the refusal ($(ls -A "$T/alice-dir" | tr '\n' ' '))" \
	eq "$(ls -A "$T/alice-dir" | wc -l)" 0
refused "state_dir = \"$T/state-b\";" "$T/alice-run" \
	"agent.run_dir = \"$T/alice-run\": $T/alice-run is owned by another user than root (owner uid $ALICE_UID ($ALICE), mode 0755)" \
	"run_dir owned by $ALICE: exit 2, the message names agent.run_dir, the folder and its owner"
check "no socket was made in $ALICE's run folder ($(ls -A "$T/alice-run" | tr '\n' ' '))" \
	eq "$(ls -A "$T/alice-run" | wc -l)" 0
mkdir -m 0775 "$T/gw-state"
refused "state_dir = \"$T/gw-state\";" "" \
	"agent.state_dir = \"$T/gw-state\": $T/gw-state is writable by its group (owner uid 0 (root), mode 0775)" \
	"a group-writable state_dir: exit 2, the message names agent.state_dir and mode 0775"

# a state folder and a store an older agent left readable by all
mkdir -m 0755 "$T/state"
: >"$DB"
chmod 0644 "$DB"

# ---- a normal start: modes ------------------------------------------------------------
start_agent 'max_connections_per_user = 8; max_connections = 64;' || finish
modes="$(stat -c %a "$T/state") $(stat -c %a "$DB") $(stat -c %a "$SOCK")"
check "state folder, store and socket modes '$modes' = '700 600 666'" \
	eq "$modes" "700 600 666"
check "the agent logged narrowing the state folder and the store (2 lines)" \
	eq "$(grep -c 'narrowed to 0[67]00' "$T/agent.log")" 2

# ---- phase 1: the per-user bound (8) ----------------------------------------------------
cpu0=$(agent_cpu)
sleep 5
cpu_idle=$(awk -v a="$cpu0" -v b="$(agent_cpu)" 'BEGIN { printf "%.2f", (b - a) / 5 }')
as "$ALICE" "$PY" "$HOLD" "$SOCK" 300 4 "$T/alice-out/1" &
ALICE1=$!
BG_PIDS="$BG_PIDS $ALICE1"
wait_for "$T/alice-out/1" connects 300
t0=$(now)
out=$(as "$BOB" "$CLI" --config "$CONF" status 2>&1)
st=$?
lat=$(secs "$t0" "$(now)")
check "$BOB's status answers while $ALICE holds 8 connections and tried 300 (exit $st, $lat s < 1 s)" \
	eq "$st:$(grep -c '^events_seen: ' <<<"$out"):$(between "$lat" 0 1 && echo y)" "0:1:y"
hook_pair SH0
check "root's job-start/job-end meanwhile: exit $HOOK_ST, $LAT_START s and $LAT_END s (< 1 s each)" \
	eq "$HOOK_ST:$(between "$LAT_START" 0 1 && between "$LAT_END" 0 1 && echo y)" "0:0:y"
wait "$ALICE1"
reaped "$ALICE1"
note "$ALICE, 300 idle connections with max_connections_per_user = 8: $(cat "$T/alice-out/1")"
check "$ALICE's 292 connections beyond the limit got the error line, 8 stayed open" \
	eq "$(stat_of "$T/alice-out/1" refused_user):$(stat_of "$T/alice-out/1" open)" "292:8"
check "the agent logged the refusal, naming the option" \
	eq "$(grep -c "uid $ALICE_UID refused: agent.max_connections_per_user reached" "$T/agent.log")" 1

# ---- phase 2: 300 connections held open, the unprivileged total full ------------------
sed -i 's/max_connections_per_user = 8; max_connections = 64;/max_connections_per_user = 400; max_connections = 300;/' "$CONF"
cli reload >/dev/null 2>&1
check "reload with max_connections_per_user = 400, max_connections = 300" \
	eq "$(grep -c 'configuration reloaded' "$T/agent.log")" 1
socks0=$(agent_sockets)
as "$ALICE" "$PY" "$HOLD" "$SOCK" 300 40 "$T/alice-out/2" --reconnect &
ALICE2=$!
BG_PIDS="$BG_PIDS $ALICE2"
wait_for "$T/alice-out/2" connects 300
sleep 0.5
held=$(( $(agent_sockets) - socks0 ))
check "the agent holds $ALICE's 300 idle connections ($held more sockets, 295 to 300)" \
	between "$held" 295 300
cpu0=$(agent_cpu)
sleep 5
cpu_held=$(awk -v a="$cpu0" -v b="$(agent_cpu)" 'BEGIN { printf "%.2f", (b - a) / 5 }')
note "agent CPU, seconds per second over 5 s: $cpu_idle before, $cpu_held with 300 idle connections (one read-deadline round of closes and reconnects included)"
check "agent CPU with 300 idle connections is low ($cpu_held CPU-s/s < 0.3; a busy loop would be 1)" \
	between "$cpu_held" 0 0.3

# root's idle connections take the 16 reserved slots, then evict alice's
"$PY" "$HOLD" "$SOCK" 24 8 "$T/root.out" &
ROOTH=$!
BG_PIDS="$BG_PIDS $ROOTH"
wait_for "$T/root.out" connects 24
out=$(as "$BOB" "$CLI" --config "$CONF" status 2>&1)
st=$?
note "bob: $out"
check "$BOB is refused with the error line while 300 unprivileged connections are open (exit $st)" \
	eq "$st:$(grep -c 'too many connections (agent.max_connections = 300' <<<"$out")" "1:1"

# hooks while the table is full and a storm of 2,000 processes runs
"$WL/spawnstorm" 2000 /bin/true >"$T/storm.out" 2>&1 &
STORM=$!
BG_PIDS="$BG_PIDS $STORM"
max_lat=0
bad_hooks=
for i in $(seq 1 10); do
	hook_pair "SH$i"
	echo "SH$i $T_CALL" >>"$T/calls"
	for l in "$LAT_START" "$LAT_END"; do
		max_lat=$(awk -v a="$max_lat" -v b="$l" 'BEGIN { print (b > a) ? b : a }')
	done
	[ "$HOOK_ST" = 0:0 ] || bad_hooks="$bad_hooks SH$i($HOOK_ST)"
done
wait "$STORM"
reaped "$STORM"
note "storm: $(cat "$T/storm.out")"
check "10 job-start/job-end pairs during the storm, with 300 + 24 connections open: all exit 0${bad_hooks:+ (failed:$bad_hooks)}, slowest $max_lat s (< 1 s)" \
	eq "${bad_hooks:-none}:$(between "$max_lat" 0 1 && echo y)" "none:y"
check "the storm ran 2000 processes, none failed" \
	eq "$(kv "$(cat "$T/storm.out")" count):$(kv "$(cat "$T/storm.out")" failed)" "2000:0"
wait "$ROOTH"
reaped "$ROOTH"
note "root, 24 idle connections: $(cat "$T/root.out")"
check "root's 24 idle connections were all admitted (refused 0+0) and closed at the read deadline" \
	eq "$(stat_of "$T/root.out" connects):$(stat_of "$T/root.out" refused_user):$(stat_of "$T/root.out" refused_total):$(stat_of "$T/root.out" timed_out)" "24:0:0:24"
evicted=$(stat_of "$T/alice-out/2" evicted)
check "$ALICE's oldest connections were closed for root's ($evicted, at least 8)" \
	between "$evicted" 8 300

out=$(cli status 2>&1)
check "status after the storm: events_dropped 0 ($(grep '^events_dropped' <<<"$out"))" \
	eq "$(grep -c '^events_dropped: 0$' <<<"$out")" 1
touch "$T/alice-out/2.stop"
wait "$ALICE2"
reaped "$ALICE2"
note "$ALICE, 300 held with reconnects: $(cat "$T/alice-out/2")"

# the jobs' start times: within 1 s of the hook call
sleep 1.5
worst=0
missing=
while read -r job t; do
	rec=$(q "select time from record where type = 'job' and job_id = '$job' and json_extract(json, '$.phase') = 'start';")
	if [ -z "$rec" ]; then
		missing="$missing $job"
		continue
	fi
	d=$(awk -v a="$rec" -v b="$t" 'BEGIN { d = a - b; if (d < 0) d = -d; print d }')
	worst=$(awk -v a="$worst" -v b="$d" 'BEGIN { print (b > a) ? b : a }')
done <"$T/calls"
check "every job's recorded start is within 1 s of its hook call (worst $worst s)${missing:+; missing:$missing}" \
	eq "${missing:-none}:$(between "$worst" 0 1 && echo y)" "none:y"

stop_agent
check "agent stops cleanly (exit $?)" eq "$?" 0
finish
