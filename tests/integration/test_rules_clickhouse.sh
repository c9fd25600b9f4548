#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules_clickhouse.sh - the fleet's rules in its ClickHouse (Debian's
# clickhouse-server on loopback, tests/clickhouse/ch-env.sh):
#
#   - `jobtrace rules push DIR --source clickhouse` stores one row whose
#     bundle is, byte for byte, a tar of DIR's files with a MANIFEST whose
#     SHA-256 is the row's sha256 (checked with GNU tar and sha256sum);
#   - broken folders are refused by the push itself, exit 2 naming the file
#     and line, with nothing inserted (rows counted): a Lua syntax error, a
#     failing self-test, an error at load, a rule that fails on a plain
#     exec, a file that is not UTF-8 text... (the classes of the issue and
#     shapes it does not list);
#   - two agents on this machine (separate state and run folders, their own
#     node names, rules.source = "clickhouse", rules.poll_interval = 1 s)
#     converge: an exec poll_interval + 2 s after a push is named by the
#     new rules in both agents' stores, and the time from the push to the
#     first exec so named is measured;
#   - `jobtrace rules status --source clickhouse` shows both nodes on the
#     pushed version, none behind, none refused;
#   - node-b wants signed bundles (rules.public_key): an unsigned push is
#     loaded by node-a and refused by node-b, which keeps the last good
#     rules, and rules status says node-b is behind and refused, and why.
#
# Needs root, kernel BTF, clickhouse-server, GNU tar and openssl.  Exit 0 pass, 1
# fail, 77 skipped, 99 hard error.

set -u
. "$(dirname "$0")/lib.sh"
. "$top_srcdir/tests/clickhouse/ch-env.sh"
need_built "$AGENT" "$CLI"
need_commands tar sha256sum openssl
if [ ! -x /usr/sbin/clickhouse-server ]; then
	echo "# error: clickhouse-server is missing (scripts/install-deps.sh installs it)"
	exit 99
fi
start_watchdog 300

POLL=1.0
B=$T/b			# the second agent's folders
B_PID=
# Stop the second agent as lib.sh's stop_agent stops the first.
stop_b() {
	local first=$AGENT_PID st
	AGENT_PID=$B_PID
	stop_agent
	st=$?
	AGENT_PID=$first
	reaped "$B_PID"
	B_PID=
	return $st
}
extra_cleanup() {
	stop_b
	ch_stop >/dev/null 2>&1
	[ "$failed" -eq 0 ] && [ -z "${JOBTRACE_TEST_KEEP:-}" ] && ch_destroy >/dev/null 2>&1
}

chmod 755 "$T"	# the clickhouse user reaches its folder in it
ch_pick_ports
if ! ch_start "$T/ch"; then
	check "clickhouse-server starts on 127.0.0.1:$CH_HTTP_PORT" false
	finish
fi
"$CLI" schema clickhouse | ch_multiquery >"$T/schema.out" 2>&1
check "the schema applies, the rules table with it ($(ch_query 'SELECT version()'))" \
	eq "$(ch_query "SELECT count() FROM system.tables WHERE database = 'jobtrace' AND name = 'rules'")" 1
printf 'user = jobtrace\npassword = jt-secret\n' >"$T/ch.cred"
chmod 600 "$T/ch.cred"
SINKS="sinks = ( { type = \"clickhouse\"; name = \"fleet\"; url = \"$CH_URL\";
    credentials_file = \"$T/ch.cred\"; batch_age = 0.3; retry_max = 1.0; } );"
RULES="rules = { source = \"clickhouse\"; poll_interval = $POLL; };"
# node-b wants bundles signed by this key
openssl genpkey -algorithm ed25519 -out "$T/key.pem" 2>/dev/null &&
	openssl pkey -in "$T/key.pem" -pubout -out "$T/pub.pem" 2>/dev/null
RULES_B="rules = { source = \"clickhouse\"; poll_interval = $POLL; public_key = \"$T/pub.pem\"; };"
# the CLI's configuration: the sink only
printf '%s\n' "$SINKS" >"$T/cli.conf"

# Rows of the rules table.
rows() {
	ch_query "SELECT count() FROM jobtrace.rules"
}

# jobtrace rules ... with the CLI's configuration; output in $OUT, status $ST.
rules_cli() {
	OUT=$(timeout 60 "$CLI" --config "$T/cli.conf" rules "$@" 2>&1)
	ST=$?
}

# A rules folder $1: the default rules and a site file that names sleep
# $2 (with a self-test saying so), plus what $3 adds to that file.
make_rules() {
	mkdir -p "$1"
	cp "$top_srcdir"/lua-rules/*.lua "$1/"
	cat >"$1/50-fleet.lua" <<LUA
jobtrace.rule("fleet-naming", function(p, d)
  if d.tool == "sleep" then d.tool = "$2"; d.category = "test" end
end)
jobtrace.selftest{ argv = { "sleep", "1" }, expect = { tool = "$2" } }
${3:-}
LUA
}

# ---- 1. nothing pushed yet -------------------------------------------------------
rules_cli status --source clickhouse
check "status before any push: exit 0, 'latest push: none', no node ($ST)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c '^latest push: none')|$(printf '%s\n' "$OUT" | grep -c '^nodes: 0,')" "0|1|1"

# ---- 2. a good push ----------------------------------------------------------------
make_rules "$T/good1" fleet-v1
rules_cli push "$T/good1" --source clickhouse --version v1 --sign "$T/key.pem"
note "$OUT"
check "rules push of a good folder exits 0 ($ST)" eq "$ST" 0
check "one row, version v1" eq "$(ch_query "SELECT count(), any(version) FROM jobtrace.rules")" "$(printf '1\tv1')"
SHA1=$(ch_query "SELECT sha256 FROM jobtrace.rules")
size=$(ch_query "SELECT size FROM jobtrace.rules")
clickhouse-client --host 127.0.0.1 --port "$CH_TCP_PORT" --format TabSeparatedRaw \
	--query "SELECT bundle FROM jobtrace.rules" | head -c "$size" >"$T/v1.tar"
check "the row's size is the stored bundle's length ($size)" \
	eq "$(ch_query "SELECT length(bundle) FROM jobtrace.rules")" "$size"
check "the stored bundle's MANIFEST hashes to the row's sha256 (GNU tar, sha256sum)" \
	eq "$(tar -xOf "$T/v1.tar" MANIFEST | sha256sum | cut -d' ' -f1)" "$SHA1"
check "push says what it stored (its sha256)" \
	eq "$(printf '%s\n' "$OUT" | grep -c "pushed rules version v1 (sha256 $SHA1,")" 1
mkdir -p "$T/v1.x"
tar -xf "$T/v1.tar" -C "$T/v1.x"
check "the bundle holds MANIFEST, its signature and every .lua file of the folder, byte for byte" \
	eq "$(cd "$T/v1.x" && ls | grep -vx 'MANIFEST\(.sig\)\?' | tr '\n' ' ')|$(test -s "$T/v1.x/MANIFEST" && echo manifest)|$(diff -r -x 'MANIFEST*' "$T/good1" "$T/v1.x" >/dev/null && echo same)" \
	"$(cd "$T/good1" && ls | tr '\n' ' ')|manifest|same"
check "the signature verifies with the public key (openssl pkeyutl)" \
	openssl pkeyutl -verify -pubin -inkey "$T/pub.pem" -rawin -in "$T/v1.x/MANIFEST" \
	-sigfile "$T/v1.x/MANIFEST.sig"

# ---- 3. broken folders are refused by push itself, nothing inserted -----------------
# Push $T/bad (what is wrong with it: $1) and expect exit 2, one message
# naming $2 (and not the folder push unpacked the bundle into), no new row.
refused() {
	local what=$1 want=$2
	rules_cli push "$T/bad" --source clickhouse --version bad
	note "$what: $(printf '%s' "$OUT" | head -n 3)"
	check "push refuses $what: exit 2, the message names $want, no row added" \
		eq "$ST|$(printf '%s\n' "$OUT" | grep -c -- "^jobtrace rules push: .*$want")|$(printf '%s\n' "$OUT" | grep -c /jobtrace-bundle-)|$(rows)" "2|1|0|1"
	rm -rf "$T/bad"
}
make_rules "$T/bad" fleet-v1 'jobtrace.rule("broken", function(p, d)
  d.tool = "x"
'
refused "a Lua syntax error" "$T/bad/50-fleet.lua:[0-9]*:"
make_rules "$T/bad" fleet-v1 'jobtrace.selftest{ argv = { "sleep", "2" }, expect = { tool = "sleepy" } }'
refused "a failing self-test" "50-fleet.lua"
make_rules "$T/bad" fleet-v1 'error("not today")'
refused "an error while the file loads" "$T/bad/50-fleet.lua:[0-9]*: .*not today"
make_rules "$T/bad" fleet-v1 'jobtrace.rule("true-fails", function(p, d)
  if p.argv[2] == "-c" and p.argv[3] == "true" then error("not for me") end
end)'
refused "a rule that fails on a plain exec (sh -c true) though every self-test passes" \
	"classifying /bin/sh -c true: $T/bad/50-fleet.lua:6: not for me"
make_rules "$T/bad" fleet-v1
printf '\xff\xfe-- not utf-8 \x00\n' >"$T/bad/60-binary.lua"
refused "a file that is not Lua text" "60-binary.lua"
mkdir -p "$T/bad"
refused "a folder with no rule file" "$T/bad"
rules_cli push "$T/good1" --source sqlite
check "push --source sqlite: exit 2 naming the argument ($ST)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c -- "--source 'sqlite'")|$(rows)" "2|1|1"
rules_cli push "$T/good1"
check "push without --source: exit 2 ($ST)" eq "$ST|$(rows)" "2|1"
rules_cli push "$T/good1" --source clickhouse:nosuch
check "push to a sink the configuration lacks: exit 2 naming it ($ST)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c "no clickhouse sink named 'nosuch' in $T/cli.conf")" "2|1"

# ---- 4. two agents follow the fleet store ---------------------------------------------
# The tool the store $1 recorded for pid $2 (lib.sh's row_wait on it).
tool_in() {
	DB=$1 row_wait "$2" tool_name
}
start_agent "hostname = \"node-a\";" "$SINKS
$RULES" || finish
mkdir -p "$B/run"
cat >"$B/jobtrace.conf" <<CONFEOF
log = { level = "info"; };
agent = { state_dir = "$B/state"; run_dir = "$B/run"; hostname = "node-b"; };
collector = { sample_interval = 1.0; };
store = { flush_interval = 0.2; };
$SINKS
$RULES_B
CONFEOF
"$AGENT" --config "$B/jobtrace.conf" --foreground >>"$B/agent.log" 2>&1 &
B_PID=$!
BG_PIDS="$BG_PIDS $B_PID"
up=no
for _ in $(seq 1 1000); do
	kill -0 "$B_PID" 2>/dev/null || break
	timeout 5 "$CLI" --config "$B/jobtrace.conf" status >/dev/null 2>&1 && { up=yes; break; }
	sleep 0.02
done
check "a second agent (node-b, its own state and run folders) answers status" eq "$up" yes
[ "$up" = yes ] || { note "$(tail -n 20 "$B/agent.log")"; finish; }

# Run sleep; print its pid once both stores named it $1 (or after 5 s).
sleep_named() {
	sleep 0.05 &
	local pid=$!
	wait $pid
	printf '%s|%s' "$(tool_in "$DB" $pid)" "$(tool_in "$B/state/jobtrace.db" $pid)"
}
sleep $(awk -v p="$POLL" 'BEGIN { print p + 2 }')
check "v1, pushed before the agents started, names sleep in both agents" \
	eq "$(sleep_named)" "fleet-v1|fleet-v1"

make_rules "$T/good2" fleet-v2
rules_cli push "$T/good2" --source clickhouse --version v2 --sign "$T/key.pem"
T_PUSH=$(now)
check "push of v2 exits 0 ($ST)" eq "$ST|$(rows)" "0|2"
SHA2=$(ch_query "SELECT sha256 FROM jobtrace.rules WHERE version = 'v2'")
# the measured figure: from the push to the first sleep both name fleet-v2
conv=
while awk -v a="$T_PUSH" -v b="$(now)" -v p="$POLL" 'BEGIN { exit !(b - a < p + 10) }'; do
	sleep 0.1 &
	p=$!
	wait $p
	ta=$(now)
	if [ "$(tool_in "$DB" $p)|$(tool_in "$B/state/jobtrace.db" $p)" = "fleet-v2|fleet-v2" ]; then
		conv=$(awk -v a="$T_PUSH" -v b="$ta" 'BEGIN { printf "%.2f", b - a }')
		break
	fi
done
note "push to the first exec both agents name by v2: ${conv:-never} s (poll_interval $POLL s)"
T_NEXT=$(awk -v a="$T_PUSH" -v p="$POLL" -v b="$(now)" 'BEGIN { d = a + p + 2 - b; print (d > 0 ? d : 0) }')
sleep "$T_NEXT"
check "an exec poll_interval + 2 s after the push is named by v2 in both agents" \
	eq "$(sleep_named)" "fleet-v2|fleet-v2"

# ---- 5. rules status sees both nodes on v2 ----------------------------------------------
st_json=
for _ in $(seq 1 50); do
	rules_cli status --source clickhouse --format json
	st_json=$OUT
	[ "$(printf '%s' "$st_json" | grep -o '"nodes_behind":0')" ] &&
		[ "$(printf '%s' "$st_json" | grep -o '"node":"node-[ab]","version":"v2","sha256":"'"$SHA2"'"' | wc -l)" = 2 ] && break
	sleep 0.2
done
note "$st_json"
check "rules status --format json: latest v2, node-a and node-b on v2's sha256, none behind, none refused" \
	eq "$(printf '%s' "$st_json" | grep -c '"latest":{"version":"v2","sha256":"'"$SHA2"'"')|$(printf '%s' "$st_json" | grep -o '"node":"node-[ab]","version":"v2","sha256":"'"$SHA2"'"' | wc -l)|$(printf '%s' "$st_json" | grep -o '"nodes_behind":0,"nodes_refused":0,"nodes_elsewhere":0')" \
	'1|2|"nodes_behind":0,"nodes_refused":0,"nodes_elsewhere":0'
rules_cli status --source clickhouse
note "$OUT"
check "rules status (text): two nodes, none behind, both current" \
	eq "$(printf '%s\n' "$OUT" | grep -c '^nodes: 2, 0 behind, 0 refused a bundle, 0 on another rules source')|$(printf '%s\n' "$OUT" | grep -c '^node-[ab] .* current$')" "1|2"

# ---- 6. an unsigned push: node-a loads it, node-b refuses it and says so ------------------
make_rules "$T/good3" fleet-v3
rules_cli push "$T/good3" --source clickhouse --version v3
T_PUSH=$(now)
check "push of v3, unsigned, exits 0 ($ST)" eq "$ST|$(rows)" "0|3"
SHA3=$(ch_query "SELECT sha256 FROM jobtrace.rules WHERE version = 'v3'")
sleep "$(awk -v a="$T_PUSH" -v p="$POLL" -v b="$(now)" 'BEGIN { d = a + p + 2 - b; print (d > 0 ? d : 0) }')"
check "poll_interval + 2 s later node-a names sleep by v3, node-b keeps v2 (it wants a signature)" \
	eq "$(sleep_named)" "fleet-v3|fleet-v2"
for _ in $(seq 1 50); do
	rules_cli status --source clickhouse --format json
	printf '%s' "$OUT" | grep -q '"nodes_behind":1,"nodes_refused":1' && break
	sleep 0.2
done
note "$OUT"
check "rules status --format json: node-a on v3; node-b on v2, behind and refused, with the reason" \
	eq "$(printf '%s' "$OUT" | grep -o '"node":"node-a","version":"v3","sha256":"'"$SHA3"'","source":"clickhouse","error":"","time":"[^"]*","following":true,"behind":false,"refused":false' | wc -l)|$(printf '%s' "$OUT" | grep -o '"node":"node-b","version":"v2","sha256":"'"$SHA2"'","source":"clickhouse","error":"[^"]*sig[^"]*","time":"[^"]*","following":true,"behind":true,"refused":true' | wc -l)|$(printf '%s' "$OUT" | grep -o '"nodes_total":2,"nodes_behind":1,"nodes_refused":1')" \
	'1|1|"nodes_total":2,"nodes_behind":1,"nodes_refused":1'
rules_cli status --source clickhouse
note "$OUT"
check "rules status (text): node-b refused, its error shown; node-a current" \
	eq "$(printf '%s\n' "$OUT" | grep -c '^node-b .* refused$')|$(printf '%s\n' "$OUT" | grep -c '^ *error:  ')|$(printf '%s\n' "$OUT" | grep -c '^node-a .* current$')" "1|1|1"

stop_agent
check "agent node-a stops cleanly" eq "$?" 0
stop_b
check "agent node-b stops cleanly" eq "$?" 0

# ---- 7. usage errors and a server that is down --------------------------------------------
rules_cli status --source clickhouse --format yaml
check "status --format yaml: exit 2 naming it ($ST)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c -- "--format 'yaml'")" "2|1"
rules_cli push "$T/good1" --source clickhouse --format json
check "push --format: exit 2, an option of status only ($ST)" eq "$ST|$(rows)" "2|3"
ch_stop
rules_cli push "$T/good1" --source clickhouse --version v4
check "push with ClickHouse down: exit 1 naming its URL ($ST: $OUT)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c "^jobtrace rules push: clickhouse ${CH_URL}: ")" "1|1"
rules_cli status --source clickhouse
check "status with ClickHouse down: exit 1 naming its URL ($ST)" \
	eq "$ST|$(printf '%s\n' "$OUT" | grep -c "^jobtrace rules status: clickhouse ${CH_URL}: ")" "1|1"
finish
