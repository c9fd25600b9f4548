#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Quick start: build, start jobtraced on the embedded SQLite store, run a
# short pipeline as a job and print `jobtrace report` and `jobtrace cost`
# for it.  Run as root.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$top/build}
demo=$build/demo
if [ -z "${BUILD_DIR:-}" ] && [ -f "$top/config.status" ]; then
	# configured in the tree (README's Install): a second build in
	# build/ is refused by configure, so the demo uses that one
	build=$top
	demo=$top/build/demo
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: run as root (BPF programs need it): sudo $0" >&2
	exit 2
fi
"$top/scripts/build.sh" "$build"

mkdir -p "$demo"
conf=$demo/jobtrace.conf
cat > "$conf" <<CONF
# demo configuration: everything else keeps its default
agent = { state_dir = "$demo/state"; run_dir = "$demo/run"; rules_dir = "$top/lua-rules"; };
collector = { sample_interval = 1.0; };
store = { flush_interval = 0.2; };
# a made-up price, so that the job's cost shows: 0.40 USD a node-hour
cost = { node_hour = 0.40; };
CONF
jt() { "$build/jobtrace" --config "$conf" "$@"; }

"$build/jobtraced" --config "$conf" --foreground 2> "$demo/agent.log" &
agent=$!
trap 'kill $agent 2>/dev/null; wait $agent 2>/dev/null || true' EXIT
i=0
until jt status > /dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $agent 2>/dev/null; then
		echo "demo: jobtraced did not start; its log:" >&2
		cat "$demo/agent.log" >&2
		exit 1
	fi
	sleep 0.1
done
job=demo-$$
echo "== jobtraced is running (log: $demo/agent.log); running demo/pipeline.sh as job $job (2 CPUs, 1 GiB asked)"
jt run --job "$job" --run "$job" --pipeline demo --cpus 2 --mem-mb 1024 --time-limit 600 \
	-- sh "$top/demo/pipeline.sh" || true
echo
echo "== jobtrace report --job $job"
jt report --job "$job"
echo
echo "== jobtrace cost --job $job --by tool"
jt cost --job "$job" --by tool
echo
echo "== jobtrace status"
jt status | grep -E '^(uptime_s|events_seen|events_dropped|records_spooled|sink.sqlite.delivered|last_error):'
echo
echo "Try: $build/jobtrace --config $conf export --since 5m --format ndjson | head -n 2"
