# SPDX-License-Identifier: GPL-2.0-or-later
# bench/agent.sh - sourced by the benches: start BUILD's agent on a
# configuration file and wait (30 s at most) until it answers status.
#
# bench_agent_start BUILD CONF: AGENT_PID is its pid; exits 1 with the end
# of its log when it died or does not answer.  Its log is CONF's folder's
# agent.log (appended to: one log for all the agents of a bench run).
bench_agent_start() {
	local log
	log="$(dirname "$2")/agent.log"
	"$1/jobtraced" --config "$2" --foreground >>"$log" 2>&1 &
	AGENT_PID=$!
	for _ in $(seq 1 1500); do
		kill -0 "$AGENT_PID" 2>/dev/null || break
		timeout 20 "$1/jobtrace" --config "$2" status >/dev/null 2>&1 && return 0
		sleep 0.02
	done
	echo "bench: the agent did not start or does not answer 'jobtrace status'; end of $log:" >&2
	tail -n 20 "$log" >&2
	exit 1
}

# bench_close_fds: close this shell's fds above 2 but its script's (255):
# `flock LOCK bench/X.sh` passes the lock's fd on, every workload process
# would inherit it, and files' exit walk names a regular file that no
# pass has seen in each one (bench/files-latest.txt).  The figures are of
# processes with fds 0-2 only.
bench_close_fds() {
	local f n
	# no redirection on the loop: bash would keep the loop's stderr on an
	# fd of 10 or more while it runs, the glob would list it, and closing
	# it would lose stderr for the rest of the script (closing an fd that
	# is not open, as the glob's own, is no error)
	for f in /proc/$$/fd/*; do
		n=${f##*/}
		[ "$n" -gt 2 ] && [ "$n" -ne 255 ] && eval "exec $n>&-"
	done
	return 0
}
