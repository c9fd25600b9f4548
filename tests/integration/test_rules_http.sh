#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_rules_http.sh - an agent follows a rules bundle on an HTTP server on
# 127.0.0.1 (rules-server.py: ETag, 304, counts its requests):
# - an unchanged bundle costs one 304 per poll (the server's count and the
#   agent's agree);
# - a new bundle is in force within the poll interval (and its jitter);
# - a corrupt MANIFEST, a rule with a Lua syntax error and a rule whose
#   self-test fails are each refused: the error is in status, the last good
#   rules still name the next exec;
# - with rules.public_key, a signed bundle is taken, an unsigned one and
#   one signed by another key are refused;
# - restarted with the server down, the agent starts with the last good
#   bundle from its state folder and says so;
# - jobtrace rules bundle refuses a folder that does not load.
#
# Needs root and kernel BTF.  Exit 0 pass, 1 fail, 77 skipped.

set -u
. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands python3 openssl tar sha256sum
start_watchdog 240

POLL=2
R=$T/rules
W=$T/www
mkdir -p "$R" "$W"
SRV_PID=

extra_cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
}

site_rule() {	# $1: the name of sleep; $2: what the self-test expects
	cat <<LUA
jobtrace.rule("site-naming", function(p, d)
  if d.tool == "sleep" then d.tool = "$1"; d.category = "test" end
end)
jobtrace.selftest{ argv = { "sleep", "1" }, expect = { tool = "${2:-$1}" } }
LUA
}

# A bundle of folder $1 with version $2 into $3, made here (python's
# tarfile) and not by jobtrace, so that it may hold what jobtrace refuses.
raw_bundle() {
	python3 - "$1" "$2" "$3" <<'PY'
import hashlib, io, os, sys, tarfile
d, version, out = sys.argv[1:]
names = sorted(n for n in os.listdir(d) if n.endswith(".lua"))
files = [(n, open(os.path.join(d, n), "rb").read()) for n in names]
man = "jobtrace-rules-bundle 1\nversion %s\n" % version
man += "".join("file %s %d %s\n" % (hashlib.sha256(b).hexdigest(), len(b), n) for n, b in files)
with tarfile.open(out + ".tmp", "w", format=tarfile.USTAR_FORMAT) as t:
    for n, b in [("MANIFEST", man.encode())] + files:
        i = tarfile.TarInfo(n); i.size = len(b); i.mode = 0o644
        t.addfile(i, io.BytesIO(b))
os.rename(out + ".tmp", out)
PY
}

# Publish bundle file $1 as the served one (renamed in: a whole file).
publish() {
	cp "$1" "$W/.b.tar.tmp" && mv "$W/.b.tar.tmp" "$W/b.tar"
}

# The server's count of answers $1 (200, 304) to the bundle.
served() {
	curl -s "http://127.0.0.1:$PORT/counts" |
		python3 -c "import json,sys; print(json.load(sys.stdin).get('/b.tar', {}).get('$1', 0))"
}

# Wait up to $3 s until status KEY $1 is $2; ELAPSED is how long it took.
wait_status() {
	local t0 v
	t0=$(now)
	for _ in $(seq 1 $(($3 * 20))); do
		v=$(status_of "$1")
		ELAPSED=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
		[ "$v" = "$2" ] && return 0
		sleep 0.05
	done
	note "after $3 s, $1 is '$v', want '$2'"
	return 1
}

# Wait up to $2 s until the status' rules_source_error holds $1.
wait_error() {
	for _ in $(seq 1 $(($2 * 10))); do
		case $(status_of rules_source_error) in *"$1"*) return 0 ;; esac
		sleep 0.1
	done
	note "rules_source_error: '$(status_of rules_source_error)', want '$1'"
	return 1
}

# Wait up to $2 s until the agent counts $1 unchanged polls.
wait_unchanged() {
	for _ in $(seq 1 $(($2 * 10))); do
		[ "$(unchanged)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The next exec of sleep is named $1 by the rules in force ($2: why).
next_named() {
	local pid
	sleep 0.1 &
	pid=$!
	wait $pid
	check "$2: the next exec is named '$1'" eq "$(row_wait $pid tool_name)" "$1"
}

# ---- the CLI refuses a folder that does not load ---------------------------------
: >"$CONF"	# every key at its default until start_agent writes it
site_rule web-v1 >"$R/10-site.lua"
printf 'jobtrace.rule("x", function(p, d)\n' >"$R/20-broken.lua"
out=$(cli rules bundle "$R" -o "$T/broken.tar" 2>&1)
st=$?
check "rules bundle refuses a folder with a syntax error, naming FILE:LINE (status $st: $out)" \
	eq "$st|$(printf '%s' "$out" | grep -c '20-broken.lua:2:')|$([ -e "$T/broken.tar" ] && echo made)" "2|1|"
rm "$R/20-broken.lua"
out=$(cli rules bundle "$R" -o "$T/v1.tar" --version v1)
check "rules bundle makes a bundle of a good folder ($out)" test -s "$T/v1.tar"
man_sha=$(tar xOf "$T/v1.tar" MANIFEST | sha256sum | cut -d' ' -f1)

python3 "$top_srcdir/tests/integration/rules-server.py" "$W" "$T/port" 2>"$T/server.log" &
SRV_PID=$!
BG_PIDS="$BG_PIDS $SRV_PID"
for _ in $(seq 1 100); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")
URL="http://127.0.0.1:$PORT/b.tar"
publish "$T/v1.tar"

RULES="rules = { source = \"$URL\"; poll_interval = $POLL; };"
start_agent "" "$RULES" || finish
check "the bundle is in force after the first poll (jitter at most $POLL/10 s)" wait_status rules_version v1 5
check "status shows the bundle's id, the SHA-256 of its MANIFEST" eq "$(status_of rules_sha256)" "$man_sha"
check "status shows the source" eq "$(status_of rules_source)" "$URL (bundles)"
next_named web-v1 "bundle v1"

# ---- unchanged: one 304 per poll ---------------------------------------------------
# the agent's own count of unchanged polls, read between two reads of the
# server's count that agree (no poll in between)
unchanged() {
	status_of rules_polls | sed -n 's/^[0-9]*, \([0-9]*\) unchanged.*/\1/p'
}
check "three more polls answered unchanged within $((POLL * 4)) s" \
	wait_unchanged 3 $((POLL * 4))
for _ in 1 2 3; do
	a=$(served 304)
	u=$(unchanged)
	b=$(served 304)
	[ "$a" = "$b" ] && break
done
s200=$(served 200)
note "server: $s200 answers 200, $b answers 304; agent: rules_polls $(status_of rules_polls)"
check "the bundle was sent once ($s200)" eq "$s200" 1
check "each poll after it cost one 304: the server's count ($b) is the agent's ($u)" eq "$b" "$u"
check "and at least 3 ($b)" between "$b" 3 100

# ---- a new bundle --------------------------------------------------------------------
site_rule web-v2 >"$R/10-site.lua"
cli rules bundle "$R" -o "$T/v2.tar" --version v2 >/dev/null
t_pub=$(now)
publish "$T/v2.tar"
check "bundle v2 in force within the poll interval and its jitter ($POLL s + 10%)" wait_status rules_version v2 4
# when the agent asked is the server's clock (its poll timer: the interval,
# the jitter and a thread's wake-up); the load after it is printed, not
# bounded, as it depends on what else the node runs
fetched=$(awk -v a="$t_pub" -v b="$(served t200)" 'BEGIN { printf "%.2f", b - a }')
note "v2 fetched $fetched s and in force $ELAPSED s after it was published (poll_interval $POLL s)"
check "fetched within $POLL s + 10% jitter (+0.1 s for the thread's wake-up) of its publication ($fetched s)" \
	between "$fetched" 0 "$(awk -v p="$POLL" 'BEGIN { print p * 1.1 + 0.1 }')"
next_named web-v2 "bundle v2"

# ---- refused bundles keep the last good -------------------------------------------
# a corrupt manifest: one byte of a rule changed after the bundle was made
site_rule web-v3 >"$R/10-site.lua"
cli rules bundle "$R" -o "$T/v3.tar" --version v3 >/dev/null
python3 -c "import sys; p=sys.argv[1]; b=open(p,'rb').read(); open(p,'wb').write(b.replace(b'web-v3', b'web-v9', 1))" "$T/v3.tar"
publish "$T/v3.tar"
check "a bundle whose file does not match its MANIFEST is refused, the URL, line and file named" \
	wait_error "$URL: MANIFEST line 3: sha256 of 10-site.lua does not match" 5
check "the version in force stays v2" eq "$(status_of rules_version)" v2
next_named web-v2 "after the corrupt bundle"
# the fleet store hears of it: a host record of phase rules with the error
check "a host record says v2 is in force and the corrupt bundle was refused" \
	wait_q "select count(*) from record where type = 'host'
		and json_extract(json, '$.phase') = 'rules'
		and json_extract(json, '$.rules.version') = 'v2'
		and json_extract(json, '$.rules.error') like '%sha256 of 10-site.lua does not match%';" 1 5

# a rule with a syntax error
mkdir -p "$T/syntax" && site_rule web-v4 >"$T/syntax/10-site.lua"
printf 'jobtrace.rule("x", function(p, d)\n  d.tool = "y"\n' >"$T/syntax/20-x.lua"
raw_bundle "$T/syntax" v4-syntax "$T/v4.tar"
publish "$T/v4.tar"
check "a bundle with a Lua syntax error is refused, FILE:LINE named" wait_error "20-x.lua:3:" 5
check "the error names the bundle" wait_error "bundle v4-syntax" 1
check "the version in force stays v2 after the syntax error" eq "$(status_of rules_version)" v2
next_named web-v2 "after the syntax error"

# a rule whose self-test fails
mkdir -p "$T/selftest" && site_rule web-v5 nap >"$T/selftest/10-site.lua"
raw_bundle "$T/selftest" v5-selftest "$T/v5.tar"
publish "$T/v5.tar"
check "a bundle whose self-test fails is refused" wait_error "bundle v5-selftest" 5
note "rules_source_error: $(status_of rules_source_error)"
check "the error says which self-test" wait_error "10-site.lua" 1
check "the version in force stays v2 after the failed self-test" eq "$(status_of rules_version)" v2
next_named web-v2 "after the failed self-test"
# the host records tell the fleet store: the last one names v2 and the error
hr=$(q "select json from record where type = 'host' order by rowid desc limit 1;")
check "a host record says rules v2 and the error" \
	eq "$(printf '%s' "$hr" | python3 -c "import json,sys; r=json.load(sys.stdin)['rules']; print(r['version'], r['sha256'] is not None, 'v5-selftest' in (r['error'] or ''))")" \
	"v2 True True"

# ---- signatures --------------------------------------------------------------------
stop_agent
openssl genpkey -algorithm ed25519 -out "$T/sec.pem" 2>/dev/null
openssl pkey -in "$T/sec.pem" -pubout -out "$T/pub.pem"
openssl genpkey -algorithm ed25519 -out "$T/other.pem" 2>/dev/null
site_rule web-v6 >"$R/10-site.lua"
cli rules bundle "$R" -o "$T/v6.tar" --version v6 >/dev/null
publish "$T/v6.tar"
start_agent "" "rules = { source = \"$URL\"; poll_interval = $POLL; public_key = \"$T/pub.pem\"; };" || finish
check "with a public key, an unsigned bundle is refused" wait_error "is not signed" 5
cli rules bundle "$R" -o "$T/v6o.tar" --version v6-other --sign "$T/other.pem" >/dev/null
publish "$T/v6o.tar"
check "a bundle signed by another key is refused" wait_error "does not verify with public key $T/pub.pem" 5
# the bundle kept from before (v2) is not signed: refused at start as well
check "the unsigned bundle kept from before is refused at start under the key" \
	eq "$(grep -c "current.tar: bundle is not signed" "$T/agent.log")" 1
check "so the built-in rules stand in (rules_state '$(status_of rules_state)')" \
	eq "$(status_of rules_state | cut -d: -f1)|$(status_of rules_version)" "built-in|none (not a bundle)"
cli rules bundle "$R" -o "$T/v6s.tar" --version v6-signed --sign "$T/sec.pem" >/dev/null
publish "$T/v6s.tar"
check "a bundle signed by the key is taken" wait_status rules_version v6-signed 5
check "and its error cleared" eq "$(status_of rules_source_error)" none
next_named web-v6 "signed bundle"

# ---- restart with the server down ---------------------------------------------------
stop_agent
kill "$SRV_PID"
wait "$SRV_PID" 2>/dev/null
SRV_PID=
start_agent "" "rules = { source = \"$URL\"; poll_interval = $POLL; public_key = \"$T/pub.pem\"; };" || finish
check "restarted with the server down: the last good bundle is in force" eq "$(status_of rules_version)" v6-signed
check "status says it came from the state folder" \
	eq "$(status_of rules_bundle_from | cut -c1-16)" "the state folder"
check "status shows the failed fetch, naming the URL" wait_error "$URL" 5
next_named web-v6 "after a restart with the server down"
finish
