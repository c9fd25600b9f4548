#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_gcp.sh - the agent and Compute Engine's metadata server, against
# tests/integration/fake-gce.py, which answers as Google documents
# ("Metadata-Flavor: Google" required, the attributes' documented forms):
#  - cloud.provider = "gcp": the host record's cloud object is what the
#    fake says (provider gcp, region from the zone, instance type the
#    machine type, spot from provisioning-model SPOT), every request
#    carried the header and asked a documented path, status names the
#    project;
#  - a VM without provisioning-model (404) and preemptible FALSE is
#    on-demand, status ok; preemptible TRUE alone is spot;
#  - a machine type answered 404: instance_type null, the rest kept, status
#    error naming instance/machine-type;
#  - a server that takes the connection and never answers: the start record
#    is written within the budget (1 s), cloud null, status absent and
#    timed out;
#  - cloud.provider = "auto" (the default) with DMI saying Google Compute
#    Engine (cloud.dmi_dir) asks the fake as Compute Engine's server.
#
# Needs root, kernel BTF, the sqlite3 CLI and /usr/bin/python3.
# Exit 0 pass, 1 fail, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_gcp.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
PY=/usr/bin/python3
if [ ! -x "$PY" ]; then
	echo "# error: $PY is missing (the fake metadata server runs with it)"
	exit 99
fi
FAKE=$top_srcdir/tests/integration/fake-gce.py
WANT='{"provider":"gcp","instance_id":"4520031799277581759","instance_type":"e2-standard-4","region":"us-central1","zone":"us-central1-a","lifecycle":"spot"}'

# Start the agent with cloud { $1 } at the fake (and more config $2).
launch() {
	echo "---- launch: cloud = { $1 }" >>"$T/agent.log"
	start_agent "" "cloud = { imds_url = \"http://127.0.0.1:$FAKE_PORT\"; $1 };
${2:-}"
}

# Member $1 of the host start record, once it is stored (10 s).
start_member() {
	for _ in $(seq 1 50); do
		[ -n "$(q "select id from record where type = 'host' and json_extract(json, '\$.phase') = 'start';")" ] && break
		sleep 0.2
	done
	q "select json_extract(json, '\$.$1') from record where type = 'host' and json_extract(json, '\$.phase') = 'start';"
}

# Stop the agent and forget its store.
reset() {
	stop_agent
	rm -rf "$T/state"
}

start_watchdog 300

# ---- gcp: every attribute, priced by a table of `prices import-gcp` -------------------------
cat >"$T/gcp.csv" <<'CSV'
machine_type,region,vcpus,memory_gib,gpus,gpu_model,on_demand_per_hour,spot_per_hour,currency
e2-standard-4,us-central1,4,16,0,-,0.134012,0.040204,USD
e2-standard-4,europe-west4,4,16,0,-,0.147,0.0441,USD
CSV
"$CLI" prices import-gcp --output "$T/gcp.tsv" "$T/gcp.csv" 2>"$T/import.err"
rc=$?
check "prices import-gcp makes the table (got $rc: $(cat "$T/import.err"))" eq "$rc" 0
F=$T/fake
start_fake "$F" || finish
launch 'provider = "gcp";' "cost = { prices_file = \"$T/gcp.tsv\"; };" || finish
cloud=$(start_member cloud)
check "gcp: the start record's cloud is the fake's answers ($cloud)" eq "$cloud" "$WANT"
st=$(cli status)
check "gcp: status says ok, gcp, the project and the instance" \
	eq "$(grep -c -e '^cloud.imds: ok$' -e '^cloud.provider: gcp$' -e '^cloud.project: my-gcp-project$' \
		-e '^cloud.instance: gcp 4520031799277581759 e2-standard-4 us-central1-a spot$' <<<"$st")" 4
check "gcp: every request carried Metadata-Flavor: Google ($(grep -vc 'flavor=Google$' "$F/requests.log") did not)" \
	eq "$(grep -vc 'flavor=Google$' "$F/requests.log")" 0
other=$(grep -v -E '^GET /computeMetadata/v1/(project/project-id|instance/zone|instance/machine-type|instance/id|instance/scheduling/preemptible|instance/scheduling/provisioning-model) 200 ' "$F/requests.log")
check "gcp: only the six documented paths, each answered 200${other:+ (also: $other)}" eq "$other" ""
check "gcp: priced at the table's spot price of e2-standard-4 in us-central1, 0.040204 USD ($(start_member price))" \
	eval '[ "$(start_member price.per_hour)" = 0.040204 ] && [ "$(start_member price.currency)" = USD ]'
check "gcp: the project id is in no record" \
	eq "$(q "select count(*) from record where json like '%my-gcp-project%';")" 0
reset

# ---- no provisioning model (404): preemptible decides -------------------------------------
echo 404 >"$F/instance_scheduling_provisioning-model"
launch 'provider = "gcp";' || finish
check "no provisioning-model, preemptible FALSE: on-demand, status ok ($(status_of cloud.imds))" \
	eval '[ "$(start_member cloud.lifecycle)" = on-demand ] && [ "$(status_of cloud.imds)" = ok ]'
reset
echo TRUE >"$F/instance_scheduling_preemptible"
launch 'provider = "gcp";' || finish
check "no provisioning-model, preemptible TRUE: spot" eq "$(start_member cloud.lifecycle)" spot
reset

# ---- a missing machine type (404) --------------------------------------------------------
echo 404 >"$F/instance_machine-type"
launch 'provider = "gcp";' || finish
check "machine-type 404: instance_type null, zone and id kept" \
	eval '[ "$(start_member cloud.instance_type)" = "" ] && [ "$(start_member cloud.zone)" = us-central1-a ] &&
		[ "$(start_member cloud.instance_id)" = 4520031799277581759 ]'
st=$(status_of cloud.imds)
check "machine-type 404: status says error naming it ($st)" \
	grep -q '^error: instance/machine-type: HTTP 404' <<<"$st"
reset
stop_fake

# ---- a server that hangs -----------------------------------------------------------------
start_fake "$T/hang" --blackhole || finish
t0=$(now)
launch 'provider = "gcp";' || finish
cloud=$(start_member cloud)
t1=$(q "select time from record where type = 'host' and json_extract(json, '\$.phase') = 'start';")
note "hanging server: agent answered status after $START_S s; start record at +$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
check "hanging server: cloud null" eq "$cloud" ""
st=$(status_of cloud.imds)
check "hanging server: status absent, timed out ($st)" \
	eval 'grep -q "^absent: project/project-id: " <<<"$st" && grep -q "timed out" <<<"$st"'
reset
stop_fake

# ---- auto: DMI says Compute Engine ------------------------------------------------------
start_fake "$T/auto" || finish
mkdir -p "$T/dmi-gce"
printf 'Google Compute Engine\n' >"$T/dmi-gce/product_name"
printf 'Google\n' >"$T/dmi-gce/sys_vendor"
launch "dmi_dir = \"$T/dmi-gce\";" || finish
check "auto with DMI of Compute Engine: asked as gcp ($(status_of cloud.imds))" \
	eq "$(start_member cloud)" "$WANT"
reset
stop_fake
finish
