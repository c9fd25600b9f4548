#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# bench/top.sh BUILD_DIR
#
# What open `jobtrace top` views cost the agent.  One job of PROCS live
# processes (sleeps, run R of pipeline P) is sampled every SAMPLE_S seconds
# by an agent with a scratch configuration; then, for WINDOW_S seconds each:
#   none   no view open
#   root   VIEWS views as root in tmux (they read the store themselves; the
#          agent answers one "flush" request a frame)
#   user   VIEWS views as user nobody, whose job it is (each view keeps
#          one query child of the agent, jobtrace --serve-query with
#          follow=1, which sends it a frame a second); the views show its
#          PROCS processes
# For each it prints the agent's CPU over the window as % of one core: its
# own (utime + stime of /proc/PID/stat) and with its children's (those it
# reaped, cutime + cstime, and those still running: the views' query
# children).  Needs root and tmux.
set -u
. "$(dirname "$0")/agent.sh"
. "$(dirname "$0")/../scripts/pidtree.sh"
BUILD=$(cd "${1:?usage: bench/top.sh BUILD_DIR}" && pwd) || exit 2
PROCS=${PROCS:-50}
VIEWS=${VIEWS:-3}
WINDOW_S=${WINDOW_S:-30}
SAMPLE_S=${SAMPLE_S:-1}
T=$(mktemp -d /tmp/jobtrace-benchtop.XXXXXX)
CLI=$BUILD/jobtrace
AGENT_PID=
JOB_PID=
TAG=benchtop$$

# Stop the views, the job and the agent, remove the scratch folder.
cleanup() {
	for i in $(seq 1 "$VIEWS"); do
		tmux kill-session -t "$TAG-root-$i" 2>/dev/null
		tmux kill-session -t "$TAG-user-$i" 2>/dev/null
	done
	# the job is a session of its own: its sleeps go with it
	[ -n "$JOB_PID" ] && kill -- -"$JOB_PID" 2>/dev/null
	[ -n "$AGENT_PID" ] && kill "$AGENT_PID" 2>/dev/null && wait "$AGENT_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { echo "bench/top.sh: run as root" >&2; exit 2; }
command -v tmux >/dev/null || { echo "bench/top.sh: needs tmux" >&2; exit 2; }
chmod 755 "$T"
cat >"$T/jobtrace.conf" <<EOF
agent = { state_dir = "$T/state"; run_dir = "$T/run";
    rules_dir = "$(cd "$(dirname "$0")/.." && pwd)/lua-rules"; };
collector = { sample_interval = $SAMPLE_S; };
EOF
chmod 644 "$T/jobtrace.conf"
bench_agent_start "$BUILD" "$T/jobtrace.conf"
# the views' user's job (`jobtrace run` as nobody): the user views see it
setsid runuser -u nobody -- "$CLI" --config "$T/jobtrace.conf" run \
	--job "$TAG" --run R --pipeline P -- \
	bash -c "for i in \$(seq $PROCS); do sleep 3600 & done; wait" &
JOB_PID=$!
sleep $((SAMPLE_S * 3 + 2))

# The agent's own CPU ticks, and with its children's: those it reaped
# (cutime, cstime) and those still running (a view's query child lives as
# long as the view), so that a child alive across a window counts only
# what it used in it.
ticks() {
	local own all c
	read -r own all <<<"$(awk '{ print $14 + $15, $14 + $15 + $16 + $17 }' "/proc/$AGENT_PID/stat")"
	for c in $(below "$AGENT_PID"); do
		all=$((all + $(awk '{ print $14 + $15 }' "/proc/$c/stat" 2>/dev/null || echo 0)))
	done
	echo "$own $all"
}

# Measure one window: "NAME own% all%".
window() {
	local a0 c0 a1 c1 hz t0 t1
	hz=$(getconf CLK_TCK)
	read -r a0 c0 <<<"$(ticks)"
	t0=$(date +%s.%N)
	sleep "$WINDOW_S"
	read -r a1 c1 <<<"$(ticks)"
	t1=$(date +%s.%N)
	awk -v n="$1" -v a="$((a1 - a0))" -v c="$((c1 - c0))" -v hz="$hz" \
		-v w="$(awk -v x="$t0" -v y="$t1" 'BEGIN { print y - x }')" \
		'BEGIN { printf "%-6s %8.2f %% %8.2f %%\n", n, 100 * a / hz / w, 100 * c / hz / w }'
}

echo "agent CPU with $PROCS live job processes sampled every $SAMPLE_S s, $VIEWS views, ${WINDOW_S} s windows"
printf '%-6s %10s %10s\n' view own "+children"
window none
for i in $(seq 1 "$VIEWS"); do
	tmux new-session -d -s "$TAG-root-$i" -x 120 -y 40 \
		"$CLI --config $T/jobtrace.conf top --run R"
done
sleep 2
window root
for i in $(seq 1 "$VIEWS"); do
	tmux kill-session -t "$TAG-root-$i"
	tmux new-session -d -s "$TAG-user-$i" -x 120 -y 40 \
		"runuser -u nobody -- $CLI --config $T/jobtrace.conf top --run R"
done
sleep 2
window user
tmux capture-pane -p -t "$TAG-user-1" | head -n 5 >&2
