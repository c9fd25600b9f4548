#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_ps_flood.sh - an unprivileged user who keeps 2,000 processes and asks
# `jobtrace ps` from 8 clients in a loop gets what the agent's per-user
# budget allows (agent/lib/ratelimit.h), and a clear "busy" for the rest; the
# agent's CPU stays small and root's hook (job-start --pid, job-end) keeps
# its latency.  The figures are printed: the agent's CPU from
# /proc/PID/stat over the flood, the hook's round trips before and during
# it.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/userdel, setpriv.
# Exit 0 pass, 1 fail, 77 skipped, 99 hard error.  Makes the user
# jt-pf-user and removes it.
#
# Run:  make check TESTS=tests/integration/test_ps_flood.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_commands --skip useradd userdel setpriv
need_built "$AGENT" "$CLI"
start_watchdog 240

U=jt-pf-user
J=jt-pf-$$
NPROC=2000	# the user's sleeping processes: ps lists them all
CLIENTS=8
FLOOD_S=10
ROUNDS=15	# hook round trips before and during the flood
# the budget of agent/lib/ratelimit.h: RATE_USER_UNITS_S a second, at most
# RATE_USER_BURST saved, an answer costs 1 + its bytes / RATE_UNIT_BYTES
RATE=10
BURST=20
UNIT=16384
SPAWNER=

# The user and its processes are this test's leftovers.
extra_cleanup() {
	if [ -n "$SPAWNER" ]; then
		kill -KILL -- -"$SPAWNER" 2>/dev/null
		wait "$SPAWNER" 2>/dev/null
	fi
	sleep 0.2
	id -u $U >/dev/null 2>&1 && userdel $U 2>/dev/null
}

# The agent's CPU time so far in seconds (utime + stime of /proc/PID/stat).
agent_cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' \
		"/proc/$AGENT_PID/stat"
}

# $ROUNDS round trips of root's hook (job-start --pid, job-end), one per
# line in ms, into file $1.
hook_rounds() {
	local i t0 t1
	: >"$1"
	for i in $(seq 1 $ROUNDS); do
		t0=$(date +%s%N)
		cli job-start --strict --job "$J-$2-$i" --scheduler test --pid $HOOKED >/dev/null 2>&1 &&
			cli job-end --strict --job "$J-$2-$i" --scheduler test >/dev/null 2>&1 ||
			echo "failed" >>"$1.err"
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >>"$1"
		sleep 0.2
	done
}

# "median=.. max=.." of the numbers in file $1.
stats() {
	sort -n "$1" | awk '{ v[NR] = $1 } END { printf "median=%d max=%d", v[int((NR + 1) / 2)], v[NR] }'
}

userdel $U >/dev/null 2>&1
useradd -M -N -s /usr/sbin/nologin $U || { echo "# error: useradd $U failed"; exit 99; }
GID_U=$(id -g $U)
chmod 711 "$T"
F=$T/flood	# the clients' answers, the user's to write
mkdir "$F"
chown $U "$F"

start_agent || finish
sleep 300 &
HOOKED=$!	# root's process the hook ties to its jobs
BG_PIDS="$BG_PIDS $HOOKED"

# the user's processes, in a session of their own (killed as a group)
setpriv --reuid=$U --regid="$GID_U" --init-groups -- setsid bash -c \
	'for i in $(seq 1 '$NPROC'); do sleep 600 & done; echo up >"$1"; wait' sh "$T/up" \
	>/dev/null 2>&1 &
SPAWNER=$!
for _ in $(seq 1 100); do
	[ -s "$T/up" ] && break
	sleep 0.1
done
sleep 2	# a sample pass has seen them all
setpriv --reuid=$U --regid="$GID_U" --init-groups -- "$CLI" --config "$CONF" ps >"$T/one.out" 2>&1
st=$?
LINES=$(($(wc -l <"$T/one.out") - 1))
BYTES=$(wc -c <"$T/one.out")
check "the user's ps answers (exit $st) with its $NPROC sleeping processes at least ($LINES lines, $BYTES bytes)" \
	eq "$st:$([ "$LINES" -ge $NPROC ] && echo yes)" "0:yes"

hook_rounds "$T/hook.before" before
note "root's hook round trip (job-start --pid + job-end, ms) before the flood: $(stats "$T/hook.before")"

# ---- the flood ------------------------------------------------------------------------------

# the agent's own CPU with nothing asked (samples of the user's processes)
I0=$(agent_cpu)
IT0=$(now)
sleep 3	# the user's budget is full again meanwhile
IDLE=$(awk -v a="$I0" -v b="$(agent_cpu)" -v t0="$IT0" -v t1="$(now)" \
	'BEGIN { printf "%.3f", (b - a) / (t1 - t0) }')
note "the agent's CPU with nothing asked: $IDLE s a second"
CPU0=$(agent_cpu)
T0=$(now)
for c in $(seq 1 $CLIENTS); do
	setpriv --reuid=$U --regid="$GID_U" --init-groups -- bash -c '
		end=$(($(date +%s) + $1))
		while [ "$(date +%s)" -lt "$end" ]; do
			"$2" --config "$3" ps >/dev/null 2>"$5"
			st=$?
			echo "$st $(cat "$5")" >>"$4"
		done' sh $FLOOD_S "$CLI" "$CONF" "$F/client.$c" "$F/err.$c" >/dev/null 2>&1 &
	BG_PIDS="$BG_PIDS $!"
done
hook_rounds "$T/hook.during" during
wait $(printf '%s\n' $BG_PIDS | grep -vx "$HOOKED")
T1=$(now)
CPU1=$(agent_cpu)
cat "$F"/client.[0-9]* >"$T/clients"
ASKED=$(wc -l <"$T/clients")
ANSWERED=$(grep -c '^0 $' "$T/clients")
BUSY=$(grep -c '^1 jobtrace: agent replied: error busy: ' "$T/clients")
OTHER=$((ASKED - ANSWERED - BUSY))
WALL=$(awk -v a="$T0" -v b="$T1" 'BEGIN { printf "%.2f", b - a }')
CPU=$(awk -v a="$CPU0" -v b="$CPU1" 'BEGIN { printf "%.2f", b - a }')
# what the budget allows over the flood: the saved burst, then the rate
COST=$((1 + BYTES / UNIT))
ALLOWED=$(awk -v b=$BURST -v r=$RATE -v w="$WALL" -v c=$COST 'BEGIN { printf "%d", (b + r * w) / c + 1 }')
note "flood: $CLIENTS clients, $WALL s: $ASKED ps asked, $ANSWERED answered, $BUSY busy, $OTHER other" \
	"agent CPU over the flood: $CPU s in $WALL s ($(awk -v c="$CPU" -v w="$WALL" 'BEGIN { printf "%.1f", 100 * c / w }')% of a core)" \
	"root's hook round trip (ms) during the flood: $(stats "$T/hook.during")" \
	"an answer of $BYTES bytes costs $COST units; the budget allows $ALLOWED in $WALL s"
[ "$OTHER" -gt 0 ] && note "other replies: $(grep -v -e '^0 $' -e 'error busy' "$T/clients" | sort | uniq -c | head -n 5)"
check "the user was answered at least once and at most $ALLOWED times in $WALL s ($ANSWERED of $ASKED)" \
	between "$ANSWERED" 1 "$ALLOWED"
check "every other ps got 'error busy' and exit 1 ($BUSY busy, $OTHER other)" eq "$OTHER" 0
EXTRA=$(awk -v c="$CPU" -v w="$WALL" -v i="$IDLE" 'BEGIN { printf "%.1f", 100 * (c / w - i) }')
check "the flood's cost to the agent, $EXTRA% of a core over its idle $IDLE s a second, is under 10%" \
	awk -v e="$EXTRA" 'BEGIN { exit !(e < 10) }'
check "root's hooks all went through during the flood" test ! -e "$T/hook.during.err"
MB=$(sort -n "$T/hook.before" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
MD=$(sort -n "$T/hook.during" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
check "root's hook round trip during the flood, median $MD ms, within 2 x before's $MB ms + 50 ms" \
	between "$MD" 0 $((2 * MB + 50))

# ---- the budget comes back ------------------------------------------------------------------

WAIT=$(grep -o 'try again in [0-9.]* s' "$T/clients" | awk '{ if ($4 > m) m = $4 } END { print m + 0 }')
sleep "$WAIT"
setpriv --reuid=$U --regid="$GID_U" --init-groups -- "$CLI" --config "$CONF" ps >"$T/after.out" 2>&1
check "after the longest wait a busy reply named ($WAIT s), the user's ps is answered (exit $?)" eq "$?" 0
check "'jobtrace status' counts the busy replies (control_busy $(status_of control_busy), $BUSY seen)" \
	eq "$(status_of control_busy)" "$BUSY"

kill "$HOOKED"
wait "$HOOKED" 2>/dev/null
reaped "$HOOKED"
finish
