#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_imds.sh - the agent and EC2's instance metadata service (IMDSv2),
# against tests/integration/fake-imds.py, which answers as AWS documents
# (token required, the identity document, life cycle "spot", a spot
# interruption notice when the test asks for one):
#  - the host record's cloud object is the fake's document, exactly, and
#    nothing else of the document (account, image, address) is stored;
#  - a notice mid-test makes exactly one spot_interruption signal naming
#    the jobs running then (registered with `jobtrace job-start`), with the
#    action and time; a new notice makes one more; an expired token is
#    fetched again on the 401;
#  - polls that hang never slow the event loop (status) nor the stop;
#  - an identity document with garbage fields leaves those fields null;
#  - no service (a closed port) and a service that never answers: the
#    agent starts (its start times beside those with cloud.imds = "off" are
#    printed, not checked: test_imds.c's test_thread_hangs checks that the
#    start does not wait), host.cloud is null and status says absent.
#
#  - cloud.imds = "auto" (the default) asks only when the machine's own
#    facts (DMI, cloud.dmi_dir) say EC2: on this machine the fake sees no
#    connection at all, with DMI saying Amazon EC2 it is asked.  The other
#    cases set cloud.imds = "on".
#
# Needs root, kernel BTF, the sqlite3 CLI and /usr/bin/python3.
# Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_imds.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "# error: $PY is missing (the fake IMDS runs with it)"
	exit 99
fi
FAKE=$top_srcdir/tests/integration/fake-imds.py
POLL=1		# cloud.spot_poll_interval of the test
# what the fake's identity document and life cycle say, as the record has it
WANT_CLOUD='{"provider":"aws","instance_id":"i-0f1e2d3c4b5a69788","instance_type":"c5.2xlarge","region":"eu-west-1","zone":"eu-west-1b","lifecycle":"spot"}'

# Seconds from $1 to $2.
secs() {
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'
}

# Start the agent with cloud { $1 } (lib.sh's start_agent: START_S is the
# time from its launch to its first answer to `jobtrace status`).
launch() {
	echo "---- launch: cloud = { $1 }" >>"$T/agent.log"
	start_agent "" "cloud = { $1 };"
}

# The JSON of the host record of phase $1 (the newest), member $2.
host_member() {
	q "select json_extract(json, '\$.$2') from record where type = 'host' and json_extract(json, '\$.phase') = '$1' order by time desc limit 1;"
}

# Wait up to 10 s for the start record in the store.
wait_host_start() {
	for _ in $(seq 1 50); do
		[ -n "$(q "select id from record where type = 'host' and json_extract(json, '\$.phase') = 'start';")" ] && return 0
		sleep 0.2
	done
	return 1
}

# Number of spot_interruption signal records in the store.
spot_count() {
	q "select count(*) from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';"
}

# Wait up to $1 s until status key cloud.spot_polls is at least $2.
wait_polls() {
	for _ in $(seq 1 $(($1 * 10))); do
		[ "$(status_of cloud.spot_polls)" -ge "$2" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The RFC 3339 time of epoch seconds $1, as records write it.
rfc3339() {
	date -u -d "@$1" +%Y-%m-%dT%H:%M:%S.000000Z
}

start_watchdog 300

# ---- auto: this machine's own facts first -----------------------------------------------
# The default, cloud.imds = "auto", asks only when the machine's DMI (or
# Xen's hypervisor UUID) says EC2, as cloud-init's ds-identify does.  The
# fake stands at imds_url and counts every connection: on this machine
# (not EC2) it must see none, at start or later; with cloud.dmi_dir at
# facts that say Amazon EC2, the agent asks it.
A=$T/auto
start_fake "$A" || finish
launch "imds_url = \"http://127.0.0.1:$FAKE_PORT\";" || finish
wait_host_start
st=$(status_of cloud.imds)
note "auto on this machine: cloud.imds: $st"
sleep 2
check "auto, this machine's facts: not asked, and status says why ($st)" \
	grep -q '^not asked: not EC2 by this machine.s own facts (.*); cloud.imds = "on" asks all the same$' <<<"$st"
check "auto, this machine's facts: the service saw no connection at all ($(cat "$A/connections.log" 2>/dev/null | wc -l))" \
	eq "$(cat "$A/connections.log" 2>/dev/null | wc -l)" 0
check "auto, this machine's facts: host start record's cloud is null" eq "$(host_member start cloud)" ""
stop_agent
rm -rf "$T/state"
mkdir -p "$T/dmi-qemu" "$T/dmi-ec2"
printf 'QEMU\n' >"$T/dmi-qemu/sys_vendor"
printf '4c4c4544-0031-3010-8031-b2c04f4e3332\n' >"$T/dmi-qemu/product_uuid"
printf 'Amazon EC2\n' >"$T/dmi-ec2/sys_vendor"
printf 'i-0f1e2d3c4b5a69788\n' >"$T/dmi-ec2/board_asset_tag"
launch "imds_url = \"http://127.0.0.1:$FAKE_PORT\"; dmi_dir = \"$T/dmi-qemu\";" || finish
wait_host_start
st=$(status_of cloud.imds)
check "auto, DMI of a QEMU machine: not asked ($st)" \
	grep -q 'not EC2 by this machine.s own facts (DMI sys_vendor "QEMU")' <<<"$st"
check "... and the service saw no connection ($(cat "$A/connections.log" 2>/dev/null | wc -l))" \
	eq "$(cat "$A/connections.log" 2>/dev/null | wc -l)" 0
stop_agent
rm -rf "$T/state"
launch "imds_url = \"http://127.0.0.1:$FAKE_PORT\"; dmi_dir = \"$T/dmi-ec2\";" || finish
wait_host_start
check "auto, DMI that says Amazon EC2: asked, the identity read ($(status_of cloud.imds))" \
	eq "$(host_member start cloud)" "$WANT_CLOUD"
check "... the first request was the token's" \
	eq "$(head -n 1 "$A/requests.log" 2>/dev/null)" "PUT /latest/api/token 200 ttl=21600 token=new"
stop_agent
rm -rf "$T/state"
stop_fake

# ---- the fake: identity, jobs, a spot notice ------------------------------------------
F=$T/fake
start_fake "$F" || finish
launch "imds = \"on\"; imds_url = \"http://127.0.0.1:$FAKE_PORT\"; spot_poll_interval = $POLL;" || finish
note "start with the fake IMDS: $START_S s"
wait_host_start
cloud=$(host_member start cloud)
check "host start record: cloud is the fake's document and life cycle, exactly ($cloud)" \
	eq "$cloud" "$WANT_CLOUD"
st=$(cli status)
check "status: cloud.imds: ok, the instance named" \
	eq "$(grep -c -e '^cloud.imds: ok$' -e '^cloud.instance: aws i-0f1e2d3c4b5a69788 c5.2xlarge eu-west-1b spot$' <<<"$st")" 2
check "the first request was PUT /latest/api/token with a TTL of 21600 s" \
	eq "$(head -n 1 "$F/requests.log")" "PUT /latest/api/token 200 ttl=21600 token=new"
check "no request went without a good token (401s: $(grep -c ' 401 ' "$F/requests.log"))" \
	eq "$(grep -c ' 401 ' "$F/requests.log")" 0
other=$(grep -v -e '^PUT /latest/api/token ' -e '^GET /latest/dynamic/instance-identity/document ' \
	-e '^GET /latest/meta-data/instance-life-cycle ' \
	-e '^GET /latest/meta-data/spot/instance-action ' "$F/requests.log")
check "only the four documented paths were asked${other:+ (also: $other)}" eq "$other" ""
leaked=$(q "select count(*) from record where json like '%123456789012%' or json like '%10.11.12.13%' or json like '%ami-0123456789abcdef0%' or json like '%pendingTime%';")
check "no account id, address, image or other member of the document is stored ($leaked records)" \
	eq "$leaked" 0

cli job-start --strict --job 4101 --scheduler slurm --user alice >/dev/null
cli job-start --strict --job b-77f2 --scheduler awsbatch >/dev/null
cli job-start --strict --job 4102 --scheduler slurm >/dev/null
cli job-end --strict --job 4102 --scheduler slurm --exit-code 0 >/dev/null
polls=$(status_of cloud.spot_polls)
wait_polls 10 $((polls + 2))
check "no notice yet (404): no spot_interruption record after $(status_of cloud.spot_polls) polls" \
	eq "$(spot_count)" 0

echo terminate >"$F/spot-action"
t_trigger=$(now)
action_time=$(rfc3339 $(($(stat -c %Y "$F/spot-action") + 120)))
seen=
for _ in $(seq 1 100); do
	[ "$(spot_count)" -ge 1 ] && { seen=$(now); break; }
	sleep 0.1
done
lat=$(secs "$t_trigger" "${seen:-0}")
check "the notice became a signal record within the poll interval + 1 s ($lat s)" \
	between "$lat" 0 $((POLL + 1))
polls=$(status_of cloud.spot_polls)
wait_polls 10 $((polls + 3))
# the store keeps a record id once, and the id derives from the notice:
# the agent's log says how many times it wrote one
check "exactly one spot_interruption record after 3 more polls of the same notice ($(spot_count) stored, $(grep -c 'spot interruption notice' "$T/agent.log") written)" \
	eq "$(spot_count):$(grep -c 'spot interruption notice' "$T/agent.log")" 1:1
sig=$(q "select json from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';")
note "$sig"
rec_time=$(q "select time from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';")
check "it names the two running jobs, not the ended one" \
	eq "$(q "select json_extract(json, '\$.jobs') from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';")" \
	'["slurm:4101","awsbatch:b-77f2"]'
check "its job object is null (two jobs run)" \
	eq "$(q "select json_type(json, '\$.job') from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';")" null
check "evidence: action terminate, action_time $action_time (the notice's)" \
	eq "$(q "select json_extract(json, '\$.evidence.action') || ' ' || json_extract(json, '\$.evidence.action_time') from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption';")" \
	"terminate $action_time"
check "its time ($rec_time) is when it was read: after the notice appeared, within the poll interval + 1 s" \
	between "$(secs "$t_trigger" "$rec_time")" -0.05 $((POLL + 1))
check "status: cloud.spot_notices: 1, no errors" \
	eq "$(status_of cloud.spot_notices):$(status_of cloud.spot_errors)" "1:0"

# the token expires: a 401, a new token, the same notice is not repeated
puts0=$(grep -c '^PUT /latest/api/token 200' "$F/requests.log")
touch "$F/expire-tokens"
polls=$(status_of cloud.spot_polls)
wait_polls 10 $((polls + 3))
check "after the token expired: one 401, a new token, polls go on without errors" \
	eq "$(grep -c ' 401 ' "$F/requests.log"):$(( $(grep -c '^PUT /latest/api/token 200' "$F/requests.log") - puts0 )):$(status_of cloud.spot_errors)" "1:1:0"
check "still one spot_interruption record" \
	eq "$(spot_count):$(grep -c 'spot interruption notice' "$T/agent.log")" 1:1

# a new notice (another action and time): one more record, now one job
cli job-end --strict --job b-77f2 --scheduler awsbatch --exit-code 0 >/dev/null
sleep 1.1
echo stop >"$F/spot-action.new"
mv "$F/spot-action.new" "$F/spot-action"
action_time2=$(rfc3339 $(($(stat -c %Y "$F/spot-action") + 120)))
for _ in $(seq 1 50); do
	[ "$(spot_count)" -ge 2 ] && break
	sleep 0.1
done
polls=$(status_of cloud.spot_polls)
wait_polls 10 $((polls + 2))
second=$(q "select json_extract(json, '\$.evidence.action') || ' ' || json_extract(json, '\$.evidence.action_time') || ' ' || json_extract(json, '\$.jobs') || ' ' || json_extract(json, '\$.job.id') from record where type = 'signal' and json_extract(json, '\$.kind') = 'spot_interruption' and json_extract(json, '\$.evidence.action') = 'stop';")
check "a new notice: two records in all, the second 'stop $action_time2' naming the one job left ($second)" \
	eq "$(spot_count):$(grep -c 'spot interruption notice' "$T/agent.log"):$second" \
	"2:2:stop $action_time2 [\"slurm:4101\"] 4101"

# polls that hang: the event loop answers at once, the stop is prompt
touch "$F/hang-action"
sleep $((POLL + 1))
worst=0
for _ in $(seq 1 10); do
	t0=$(now)
	cli status >/dev/null
	l=$(secs "$t0" "$(now)")
	worst=$(awk -v a="$worst" -v b="$l" 'BEGIN { print (b > a) ? b : a }')
	sleep 0.2
done
check "status while a poll hangs: slowest of 10 answers $worst s (< 0.3 s)" between "$worst" 0 0.3
sleep 1.5
check "the hung poll counted as an error, named in status ($(status_of cloud.spot_last_error))" \
	eq "$(status_of cloud.spot_errors | awk '{ print ($1 >= 1) }'):$(status_of cloud.spot_last_error | grep -c 'timed out')" "1:1"
t0=$(now)
stop_agent
st=$?
lat=$(secs "$t0" "$(now)")
check "the agent stops cleanly while a poll hangs (exit $st, $lat s < 3 s)" \
	eq "$st:$(between "$lat" 0 3 && echo y)" "0:y"
rm -f "$F/hang-action" "$F/spot-action"

# ---- garbage in the identity document: those fields null ----------------------------
printf '{"instanceId" : "i-0f1e2d3c4b5a69788", "instanceType" : 42, "region" : "eu-west-1", "availabilityZone" : "\\u001b[2Jeu-west-1b", "accountId" : "123456789012"}' \
	>"$F/identity-document"
launch "imds = \"on\"; imds_url = \"http://127.0.0.1:$FAKE_PORT\"; spot_poll_interval = $POLL;" || finish
sleep 0.5
cloud=$(q "select json_extract(json, '\$.cloud') from record where type = 'host' and json_extract(json, '\$.phase') = 'start' order by time desc limit 1;")
check "garbage fields: null, the good ones kept ($cloud)" eq "$cloud" \
	'{"provider":"aws","instance_id":"i-0f1e2d3c4b5a69788","instance_type":null,"region":"eu-west-1","zone":null,"lifecycle":"spot"}'
check "status names the reason ($(status_of cloud.imds))" \
	eq "$(status_of cloud.imds)" "error: identity document: instanceType is not a string"
stop_agent
check "agent stops cleanly (exit $?)" eq "$?" 0
printf '<html><body>Service Unavailable</body></html>' >"$F/identity-document"
launch "imds = \"on\"; imds_url = \"http://127.0.0.1:$FAKE_PORT\"; spot_poll_interval = $POLL;" || finish
sleep 0.5
cloud=$(q "select json_extract(json, '\$.cloud') from record where type = 'host' and json_extract(json, '\$.phase') = 'start' order by time desc limit 1;")
check "a document that is not JSON: only provider and life cycle ($cloud)" eq "$cloud" \
	'{"provider":"aws","instance_id":null,"instance_type":null,"region":null,"zone":null,"lifecycle":"spot"}'
check "status: $(status_of cloud.imds)" eq "$(status_of cloud.imds | grep -c '^error: identity document: not a JSON object: ')" 1
stop_agent
check "agent stops cleanly (exit $?)" eq "$?" 0
stop_fake

# ---- no service, and one that never answers: start time -----------------------------
CLOSED=$(free_port)
B=$T/blackhole
start_fake "$B" --blackhole || finish
declare -A times
rm -rf "$T/state"
for round in 1 2 3 4 5; do
	for mode in off closed blackhole; do
		case $mode in
		off) cfg='imds = "off";' ;;
		closed) cfg="imds = \"on\"; imds_url = \"http://127.0.0.1:$CLOSED\";" ;;
		blackhole) cfg="imds = \"on\"; imds_url = \"http://127.0.0.1:$FAKE_PORT\";" ;;
		esac
		launch "$cfg" || finish
		times[$mode]="${times[$mode]:-} $START_S"
		if [ "$round" = 1 ]; then
			wait_host_start
			st=$(status_of cloud.imds)
			case $mode in
			off) want='^off \(cloud.imds = "off"\)$' ;;
			closed) want='^absent: no connection: Connection refused$' ;;
			blackhole) want='^absent: token: .*timed out' ;;
			esac
			check "$mode: status cloud.imds: $st" \
				eq "$(grep -cE "$want" <<<"$st")" 1
			check "$mode: host start record's cloud is null" \
				eq "$(host_member start cloud)" ""
			# written once the identity read is over, with the time
			# the agent started, not the time it was written
			t_rec=$(q "select time from record where type = 'host' and json_extract(json, '\$.phase') = 'start';")
			check "$mode: the start record's time is the start's ($(secs "$LAUNCH_T0" "$t_rec") s after launch, answered at $START_S s)" \
				between "$(secs "$LAUNCH_T0" "$t_rec")" 0 "$START_S"
			check "$mode: cloud is null, not left out ($(q "select json_type(json, '\$.cloud') from record where type = 'host' order by time desc limit 1;"))" \
				eq "$(q "select json_type(json, '\$.cloud') from record where type = 'host' order by time desc limit 1;")" null
		fi
		stop_agent
		check "$mode: agent stops cleanly (exit $?)" eq "$?" 0
		rm -rf "$T/state"
	done
done
check "the never-answering service was asked (it saw $(grep -c CONNECT "$B/requests.log") connections)" \
	between "$(grep -c CONNECT "$B/requests.log")" 5 100
median() {
	printf '%s\n' $1 | sort -n | sed -n 3p
}
off=$(median "${times[off]}")
closed=$(median "${times[closed]}")
hole=$(median "${times[blackhole]}")
note "start to first status answer, s (5 rounds, alternating): off:${times[off]}  closed:${times[closed]}  blackhole:${times[blackhole]}"
note "medians: off $off, closed port $closed, never-answering $hole"
# Not a check: the times are printed to compare by eye.  That the start does
# not wait for the reader is checked without timing, in
# tests/unit/test_imds.c's test_thread_hangs (a start that waited would find
# the identity read over when it returns); here each mode's first status
# answers and its start record carries the start's time (above).
stop_fake
finish
