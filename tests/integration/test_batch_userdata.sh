#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_batch_userdata.sh - the AWS Batch user data of batch/make-user-data.
#
# 1. Bad arguments exit 2 with a message that names them.
# 2. Four parameter sets: the output parses with Python's email package as
#    multipart/mixed with a text/cloud-config and a text/x-shellscript part,
#    cloud-init's own user-data processor splits it the same way, `cloud-init
#    schema` accepts the cloud-config, sh -n the script, and no secret is in it.
# 3. Two of them run on a scratch node: an overlay of a scratch folder over
#    this machine's root, in a private mount namespace, entered with chroot
#    (so the host's dpkg database, /etc and /run are untouched).  The shell
#    part runs as cloud-init would run it and installs a .deb built from
#    this tree by batch/make-deb (a) over HTTP, (b) from a signed apt
#    repository; systemd is not running, so a systemctl stand-in records
#    the calls and starts the unit's ExecStart as systemd would.  Then the
#    agent it started must answer `jobtrace status` with the sink, host name
#    and rules the user data asked for, and (a) deliver a process record,
#    named by a rule the user data installed, to an HTTP sink with the
#    token fetched at boot (through an S3 stand-in for the AWS CLI).
#
# Needs root, kernel BTF, unshare/nsenter/chroot, overlayfs, dpkg-deb,
# dpkg-scanpackages, gpg, /usr/bin/python3 and cloud-init (installed by
# scripts/install-deps.sh).  Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_batch_userdata.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
for t in unshare nsenter chroot setsid dpkg-deb dpkg-scanpackages gpg cloud-init; do
	if ! command -v "$t" >/dev/null; then
		echo "# error: $t is missing (scripts/install-deps.sh installs it)"
		exit 99
	fi
done
PY=/usr/bin/python3
if ! "$PY" -c 'import email, yaml, cloudinit.user_data' 2>/dev/null; then
	echo "# error: $PY cannot import email, yaml and cloudinit (Debian package cloud-init)"
	exit 99
fi
if ! grep -qw overlay /proc/filesystems && ! modprobe overlay 2>/dev/null; then
	echo "# skipped: no overlayfs in this kernel"
	exit 77
fi
MUD=$top_srcdir/batch/make-user-data
MKDEB=$top_srcdir/batch/make-deb
NODE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
start_watchdog 150
t0=$(now)
GNUPGHOME=$T/gnupg
export GNUPGHOME

extra_cleanup() {
	gpgconf --kill gpg-agent 2>/dev/null
}

# make-user-data ARGS, stdout in $T/out, stderr in $T/err; prints the status.
mud() {
	"$MUD" "$@" >"$T/out" 2>"$T/err"
	echo $?
}

# Seconds since time $1 (from now), to a tenth.
since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'
}

# True if file $1 holds the fixed string $2.
has() {
	grep -qF -e "$2" "$1"
}

# ---- 1. bad arguments -----------------------------------------------------------
bad() {
	local msg=$1 want=$2 st
	shift 2
	st=$(mud "$@")
	check "$msg: exit 2" eq "$st" 2
	check "$msg: the message names $want" has "$T/err" "$want"
	check "$msg: nothing on standard output" eq "$(wc -c <"$T/out")" 0
	[ "$st" = 2 ] || note "stderr: $(cat "$T/err")"
}
DEB_URL=https://example.org/jobtrace_0.1.0_amd64.deb
SINK=https://ch.example.org:8443/
mkdir -p "$T/in/dir.lua"
printf 'jobtrace.rule("x", function(p, d) end)\n' >"$T/in/25-ok.lua"
bad "no arguments" "--sink-url"
bad "no package" "--package or --apt-repo" --sink-url "$SINK"
bad "no sink" "--sink-url is required" --package "$DEB_URL"
bad "missing rules file" "$T/in/nope.lua" --package "$DEB_URL" --sink-url "$SINK" \
	--rules "$T/in/nope.lua"
bad "rules file that is a folder" "$T/in/dir.lua" --package "$DEB_URL" \
	--sink-url "$SINK" --rules "$T/in/dir.lua"
bad "option without its value" "--rules needs a value" --package "$DEB_URL" \
	--sink-url "$SINK" --rules
bad "unknown option" "'--sinkurl'" --package "$DEB_URL" --sinkurl "$SINK"
bad "secret in the sink URL" "--sink-url 'https://u:pw@h/'" --package "$DEB_URL" \
	--sink-url https://u:pw@h/
bad "credentials by plain URL" "--credentials 'https://x/c'" --package "$DEB_URL" \
	--sink-url "$SINK" --credentials https://x/c
bad "package that is no .deb/.rpm" "--package 'https://x/jobtrace.tar.gz'" \
	--package https://x/jobtrace.tar.gz --sink-url "$SINK"
bad "package and repository" "exclude each other" --package "$DEB_URL" \
	--apt-repo 'deb https://apt.example.org bookworm main' --sink-url "$SINK"
bad "--set of the sinks" "--set 'sinks.url=x'" --package "$DEB_URL" \
	--sink-url "$SINK" --set sinks.url=x
bad "--apt-key without signed-by" "names no [signed-by=/PATH]" \
	--apt-repo 'deb https://apt.example.org bookworm main' \
	--apt-key https://apt.example.org/key.asc --sink-url "$SINK"
bad "--rules-source that is not a bundle's URL" "--rules-source 'ftp://x/b.tar'" \
	--package "$DEB_URL" --sink-url "$SINK" --rules-source ftp://x/b.tar
bad "--rules-source clickhouse with an http sink" "the rules are read from the clickhouse sink" \
	--package "$DEB_URL" --sink-url "$SINK" --sink-type http --rules-source clickhouse
bad "--rules-source with --rules" "exclude each other" --package "$DEB_URL" \
	--sink-url "$SINK" --rules-source https://x/b.tar --rules "$T/in/25-ok.lua"
bad "--rules-source and --set rules.source" "exclude each other" --package "$DEB_URL" \
	--sink-url "$SINK" --rules-source https://x/b.tar --set rules.source=https://y/b.tar
head -c 15000 /dev/urandom | base64 | sed 's/^/-- /' >"$T/in/27-huge.lua"
bad "user data over 16 KiB" "at most 16384" --package "$DEB_URL" --sink-url "$SINK" \
	--rules "$T/in/27-huge.lua"

# ---- 2. four parameter sets: MIME, cloud-init's view, schema --------------------
# Split user data $1 into $2/N.TYPE files; print one line per part:
# "content-type filename bytes", after "multipart/mixed N".
split_parts() {
	"$PY" - "$1" "$2" <<'PYEOF'
import email, os, sys
from email import policy
raw = open(sys.argv[1], "rb").read()
msg = email.message_from_bytes(raw, policy=policy.compat32)
parts = msg.get_payload() if msg.is_multipart() else []
print(msg.get_content_type(), len(parts), "defects=%d" % len(msg.defects))
for i, p in enumerate(parts):
    body = p.get_payload(decode=True)
    ext = p.get_content_subtype()
    with open(os.path.join(sys.argv[2], "%d.%s" % (i, ext)), "wb") as f:
        f.write(body)
    print(p.get_content_type(), p.get_content_charset(), p.get_filename(), len(body))
PYEOF
}

# The content types cloud-init's own user-data processor finds in $1.
cloudinit_view() {
	"$PY" - "$1" <<'PYEOF'
import sys
from cloudinit.user_data import UserDataProcessor
from cloudinit import helpers
paths = helpers.Paths({"cloud_dir": "/nonexistent", "run_dir": "/nonexistent"})
msg = UserDataProcessor(paths).process(open(sys.argv[1], "rb").read())
print(" ".join(p.get_content_type() for p in msg.walk() if not p.is_multipart()))
PYEOF
}

CANARY=jt-canary-$RANDOM$RANDOM
printf 'user = jobtrace\npassword = %s\n' "$CANARY" >"$T/in/local.cred"
chmod 600 "$T/in/local.cred"
printf 'jobtrace.rule("broken", function(p, d)\n' >"$T/in/28-broken.lua"
cat >"$T/in/25-site-a.lua" <<'LUA'
-- a site's rule, shipped embedded in the user data
jobtrace.rule("site-a", function(p, d)
  if p.comm == "jt-site-a" then d.tool = "site-a-tool"; d.category = "site" end
end)
jobtrace.selftest{ argv = { "/opt/jt-site-a" }, exe = "/opt/jt-site-a",
  expect = { tool = "site-a-tool", category = "site" } }
LUA
cat >"$T/in/26-site-b.lua" <<'LUA'
-- a site's rule, fetched at boot from --rules-url
jobtrace.rule("site-b", function(p, d)
  if p.comm == "jt-site-b" then d.tool = "site-b-tool" end
end)
LUA

# Start the HTTP file server (packages, rules, the apt repository) and the
# HTTP sink; their ports go to FILES_PORT and SINK_PORT.
mkdir -p "$T/www" "$T/recv"
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$T/www" \
	>"$T/www.log" 2>&1 &
BG_PIDS="$BG_PIDS $!"
python3 "$top_srcdir/tests/integration/http-receiver.py" "$T/recv/port" "$T/recv" &
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 1 50); do
	FILES_PORT=$(sed -n 's/.* port \([0-9]*\) .*/\1/p' "$T/www.log" | head -n 1)
	SINK_PORT=$(cat "$T/recv/port" 2>/dev/null)
	[ -n "$FILES_PORT" ] && [ -n "$SINK_PORT" ] && break
	sleep 0.1
done
if [ -z "$FILES_PORT" ] || [ -z "$SINK_PORT" ]; then
	note "the file server or the sink did not start:" "$(cat "$T/www.log")"
	exit 99
fi
FILES=http://127.0.0.1:$FILES_PORT
TOKEN=jt-token-$RANDOM$RANDOM
KEYRING=/etc/apt/keyrings/jobtrace-test.asc

# name | arguments (one per line)
SETS="a|--package
$FILES/PKG
--sink-type
http
--sink-name
collector
--sink-url
http://127.0.0.1:$SINK_PORT/ingest
--credentials
s3://jt-test-bucket/secrets/collector.headers
--rules
$T/in/25-site-a.lua
--rules-url
$FILES/rules/26-site-b.lua
--set
agent.hostname=batch-node-a
--set
collector.sample_interval=2
b|--apt-repo
deb [signed-by=$KEYRING] $FILES/repo ./
--apt-key
$FILES/repo/key.asc
--sink-url
http://127.0.0.1:9/
--sink-name
fleet
--database
jobs
--credentials
/etc/jobtrace/clickhouse.cred
--rules
$T/in/28-broken.lua
--set
agent.hostname=batch-node-b
c|--package
s3://bucket/pkgs/jobtrace-0.1.0-1.x86_64.rpm
--sink-url
https://ch.example.org:8443/
--rules-source
https://rules.example.org/fleet/bundle.tar
--credentials
ssm:/jobtrace/clickhouse
--set
store.enabled=false
d|--package=https://example.org/jobtrace_0.1.0_amd64.deb?versionId=3
--sink-url=https://ch.example.org/
--credentials=secretsmanager:arn:aws:secretsmanager:eu-west-1:123456789012:secret:jt
--rules=$T/in/25-ok.lua"

# Generate user data set $1 into $T/ud-$1 (the .deb's URL filled in).
generate() {
	local args=()
	mapfile -t args < <(printf '%s\n' "$SETS" | awk -v n="$1" -F'|' '
		/^[a-z]\|/ { on = ($1 == n); sub(/^[a-z]\|/, "") } on')
	args=("${args[@]//PKG/$DEB_NAME}")
	"$MUD" "${args[@]}" -o "$T/ud-$1" 2>"$T/err-$1"
}

# The package, the rules and a signed flat apt repository on the file server.
DEB=$("$MKDEB" "$top_builddir" "$T/www" 2>"$T/mkdeb.err") ||
	{ note "make-deb failed:" "$(cat "$T/mkdeb.err")"; exit 99; }
DEB_NAME=${DEB##*/}
mkdir -p "$T/www/rules" "$T/www/repo" "$GNUPGHOME"
chmod 700 "$GNUPGHOME"
cp "$T/in/26-site-b.lua" "$T/www/rules/"
cp "$DEB" "$T/www/repo/"
gpg -q --batch --passphrase '' --quick-gen-key 'jobtrace test <jt@localhost>' \
	ed25519 sign never 2>"$T/gpg.err" &&
	gpg -q --armor --export >"$T/www/repo/key.asc" ||
	{ note "gpg:" "$(cat "$T/gpg.err")"; exit 99; }
(
	cd "$T/www/repo" || exit 1
	dpkg-scanpackages -m . >Packages 2>/dev/null
	{
		echo "Origin: jobtrace-test"
		echo "Label: jobtrace-test"
		echo "Date: $(date -u -R)"
		echo "Architectures: $(dpkg --print-architecture)"
		echo "SHA256:"
		echo " $(sha256sum Packages | cut -d' ' -f1) $(wc -c <Packages) Packages"
	} >Release
	gpg -q --batch --clearsign -o InRelease Release
) || { note "could not build the apt repository"; exit 99; }
note "package $DEB_NAME ($(wc -c <"$DEB") bytes), made in $(since "$t0") s from the start"

for s in a b c d; do
	st=0
	generate "$s" || st=$?
	check "set $s: make-user-data exits 0" eq "$st" 0
	[ "$st" = 0 ] || { note "$(cat "$T/err-$s")"; continue; }
	mkdir -p "$T/parts-$s"
	split_parts "$T/ud-$s" "$T/parts-$s" >"$T/mime-$s"
	note "set $s: $(wc -c <"$T/ud-$s") bytes: $(tr '\n' ';' <"$T/mime-$s")"
	check "set $s: multipart/mixed of 2 parts, no MIME defects" \
		eq "$(head -n 1 "$T/mime-$s")" "multipart/mixed 2 defects=0"
	check "set $s: part 1 is text/cloud-config, us-ascii" \
		eq "$(sed -n 2p "$T/mime-$s" | cut -d' ' -f1,2)" "text/cloud-config us-ascii"
	check "set $s: part 2 is text/x-shellscript, us-ascii" \
		eq "$(sed -n 3p "$T/mime-$s" | cut -d' ' -f1,2)" "text/x-shellscript us-ascii"
	check "set $s: cloud-init's processor sees the same two parts" \
		eq "$(cloudinit_view "$T/ud-$s" 2>&1)" "text/cloud-config text/x-shellscript"
	check "set $s: the cloud-config starts with #cloud-config" \
		eq "$(head -n 1 "$T/parts-$s/0.cloud-config")" "#cloud-config"
	cloud-init schema --config-file "$T/parts-$s/0.cloud-config" >"$T/schema-$s" 2>&1
	check "set $s: cloud-init schema accepts the cloud-config" eq "$?" 0
	check "set $s: the script starts with #!/bin/sh" \
		eq "$(head -n 1 "$T/parts-$s/1.x-shellscript")" "#!/bin/sh"
	check "set $s: the script parses (sh -n)" sh -n "$T/parts-$s/1.x-shellscript"
	check "set $s: no secret in the user data" \
		eval "! grep -qF -e '$CANARY' -e '$TOKEN' '$T/ud-$s'"
done
check "set c: the configuration written follows the bundle (rules.source)" \
	has "$T/parts-c/1.x-shellscript" 'source = "https://rules.example.org/fleet/bundle.tar";'
# EC2 takes the base64 of exactly these bytes: the README's sed into the
# launch template keeps them
b64=$(base64 -w0 "$T/ud-a")
sed "s|REPLACE_WITH_BASE64_USER_DATA|$b64|" "$top_srcdir/batch/launch-template.json" \
	>"$T/lt-data.json"
check "launch-template.json with the user data is JSON and decodes to it" \
	"$PY" -c 'import base64, json, sys
d = json.load(open(sys.argv[1]))
sys.exit(base64.b64decode(d["UserData"]) != open(sys.argv[2], "rb").read())' \
	"$T/lt-data.json" "$T/ud-a"
check "the ECS drop-in waits for jobtrace status" \
	has "$T/parts-a/0.cloud-config" "ExecStartPre=-/usr/bin/timeout 30 /bin/sh -c 'command -v jobtrace"

# ---- 3. the shell part on a scratch node ------------------------------------------
# Prepare scratch node $1: its own layer (the stand-ins, the shell part where
# cloud-init puts it) and the folder it shares with the test.
prepare_node() {
	local n=$T/node-$1 l=$T/node-$1/lower
	mkdir -p "$l/opt/jobtrace-test" "$l/usr/local/bin" "$l/var/lib/cloud/instance/scripts" \
		"$n/share/s3" "$n/m"
	install -m 0700 "$T/parts-$1/1.x-shellscript" \
		"$l/var/lib/cloud/instance/scripts/jobtrace-node-setup.sh"
	cat >"$l/opt/jobtrace-test/systemctl" <<'SH'
#!/bin/sh
# Stands in for systemctl (no systemd runs here): records the call, and
# "--now" starts the unit's ExecStart as systemd would, detached.
echo "$*" >>/mnt/jt-share/systemctl.log
case " $* " in
*" --now "*) ;;
*) exit 0 ;;
esac
for a; do
	case $a in *.service) unit=$a ;; esac
done
for d in /etc/systemd/system /run/systemd/system /usr/local/lib/systemd/system \
	/usr/lib/systemd/system /lib/systemd/system; do
	[ -f "$d/$unit" ] && f=$d/$unit && break
done
[ -n "${f:-}" ] || { echo "Failed to enable unit: Unit file $unit does not exist." >&2; exit 1; }
echo "$f" >/mnt/jt-share/unit-file
cmd=$(sed -n 's/^ExecStart=//p' "$f" | tail -n 1)
cd / && setsid sh -c "exec $cmd" </dev/null >>/mnt/jt-share/agent.log 2>&1 &
echo $! >/mnt/jt-share/agent.pid
SH
	cat >"$l/usr/local/bin/aws" <<'SH'
#!/bin/sh
# Stands in for the AWS CLI (no AWS here): "s3 cp s3://BUCKET/KEY FILE"
# copies /mnt/jt-share/s3/BUCKET/KEY.
echo "$*" >>/mnt/jt-share/aws.log
[ "$1 $2" = "s3 cp" ] || { echo "aws stand-in: only s3 cp" >&2; exit 252; }
shift 2
[ "$1" = --only-show-errors ] && shift
cp "/mnt/jt-share/s3/${1#s3://}" "$2"
SH
	chmod 755 "$l/opt/jobtrace-test/systemctl" "$l/usr/local/bin/aws"
}

# Run the shell part of node $1 as cloud-init's scripts-user would, as root
# with a boot's environment; its status, and $T/node-$1/setup.log.
boot_node() {
	local n=$T/node-$1
	unshare -m --propagation private -- /bin/sh -eu -c '
		n=$1
		mount -t tmpfs -o mode=0755 tmpfs "$n/m"
		mkdir "$n/m/up" "$n/m/work" "$n/m/root"
		cp -a "$n/lower" "$n/m/lower"
		mount -t overlay overlay \
			-o "lowerdir=$n/m/lower:/,upperdir=$n/m/up,workdir=$n/m/work" "$n/m/root"
		r=$n/m/root
		for d in proc sys dev; do mount --rbind "/$d" "$r/$d"; done
		mount -t tmpfs -o mode=0755 tmpfs "$r/run"
		mount -t tmpfs -o mode=1777 tmpfs "$r/tmp"
		mkdir -p "$r/mnt/jt-share"
		mount --bind "$n/share" "$r/mnt/jt-share"
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 AWS_DEFAULT_REGION=eu-west-1 \
			JT_SYSTEMCTL=/opt/jobtrace-test/systemctl \
			/var/lib/cloud/instance/scripts/jobtrace-node-setup.sh
	' boot-node "$n" >"$n/setup.log" 2>&1
}

# Run a command on node $1 (in its mount namespace and root, as root).
on_node() {
	local pid=$1
	shift
	nsenter -t "$pid" -m -r -w -- /usr/bin/env -i PATH="$NODE_PATH" "$@"
}

# Stop node $1's agent; true if it exited within 10 s of SIGTERM.
stop_node_agent() {
	local pid=$1
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || { AGENT_PID=; return 0; }
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	AGENT_PID=
	return 1
}

# The agent's status value of KEY in file $1.
sv() {
	sed -n "s/^$2: //p" "$1" | head -n 1
}

NDEFAULT=$(ls "$top_srcdir"/lua-rules/*.lua | wc -l)

# Boot node $1 and check what both nodes must show: sink $2 at URL $3,
# host name $4.  Sets AGENT_PID and CONF_MODE; false if no agent runs.
boot_and_check() {
	local s=$1 n=$T/node-$1 st=0 t1 conf pid
	t1=$(now)
	boot_node "$s" || st=$?
	note "node $s: the shell part took $(since "$t1") s"
	check "node $s: the shell part exits 0" eq "$st" 0
	check "node $s: it reports the agent answering" has "$n/setup.log" "jobtrace-user-data: jobtraced answers:"
	check "node $s: systemctl daemon-reload, then enable --now --no-block" \
		eq "$(tr '\n' '|' 2>/dev/null <"$n/share/systemctl.log")" \
		"daemon-reload|enable --now --no-block jobtraced.service|"
	pid=$(cat "$n/share/agent.pid" 2>/dev/null)
	if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
		check "node $s: the agent the unit started is running" false
		note "setup.log:" "$(tail -n 25 "$n/setup.log")" "agent.log:" \
			"$(tail -n 10 "$n/share/agent.log" 2>/dev/null)"
		return 1
	fi
	AGENT_PID=$pid
	on_node "$pid" jobtrace status >"$n/status" 2>&1
	check "node $s: jobtrace status answers on the node" eq "$?" 0
	conf=$(sed -n 's/^jobtrace-user-data: wrote \([^ ]*\) .*/\1/p' "$n/setup.log")
	note "node $s: unit $(cat "$n/share/unit-file"), config $conf," \
		"$(grep -E '^(host|sink\.|rules|rules_files|rules_last_error):' "$n/status" | tr '\n' ' ')"
	check "node $s: the agent loaded the config the script wrote" eq "$(sv "$n/status" config)" "$conf"
	check "node $s: status shows the sink's URL" eq "$(sv "$n/status" "sink.$2.url")" "$3"
	check "node $s: status shows the host name set with --set" eq "$(sv "$n/status" host)" "$4"
	on_node "$pid" cat "$conf" >"$n/conf" 2>&1
	check "node $s: the config file holds the sink URL" has "$n/conf" "url = \"$3\";"
	CONF_MODE=$(on_node "$pid" stat -c '%a %U' "$conf")
	return 0
}

prepare_node a
mkdir -p "$T/node-a/share/s3/jt-test-bucket/secrets"
printf '# the collector token\nAuthorization: Bearer %s\n' "$TOKEN" \
	>"$T/node-a/share/s3/jt-test-bucket/secrets/collector.headers"
if boot_and_check a collector "http://127.0.0.1:$SINK_PORT/ingest" batch-node-a; then
	n=$T/node-a
	check "node a: the config is readable by all (the token is not in it)" \
		eq "$CONF_MODE:$(grep -c "$TOKEN" "$n/conf")" "644 root:0"
	cred=$(sed -n 's/^jobtrace-user-data: wrote \([^ ]*\)\/jobtrace.conf .*/\1/p' "$n/setup.log")/collector.cred
	check "node a: the config names the credentials file $cred" \
		has "$n/conf" "credentials_file = \"$cred\";"
	check "node a: which is root's only and holds the header" \
		eq "$(on_node "$AGENT_PID" stat -c '%a %U' "$cred"):$(on_node "$AGENT_PID" grep -c "^header = Authorization: Bearer $TOKEN\$" "$cred")" "600 root:1"
	check "node a: the token came from S3 through aws s3 cp" \
		has "$n/share/aws.log" "s3 cp --only-show-errors s3://jt-test-bucket/secrets/collector.headers"
	check "node a: both site rules loaded ($NDEFAULT default files + 2)" \
		eq "$(sv "$n/status" rules_files)" "$((NDEFAULT + 2))"
	check "node a: no rule error" eq "$(sv "$n/status" rules_last_error)" none
	on_node "$AGENT_PID" jobtrace rules test --exe /opt/jt-site-b -- jt-site-b >"$n/rt" 2>&1
	check "node a: the rule fetched by URL names its tool" grep -q 'site-b-tool' "$n/rt"
	# the drop-in's wait returns at once while the agent answers
	"$PY" -c 'import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
f = [w for w in c["write_files"] if w["path"].startswith("/etc/systemd/system/ecs.service.d/")][0]
l = [x for x in f["content"].splitlines() if x.startswith("ExecStartPre=-")][0]
print(l[len("ExecStartPre=-"):].split(" ", 4)[4][1:-1])' "$T/parts-a/0.cloud-config" >"$T/pre.sh"
	on_node "$AGENT_PID" timeout 5 /bin/sh -c "$(cat "$T/pre.sh")"
	check "node a: the ECS drop-in's wait for the agent ends at once" eq "$?" 0
	# a process the site rule names reaches the sink with the boot's token
	cp /bin/true "$T/jt-site-a"
	"$T/jt-site-a" site-a-run
	found=no
	for _ in $(seq 1 75); do
		if grep -q '"comm":"jt-site-a"' "$T/recv/records.ndjson" 2>/dev/null; then
			found=yes
			break
		fi
		sleep 0.2
	done
	check "node a: the HTTP sink got the site process's record" eq "$found" yes
	check "node a: ... named by the embedded site rule" \
		"$PY" -c 'import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("comm") == "jt-site-a" and r.get("host") == "batch-node-a":
        sys.exit(r["tool"]["name"] != "site-a-tool" or r["tool"]["category"] != "site")
sys.exit(1)' "$T/recv/records.ndjson"
	check "node a: ... with the token fetched at boot" \
		eq "$(awk -F'\t' '$1 == 200 { print $4; exit }' "$T/recv/requests.log")" "Bearer $TOKEN"
	check "node a: the agent stops on SIGTERM" stop_node_agent "$AGENT_PID"
fi

prepare_node b
mkdir -p "$T/node-b/lower/etc/jobtrace"
install -m 0600 "$T/in/local.cred" "$T/node-b/lower/etc/jobtrace/clickhouse.cred"
if boot_and_check b fleet "http://127.0.0.1:9/" batch-node-b; then
	n=$T/node-b
	check "node b: the config is readable by all (no secret in it)" eq "$CONF_MODE" "644 root"
	check "node b: the config names the credentials file" \
		has "$n/conf" 'credentials_file = "/etc/jobtrace/clickhouse.cred";'
	check "node b: ... and the database" has "$n/conf" 'database = "jobs";'
	check "node b: the secret is not in the config" eval "! grep -qF '$CANARY' '$n/conf'"
	check "node b: installed from the signed repository" \
		grep -q "Get:.*$FILES/repo ./ InRelease" "$n/setup.log"
	check "node b: the broken site rule was set aside" has "$n/setup.log" "28-broken.lua.disabled"
	check "node b: the default rules are in force" eq "$(sv "$n/status" rules_files)" "$NDEFAULT"
	check "node b: no rule error" eq "$(sv "$n/status" rules_last_error)" none
	check "node b: the agent stops on SIGTERM" stop_node_agent "$AGENT_PID"
fi
if [ "$failed" -ne 0 ]; then
	for s in a b; do
		[ -f "$T/node-$s/setup.log" ] && note "node $s setup.log (last 30 lines):" \
			"$(tail -n 30 "$T/node-$s/setup.log")"
	done
fi
note "total $(since "$t0") s"
finish
