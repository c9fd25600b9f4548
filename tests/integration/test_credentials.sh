#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_credentials.sh - a sink's secrets are root's: `jobtrace status`,
# which any user may run, shows no password, query string or header of a
# sink, and the secrets can live in a credentials_file that only root may
# read while every user's CLI still works from the main file.
#
# 1. The old way: an HTTP sink whose url holds a password and a token and
#    whose headers hold another, in a jobtrace.conf every user can read.
#    The agent delivers with them (the collector sees them), warns that
#    the file holds them, and neither a user's nor root's status shows
#    one of the canaries.
# 2. The new way: the url plain, the secrets (user, password, header,
#    query) in credentials.d/collector, root's, mode 600.  The collector
#    sees each; the user's status works (the CLI does not read the file)
#    and shows none; no warning.  A reload with the file made readable by
#    others is refused and the running configuration kept.
# 3. Refused at start, exit status 2, naming the file: the file readable
#    by others, a folder above it writable by others, a link to it;
#    `jobtraced --check-config` too.
#
# Needs root, kernel BTF, python3, useradd/userdel/runuser.  Exit 0 pass,
# 1 fail, 77 skipped, 99 hard error.  Makes the user jt-cr-alice and
# removes it.
#
# Run:  make check TESTS=tests/integration/test_credentials.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands --skip useradd userdel runuser
need_commands python3 base64
ALICE=jt-cr-alice
PW=jt-cr-url-password-$$	# the old way's canaries
TOK=jt-cr-url-token-$$
HDR=jt-cr-header-$$
CPW=jt-cr-file-password-$$	# the credentials file's
CTOK=jt-cr-file-token-$$
CHDR=jt-cr-file-header-$$
CRED=$T/etc/credentials.d/collector

# The test's user goes with it.
extra_cleanup() {
	id -u "$ALICE" >/dev/null 2>&1 && userdel "$ALICE" 2>/dev/null
}
start_watchdog 180

# The canaries as grep patterns, in files (in an argv, the agent would
# record them: a program's own argv is no secret of a sink's).
printf '%s\n' "$PW" "$TOK" "$HDR" "$CPW" "$CTOK" "$CHDR" >"$T/canaries"
printf '%s\n' "$CPW" "$CTOK" "$CHDR" >"$T/file-canaries"

# How many lines of file $1 hold a canary.
canaries() {
	grep -c -f "$T/canaries" "$1"
}

# Wait up to 10 s until the collector logged a request for path $1.
wait_request() {
	for _ in $(seq 1 100); do
		awk -F'\t' -v p="$1" '$1 == 200 && index($7, p) == 1' \
			"$T/recv/requests.log" 2>/dev/null | grep -q . && return 0
		sleep 0.1
	done
	return 1
}

# The first logged request for path $1: "authorization|x-test|path".
request_of() {
	awk -F'\t' -v p="$1" '$1 == 200 && index($7, p) == 1 {
		print $4 "|" $5 "|" $7; exit }' "$T/recv/requests.log"
}

# The status of user $1 into $T/status.$1; its exit status.
status_as() {
	if [ "$1" = root ]; then
		cli status >"$T/status.$1" 2>&1
	else
		cli_as "$1" status >"$T/status.$1" 2>&1
	fi
}

# Start the agent alone, expecting it to refuse: its exit status and
# output ($T/refused.out).
refused_start() {
	timeout 20 "$AGENT" --config "$CONF" --foreground >"$T/refused.out" 2>&1
}

extra_cleanup
useradd -M -N -s /usr/sbin/nologin $ALICE || {
	echo "# error: useradd failed"
	exit 99
}
chmod 755 "$T"
mkdir -p "$T/recv"
python3 "$top_srcdir/tests/integration/http-receiver.py" "$T/recv/port" "$T/recv" &
RECV_PID=$!
BG_PIDS="$BG_PIDS $RECV_PID"
for _ in $(seq 1 50); do [ -s "$T/recv/port" ] && break; sleep 0.1; done
PORT=$(cat "$T/recv/port" 2>/dev/null)
RULES="rules_dir = \"$top_srcdir/lua-rules\";"

# ---- 1. secrets in jobtrace.conf ----------------------------------------------------

start_agent "$RULES" "sinks = ( { type = \"http\"; name = \"collector\";
  url = \"http://jt:$PW@127.0.0.1:$PORT/old?token=$TOK\";
  headers = [ \"X-Test: $HDR\" ]; batch_age = 0.2; retry_max = 1.0; } );" || finish
chmod 644 "$CONF"
status_as $ALICE
check "alice's status (exit $?) shows the sink's url as http://127.0.0.1:$PORT/old" \
	eq "$?:$(grep -c "^sink.collector.url: http://127.0.0.1:$PORT/old\$" "$T/status.$ALICE")" "0:1"
check "alice's status holds none of the canaries of the url and the header" \
	eq "$(canaries "$T/status.$ALICE")" 0
status_as root
check "root's status neither" eq "$(canaries "$T/status.root")" 0
check "the agent warns that $CONF:5, readable by others, holds the url's password" \
	grep -q "$CONF:5: sink \"collector\": its url holds a password, and $CONF is readable by other users (mode 0644): move it to a credentials_file" "$T/agent.log"
wait_request /old
check "the collector got them all: basic authentication, the header, the token" \
	eq "$(request_of /old)" "Basic $(printf 'jt:%s' "$PW" | base64)|$HDR|/old?token=$TOK"
stop_agent

# ---- 2. secrets in a root-only credentials file ----------------------------------------

mkdir -p "${CRED%/*}"
chmod 700 "${CRED%/*}"
cat >"$CRED" <<EOF
# the collector's secrets
user = jt
password = $CPW
header = X-Test: $CHDR
query = token=$CTOK
EOF
chmod 600 "$CRED"
start_agent "$RULES" "sinks = ( { type = \"http\"; name = \"collector\";
  url = \"http://127.0.0.1:$PORT/new\"; credentials_file = \"$CRED\";
  batch_age = 0.2; retry_max = 1.0; } );" || finish
chmod 644 "$CONF"
runuser -u $ALICE -- cat "$CRED" >/dev/null 2>&1
check "alice cannot read $CRED (cat exit $?)" test "$?" -ne 0
status_as $ALICE
check "alice's status works beside the root-only file (exit $?) and shows the plain url" \
	eq "$?:$(grep -c "^sink.collector.url: http://127.0.0.1:$PORT/new\$" "$T/status.$ALICE")" "0:1"
check "alice's status holds none of the file's canaries" eq "$(canaries "$T/status.$ALICE")" 0
status_as root
check "root's status neither" eq "$(canaries "$T/status.root")" 0
wait_request /new
check "the collector got the file's user and password, header and token" \
	eq "$(request_of /new)" "Basic $(printf 'jt:%s' "$CPW" | base64)|$CHDR|/new?token=$CTOK"
check "no warning of secrets in $CONF this time" \
	eq "$(grep -c "sink \"collector\": its " "$T/agent.log")" 1
chmod 644 "$CRED"
cli reload >/dev/null 2>&1
check "a reload with $CRED readable by others is refused, the running configuration kept" \
	grep -q "reload: sink \"collector\" (line 5): credentials_file = \"$CRED\": owner uid 0, mode 0644: credentials must be root's and neither readable nor writable by group or others (chown root; chmod 600) (keeping the running configuration)" "$T/agent.log"
stop_agent
check "no file the agent wrote holds a canary of the credentials file" \
	eq "$(grep -rl -f "$T/file-canaries" "$T/state" "$T/run" "$T/agent.log" 2>/dev/null | wc -l)" 0

# ---- 3. refused at start ---------------------------------------------------------------

refused_start
st=$?
note "$(cat "$T/refused.out")"
check "the file readable by others: exit 2 ($st), naming it and its mode" \
	eq "$st:$(grep -c "credentials_file = \"$CRED\": owner uid 0, mode 0644" "$T/refused.out")" "2:1"
"$AGENT" --config "$CONF" --check-config >"$T/check.out" 2>&1
check "--check-config says the same: exit 2 ($?)" \
	eq "$?:$(grep -c "mode 0644: credentials must be root's" "$T/check.out")" "2:1"
chmod 600 "$CRED"
chmod 777 "${CRED%/*}"
refused_start
st=$?
check "its folder writable by others: exit 2 ($st), naming the folder" \
	eq "$st:$(grep -c "credentials_file = \"${CRED%/*}\": ${CRED%/*} is writable by group and others" "$T/refused.out")" "2:1"
note "$(cat "$T/refused.out")"
chmod 700 "${CRED%/*}"
mv "$CRED" "$CRED.real"
ln -s "$CRED.real" "$CRED"
refused_start
st=$?
check "a link in its place: exit 2 ($st), 'is a symbolic link'" \
	eq "$st:$(grep -c "credentials_file = \"$CRED\": is a symbolic link" "$T/refused.out")" "2:1"
note "$(cat "$T/refused.out")"

finish
