#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_secrets.sh - secrets never stored: with the agent running and the
# default rules, run command lines that carry canary secrets (in shell
# strings, nested quotes, a header, a URL, an argv the kernel cuts inside a
# URL's password) and canaries the agent must never read (environment,
# stdin, file content).  After the agent stopped, no file it wrote (store
# with -wal/-shm, spool and ack files, run dir, its log) nor what its HTTP
# sink delivered holds a byte of any canary, while the records of these
# processes are there and redacted as expected.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
start_watchdog 120

BIN=$T/bin
mkdir -p "$BIN" "$T/recv"
# stand-ins that run nothing: mytool, x and curl are copies of true
for t in mytool x curl; do cp /bin/true "$BIN/$t"; done
python3 "$top_srcdir/tests/integration/http-receiver.py" "$T/recv/port" "$T/recv" &
RECV_PID=$!
BG_PIDS="$BG_PIDS $RECV_PID"
for _ in $(seq 1 50); do [ -s "$T/recv/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/recv/port" 2>/dev/null)
SINKS="sinks = ( { type = \"http\"; name = \"collector\";
  url = \"http://127.0.0.1:$PORT/ingest\"; batch_age = 0.3; retry_max = 1.0; } );"
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" "$SINKS" || finish

# The newest record of pid: "argv_truncated|argv" once it is stored.
record_of() {
	row_wait "$1" "json_extract(json, '\$.argv_truncated'), argv"
}

# ---- the canaries ----------------------------------------------------------------
# Every canary command runs in the background so that its pid is known.
# The test's own commands (sqlite3, grep) never carry a canary while the
# agent runs: it would record them.
export PATH="$BIN:$PATH"
sh -c "mytool --password canaryA1; true" &
p_a1=$!
bash -c 'x --password=\"canaryA2\"' &
p_a2=$!
# the same with a second command, so that bash itself stays and is recorded
bash -c 'x --password=\"canaryA2\"; true' &
p_a2b=$!
bash -c 'curl -H "Authorization: Bearer canaryA4" https://u:canaryA5@h' &
p_a4=$!
bash -c 'curl -H "Authorization: Bearer canaryA4" https://u:canaryA5@h; true' &
p_a4b=$!
# argv cut by the kernel (2,047 bytes kept) 10 bytes into the password
url="https://user:canaryA3xxxxxxxx@host"
pad=$(head -c $((2047 - 23 - ${#BIN} - 7 - 2)) /dev/zero | tr '\0' p)
"$BIN/mytool" "$pad" "$url" &
p_a3=$!
JT_CANARY_ENV=canaryE1 mytool env-check &
p_env=$!
printf 'canaryS1\n' | cat >/dev/null &
p_stdin=$!
printf 'password=canaryF1\n' >"$T/secret.txt"
cat "$T/secret.txt" >/dev/null &
p_file=$!
wait $p_a1 $p_a2 $p_a2b $p_a4 $p_a4b $p_a3 $p_env $p_stdin $p_file

# ---- the records are there, redacted --------------------------------------------
r=$(record_of $p_a1)
check "sh -c \"mytool --password ...; true\" is stored with the secret's bytes replaced ($r)" \
	eq "$r" '0|["sh","-c","mytool --password [REDACTED]; true"]'
r=$(record_of $p_a2)
check "bash -c 'x --password=\\\"...\\\"' (bash execs x in place) is stored redacted ($r)" \
	eq "$(printf '%s' "$r" | grep -c '^0|.*--password=\[REDACTED\]')" 1
r=$(record_of $p_a2b)
check "bash -c 'x --password=\\\"...\\\"; true' keeps the string but the secret ($r)" \
	eq "$r" '0|["bash","-c","x --password=[REDACTED]; true"]'
r=$(record_of $p_a4)
check "bash -c 'curl -H \"Authorization: Bearer ...\" https://u:...@h' is stored redacted ($r)" \
	eq "$(printf '%s' "$r" | grep -c 'Bearer \[REDACTED\].*https://u:\[REDACTED\]@h')" 1
r=$(record_of $p_a4b)
check "the same with '; true': header and URL redacted inside the string ($r)" \
	eq "$r" '0|["bash","-c","curl -H \"Authorization: Bearer [REDACTED]\" https://u:[REDACTED]@h; true"]'
r=$(record_of $p_a3)
last=$(row $p_a3 "json_extract(argv, '\$[#-1]')")
check "the cut command line is stored as cut, its last argument redacted (${r%%|*}, '$last')" \
	eq "${r%%|*}|$last" "1|https://user:[REDACTED]"
for p in $p_env $p_stdin $p_file; do
	r=$(record_of $p)
	check "the environment/stdin/file canary process $p is recorded (${r#*|})" \
		eq "$(printf '%s' "$r" | grep -c '^0|\["\(mytool\|cat\)"')" 1
done

# what gets delivered: wait until the sink has sent the canaries' records
for _ in $(seq 1 50); do
	[ "$(grep -c "\"pid\":$p_file," "$T/recv/records.ndjson" 2>/dev/null)" -ge 1 ] && break
	sleep 0.2
done
check "the HTTP sink delivered the canary processes' records" \
	eq "$(grep -c "\"pid\":$p_a1," "$T/recv/records.ndjson" 2>/dev/null)" 1

stop_agent
check "agent exits 0 on SIGTERM" eq "$?" 0

# ---- no byte of a canary anywhere the agent wrote -------------------------------
agent_files collector
files=$FILES
# the files are searchable: the redacted records are there in clear text
for f in "$DB" "$T/recv/records.ndjson"; do
	check "$(basename "$f") holds the redacted shell string in clear text" \
		eq "$(grep -a -c -F 'mytool --password [REDACTED]; true' "$f")" 1
done
check "the spool holds the redacted records in clear text" \
	between "$(cat "$T/state/spool/"* | grep -a -c -F 'mytool --password [REDACTED]; true')" 1 100
for c in canaryA1 canaryA2 canaryA3 canaryA4 canaryA5 canaryE1 canaryS1 canaryF1; do
	hits=$(printf '%s\n' "$files" | while read -r f; do grep -a -l -F "$c" "$f"; done)
	check "no file the agent wrote or sent holds $c (${hits:-none})" eq "$hits" ""
done
finish
