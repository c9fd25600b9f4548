#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_instances.sh - `jobtrace rightsize --format instances` on a task
# measured for real: a Snakemake rule that uses 1 core and 3 GiB
# (`touchmem 3072 500`, then `burn 1`), run three times under `jobtrace run`
# on a node whose cloud identity (tests/integration/fake-imds.py, the
# stand-in for EC2's IMDS, which cannot exist here) is an on-demand
# m5.xlarge in us-east-1, priced by the table `jobtrace prices import`
# makes from tests/fuzz/corpus/offer/ec2-offer-families.csv with the spot
# prices of tests/fuzz/corpus/spot/spot-history.json.
#
# Worked out here, apart from jobtrace:
#  - the needs are rightsize's own recommendation (--format json): at
#    least 1.2 x 3 GiB, 1 core;
#  - the cheapest x86_64 type of us-east-1 that fits them, read from the
#    table with awk: c5.large at 0.085 (2 vCPUs, 4 GiB); on spot c5.large
#    at 0.0329 (us-east-1b); in eu-west-1 c5.large at 0.096 / 0.0377;
#  - the hours: each run's rule processes from the first start to the
#    last end (the process records' own times), summed; the three runs
#    lie within a day, so the period is one day and a month 30 times it;
#  - cost now 0.192 x hours x 30, the savings (0.192 - 0.085) and
#    (0.192 - 0.0329) x hours x 30;
#  - the family: the needed GiB per vCPU, 3.6, is general purpose (2.83 to
#    5.66); arm64 is not proposed (the task never ran on arm64), and the
#    cheapest arm64 type that fits, m6g.medium at 0.0385, is named.
# Without cost.prices_file the command says so and exits 1.
#
# Needs root, kernel BTF, the sqlite3 CLI, snakemake, python3.
# Exit 0 pass, 1 fail, 77 skipped.
#
# Run:  make check TESTS=tests/integration/test_instances.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/touchmem" "$WL/burn"
need_commands snakemake python3
start_watchdog 300

W=$T/wf
TAG=in$$
mkdir -p "$W"

# ---- the price table -----------------------------------------------------------------
PRICES=$T/prices.tsv
"$CLI" prices import --output "$PRICES" \
	"$top_srcdir/tests/fuzz/corpus/offer/ec2-offer-families.csv" 2>"$T/prices.err"
check "prices import: exit 0" eq $? 0
"$CLI" prices import-spot --table "$PRICES" \
	"$top_srcdir/tests/fuzz/corpus/spot/spot-history.json" 2>>"$T/prices.err"
check "prices import-spot: exit 0" eq $? 0

# ---- the node's identity: an on-demand m5.xlarge in us-east-1 ------------------------------
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$T/imds"
cat >"$T/imds/identity-document" <<'DOC'
{
  "accountId" : "123456789012",
  "architecture" : "x86_64",
  "availabilityZone" : "us-east-1a",
  "billingProducts" : null,
  "devpayProductCodes" : null,
  "marketplaceProductCodes" : null,
  "imageId" : "ami-0123456789abcdef0",
  "instanceId" : "i-0a1b2c3d4e5f60718",
  "instanceType" : "m5.xlarge",
  "kernelId" : null,
  "pendingTime" : "2026-11-20T07:08:09Z",
  "privateIp" : "10.11.12.13",
  "ramdiskId" : null,
  "region" : "us-east-1",
  "version" : "2017-09-30"
}
DOC
echo on-demand >"$T/imds/life-cycle"
python3 "$top_srcdir/tests/integration/fake-imds.py" "$PORT" "$T/imds" 2>>"$T/imds/fake.err" &
BG_PIDS="${BG_PIDS:-} $!"
for _ in $(seq 1 100); do
	[ -s "$T/imds/port" ] && break
	sleep 0.05
done
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"cloud = { imds = \"on\"; imds_url = \"http://127.0.0.1:$PORT\"; };
docker = { enabled = false; };
cost = { prices_file = \"$PRICES\"; };" || finish
check "the host record carries the identity (m5.xlarge us-east-1 on-demand)" \
	wait_q "select json_extract(json, '\$.cloud.instance_type') || ' ' ||
		json_extract(json, '\$.cloud.region') || ' ' ||
		json_extract(json, '\$.cloud.lifecycle') from record
		where type = 'host' order by time limit 1;" \
		"m5.xlarge us-east-1 on-demand" 10

# ---- three runs of a rule of 1 core and 3 GiB ------------------------------------------------
cat >"$W/Snakefile" <<EOF
rule all:
    input: "out/inst.txt"

rule inst:
    output: "out/inst.txt"
    threads: 1
    resources: mem_mb=8000
    shell: "$WL/touchmem 3072 500 > {output}; $WL/burn 1 >> {output}"
EOF
for i in 1 2 3; do
	(cd "$W" && "$CLI" --config "$CONF" run --job "$TAG-j$i" --run "$TAG-r$i" \
		--pipeline "$TAG" -- snakemake -s Snakefile --cores 1 --forceall \
		>"$T/snakemake.$i.out" 2>&1)
	st=$?
	check "run $i: snakemake under jobtrace run exits 0 (got $st)" eq "$st" 0
	[ "$st" = 0 ] || note "$(tail -n 15 "$T/snakemake.$i.out")"
	check "run $i: its touchmem and burn are stored with task inst" \
		wait_q "select count(*) from process where job_run = '$TAG-r$i'
			and job_task = 'inst' and comm in ('touchmem', 'burn');" 2 20
done

# ---- rightsize's figures, and the answer -------------------------------------------------
jget() {	# jget FILE PATH: a member of the first task of a JSON answer
	python3 -c 'import json,sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else (v.get(k) if isinstance(v, dict) else None)
print("null" if v is None else v)' "$1" "$2"
}
cli rightsize --pipeline "$TAG" --format json >"$T/rs.json" 2>"$T/rs.err"
check "rightsize --format json: exit 0" eq $? 0
MEM=$(jget "$T/rs.json" tasks.0.recommendation.mem_bytes)
CPUS=$(jget "$T/rs.json" tasks.0.recommendation.cpus)
note "rightsize: inst needs $CPUS cores, $MEM bytes"
check "rightsize: 1 core, at least 1.2 x 3 GiB ($MEM)" \
	eval '[ "$CPUS" = 1 ] && between "$MEM" $((3072 * 12 / 10 * 1048576)) $((4096 * 1048576))'

cli rightsize --pipeline "$TAG" --format instances-json >"$T/in.json" 2>"$T/in.err"
st=$?
note "$(cat "$T/in.json" "$T/in.err")"
check "--format instances-json: exit 0, one valid JSON text" \
	eval '[ $st = 0 ] && python3 -m json.tool "$T/in.json" >/dev/null'
check "... its needs are rightsize's" \
	eq "$(jget "$T/in.json" tasks.0.needs.vcpus):$(jget "$T/in.json" tasks.0.needs.mem_bytes)" "$CPUS:$MEM"

# the cheapest x86_64 type that fits, by region, from the table itself
cheapest() {	# cheapest REGION COLUMN(4: on-demand, 5: spot)
	awk -F '\t' -v r="$1" -v c="$2" -v cpus="$CPUS" -v mem="$MEM" '
		!/^#/ && $1 == r && $11 == "x86_64" && $c != "-" &&
		$6 >= cpus && $7 * 1073741824 >= mem &&
		(best == "" || $c + 0 < best + 0) { best = $c; t = $2 }
		END { print t " " best }' "$PRICES"
}
check "by hand: us-east-1's cheapest on-demand fit is c5.large at 0.085" \
	eq "$(cheapest us-east-1 3)" "c5.large 0.085"
check "by hand: and on spot c5.large at 0.0329" eq "$(cheapest us-east-1 4)" "c5.large 0.0329"
for r in us-east-1 eu-west-1; do
	set -- $(cheapest $r 3) $(cheapest $r 4)
	got=$(python3 -c 'import json,sys
g = [x for x in json.load(open(sys.argv[1]))["tasks"][0]["regions"] if x["region"] == sys.argv[2]][0]
print(g["on_demand"]["type"], "%g" % g["on_demand"]["per_hour"], g["spot"]["type"], "%g" % g["spot"]["per_hour"], g["spot"].get("zone"))' "$T/in.json" $r)
	check "$r: on-demand $1 at $2, spot $3 at $4 (as by hand; got $got)" \
		eq "${got% *}" "$1 $2 $3 $4"
	[ $r = us-east-1 ] && check "... the spot price's zone: us-east-1b" eq "${got##* }" us-east-1b
done

# the hours from the process records' own times: each run first start to last end
H=$(q "select printf('%.9f', sum(e - s) / 3600.0) from (select min(start_time) as s,
	max(end_time) as e from process where job_task = 'inst'
	and job_run like '$TAG-r%' group by job_run);")
JH=$(jget "$T/in.json" tasks.0.hours)
note "hours: $JH (jobtrace), $H (the records, by hand)"
# the records' times are to the microsecond: 3 runs, 2 us each at most
check "hours $JH: the runs' first start to last end, summed ($H h, 10 us)" \
	near "$JH" "$H" 0 0.0000000028
check "a month is 30 x the hours (the runs lie within one day)" \
	near "$(jget "$T/in.json" tasks.0.hours_month)" "$(awk -v h="$H" 'BEGIN { printf "%.12f", 30 * h }')" 0 0.0000001
check "ran on m5.xlarge, us-east-1, on-demand" \
	eq "$(jget "$T/in.json" tasks.0.ran_on.0.type) $(jget "$T/in.json" tasks.0.ran_on.0.region) $(jget "$T/in.json" tasks.0.ran_on.0.lifecycle)" \
	"m5.xlarge us-east-1 on-demand"
# by hand from the records' hours (10 us of them is 1.6e-8 USD a month here)
NOW=$(awk -v h="$H" 'BEGIN { printf "%.12f", 0.192 * h * 30 }')
SOD=$(awk -v h="$H" 'BEGIN { printf "%.12f", (0.192 - 0.085) * h * 30 }')
SSP=$(awk -v h="$H" 'BEGIN { printf "%.12f", (0.192 - 0.0329) * h * 30 }')
note "by hand: cost now $NOW, saving on-demand $SOD, on spot $SSP USD a month"
check "cost now: 0.192 x hours x 30 = $NOW (1e-7 USD)" near "$(jget "$T/in.json" tasks.0.cost_month)" "$NOW" 0 0.0000001
check "saving on-demand: (0.192 - 0.085) x hours x 30 = $SOD (1e-7 USD)" \
	near "$(jget "$T/in.json" tasks.0.saving_month_on_demand)" "$SOD" 0 0.0000001
check "saving on spot: (0.192 - 0.0329) x hours x 30 = $SSP (1e-7 USD)" \
	near "$(jget "$T/in.json" tasks.0.saving_month_spot)" "$SSP" 0 0.0000001
check "family general-purpose, arch x86_64, arm64's m6g.medium (0.0385) not proposed" \
	eq "$(jget "$T/in.json" tasks.0.family) $(jget "$T/in.json" tasks.0.arch) $(jget "$T/in.json" tasks.0.arm64_not_proposed.type) $(jget "$T/in.json" tasks.0.arm64_not_proposed.per_hour)" \
	"general-purpose x86_64 m6g.medium 0.0385"

cli rightsize --pipeline "$TAG" --format instances >"$T/in.txt" 2>&1
check "--format instances (text): exit 0" eq $? 0
note "$(cat "$T/in.txt")"
check "... the task's line: 3 runs, 3 instances" grep -q "^task inst: 3 runs, 3 instances," "$T/in.txt"
check "... us-east-1's cheapest" grep -qx "  us-east-1      on-demand c5.large 0.085 USD/h, spot c5.large 0.0329 USD/h in us-east-1b" "$T/in.txt"
check "... the saving in us-east-1" grep -qx "  saving a month in us-east-1: on-demand $(printf '%.4f' "$SOD") USD, spot $(printf '%.4f' "$SSP") USD" "$T/in.txt"

sed -i 's|^cost = .*|cost = { prices_file = ""; };|' "$CONF"
cli rightsize --pipeline "$TAG" --format instances >"$T/none.out" 2>"$T/none.err"
check "without cost.prices_file: exit 1" eq $? 1
check "... saying so" grep -q "needs a price table: set cost.prices_file" "$T/none.err"
check "... nothing on stdout" eq "$(wc -c <"$T/none.out")" 0
finish
