#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_noise_names.sh - the default rules exclude system noise by name
# (lua-rules/10-deny.lua), and a name is anyone's to choose.  An
# unprivileged user made here copies bash under every name of the deny
# lists (and one that the systemd-* prefix catches) and runs each with a
# CPU loop of its own, in a job that root's hook registered and outside any
# job: every one is recorded, with the CPU wait4(2) saw.  So are a link
# named sshd to the real bash and a #! script named cron of the user's.
# Root's own copies under a system folder (/usr/local/lib) still go when
# they are what the rules mean, a root's program run by a system account
# outside any job: a "tree" name with what it starts, a "keep" name alone,
# a #! script too; and each of the conditions is needed: the same program
# run by the user, in a job, or in a login session's cgroup is recorded.
#
# Needs root, kernel BTF, the sqlite3 CLI, useradd/userdel, setpriv, perl.
# Exit 0 pass, 1 fail, 77 skipped, 99 hard error.  Makes the user
# jt-nn-user and the folder /usr/local/lib/jobtrace-it.XXXXXX, and
# removes them.
#
# Run:  make check TESTS=tests/integration/test_noise_names.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_commands --skip useradd userdel setpriv perl
need_built "$AGENT" "$CLI" "$WL/wait4each" "$WL/burn"
id -u daemon >/dev/null 2>&1 || { echo "# skipped: no system account 'daemon'"; exit 77; }
start_watchdog 240

U=jt-nn-user
J=jt-nn-$$
SYS=
CGDIR=
CGMADE=
# a CPU loop in the shell itself (no child): 10,000 rounds, ~30 ms
LOOP='i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done'

# The user, the system folder and the cgroups are this test's leftovers.
extra_cleanup() {
	local d
	remove_cgroup "$CGDIR"
	for d in $CGMADE; do
		rmdir "$d" 2>/dev/null
	done
	[ -n "$SYS" ] && rm -rf "$SYS"
	id -u $U >/dev/null 2>&1 && userdel $U 2>/dev/null
}

# Run the rest as user $U (setpriv: no fork, the pid is the program's).
as_user() {
	setpriv --reuid=$U --regid="$GID_U" --init-groups -- "$@"
}

# Run the rest as the system account daemon.
as_daemon() {
	setpriv --reuid=daemon --regid=daemon --clear-groups -- "$@"
}

# Wait (10 s at most) until the store has a record of a process whose
# argv has the word $1: everything the kernel reported before it is in.
wait_marker() {
	local i
	for i in $(seq 1 100); do
		[ "$(q "select count(*) from process where argv like '%$1%';")" -ge 1 ] &&
			return 0
		sleep 0.1
	done
	note "no record of the marker $1 after 10 s"
	return 1
}

# Start /bin/true with the word $1 and wait for its record.
marker() {
	/bin/true "$1"
	wait_marker "$1"
}

# Compare wait4each's output $1 with the records of its children: "n=..
# matched=.. within=.. zero=.." plus "missing", "job" and "off" lines in
# $2; each record in job $3 ("" none); tolerance max(1%, 50 µs).
compare_cpu() {
	local out=$1 cmp=$2 ppid
	ppid=$(sed -n 's/^pid=\([0-9]*\) children=.*/\1/p' "$out")
	q "select pid, round((cpu_user_s + cpu_sys_s) * 1e6), coalesce(job_id, '')
	   from process where ppid = ${ppid:-0} and since_time >= $SINCE;" >"$cmp.db"
	awk -F'|' -v job="${3:-}" 'FILENAME == ARGV[1] { rec[$1] = $2; jobof[$1] = $3; next }
		/ prog=/ {
			split($0, f, /[ =]/)	# pid P status S cpu_us U prog X
			pid = f[2]; w = f[6]; prog = $0; sub(/.* prog=/, "", prog)
			n++
			if (!(pid in rec)) { print "missing " pid " " prog " wait4 " w " us"; next }
			m++
			if (jobof[pid] != job) { print "job " pid " " prog " has job \"" jobof[pid] "\""; next }
			r = rec[pid]
			if (r == 0) zero++
			d = r - w; if (d < 0) d = -d
			t = w / 100; if (t < 50) t = 50
			if (d <= t) ok++
			else printf "off %d %s %s wait4 %d us, record %d us\n", d, pid, prog, w, r
		}
		END { printf "n=%d matched=%d within=%d zero=%d\n", n, m, ok, zero }' \
		"$cmp.db" "$out" >"$cmp"
}

# Check that each of the $4 programs wait4each ran (its output $1) has a
# record in job $3 ("" none) with wait4's CPU; $2 names them in messages.
check_runs() {
	local out=$1 what=$2 job=$3 n=$4 cmp
	cmp=$out.cmp
	compare_cpu "$out" "$cmp" "$job"
	CMP=$(tail -n 1 "$cmp")
	note "$what, records against wait4: $CMP"
	note "$(grep -vE '^n=' "$cmp" | head -n 8)"
	check "$what: every one of the $n has a record${job:+ in job $job}, none in another ($(kv "$CMP" matched) of $(kv "$CMP" n))" \
		eq "$(kv "$CMP" n):$(kv "$CMP" matched):$(grep -c '^job ' "$cmp")" "$n:$n:0"
	check "$what: the CPU of each within max(1%, 50 µs) of wait4's ($(kv "$CMP" within) of $n; $(kv "$CMP" zero) say 0)" \
		eq "$(kv "$CMP" within)" "$n"
}

# The records of the pids listed in file $1 (one per line): "pid:tool ..."
records_of() {
	local ids
	ids=$(tr -s ' \n' ',' <"$1" | sed 's/^,//; s/,$//')
	q "select group_concat(r, ' ') from (select pid || ':' || coalesce(tool_name, '') r
	   from process where pid in (${ids:-0}) and since_time >= $SINCE
	   order by start_time, pid);"
}

# ---- the names, the user, the copies ------------------------------------------------------

# every quoted name in the deny lists' calls (comments dropped first)
perl -0ne 's/--[^\n]*//g;
	while (/\blib\.deny(?:_outside_job)?\(\s*"(?:keep|tree)",(.*?)\)\s*\n/sg) {
		my $b = $1; print "$1\n" while $b =~ /"([^"]+)"/g }' \
	"$top_srcdir/lua-rules/10-deny.lua" | sort -u >"$T/names"
echo "systemd-jt-nn" >>"$T/names"	# caught by the systemd-* prefix
N=$(wc -l <"$T/names")
check "the deny lists name $N programs (at least 150 parsed from 10-deny.lua)" \
	between "$N" 150 100000
for n in telegraf sshd dircolors slurmd "(sd-pam)" jobtraced tini; do
	grep -qxF -- "$n" "$T/names" || check "'$n' is among the names parsed" false
done

userdel $U >/dev/null 2>&1
useradd -M -N -s /usr/sbin/nologin $U || { echo "# error: useradd $U failed"; exit 99; }
UID_U=$(id -u $U)
GID_U=$(id -g $U)
chmod 711 "$T"	# the user reaches its own folder in it
H=$T/home
mkdir -p "$H/bin" "$H/link" "$H/script"
while IFS= read -r n; do
	cp /bin/bash "$H/bin/$n"
done <"$T/names"
ln -s /bin/bash "$H/link/sshd"	# the real bash, under a name of the list
cat >"$H/script/cron" <<EOF
#!/bin/bash
$LOOP
EOF
chmod 755 "$H/script/cron"
chown -R $U "$H"
PROGS=$(sed "s|^|$H/bin/|" "$T/names")

# root's copies in a system folder, for what must still go
SYS=$(mktemp -d /usr/local/lib/jobtrace-it.XXXXXX) ||
	{ echo "# error: cannot make a folder in /usr/local/lib"; exit 99; }
chmod 755 "$SYS"
cp /bin/bash "$SYS/telegraf"
cp /bin/bash "$SYS/cron"
printf '#!/bin/sh\n%s\n"$@"\n' "$LOOP" >"$SYS/run-parts"
chmod 755 "$SYS/telegraf" "$SYS/cron" "$SYS/run-parts"

# found already running when the agent starts (its exe read from /proc):
# root's telegraf run by daemon, and the user's copy, each waiting
SINCE=$(date +%s)
sleep 1.1	# every record below starts after SINCE
mkfifo -m 644 "$T/go-g" "$T/go-n"
as_daemon "$SYS/telegraf" -c 'echo $$ >&3; read g <"$2"; "$1" 0.02 >/dev/null & echo $! >&3; wait' \
	sh "$WL/burn" "$T/go-g" 3>"$T/g-found.pids" &
FOUND_G=$!
as_user "$H/bin/telegraf" -c 'echo $$ >&3; read g <"$1"; '"$LOOP" sh "$T/go-n" 3>"$T/n-found.pids" &
FOUND_N=$!
BG_PIDS="$BG_PIDS $FOUND_G $FOUND_N"
start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish

# ---- 1. every name, the user's copy, in a job root registered ------------------------------

mkfifo "$H/go"
chown $U "$H/go"
# shellcheck disable=SC2086
setpriv --reuid=$U --regid="$GID_U" --init-groups -- \
	bash -c 'read g <"$1"; shift; exec "$@"' sh "$H/go" \
	"$WL/wait4each" "$LOOP" $PROGS >"$T/job.out" 2>"$T/job.err" &
RUNNER=$!
BG_PIDS="$BG_PIDS $RUNNER"
cli job-start --strict --job "$J" --scheduler test --user $U --pid $RUNNER \
	>"$T/start.out" 2>&1
check "root's job-start --pid $RUNNER (the user's runner) for job $J: exit $?" eq "$?" 0
echo go >"$H/go"
wait $RUNNER
st=$?
reaped $RUNNER
cli job-end --strict --job "$J" --scheduler test >/dev/null 2>&1
check "the user's $N copies ran in the job (wait4each exit $st; $(tail -n 1 "$T/job.out"))" \
	eq "$st:$(grep -c ' prog=' "$T/job.out")" "0:$N"
marker "jt-nn-mark-1"
check_runs "$T/job.out" "the user's copies in a job" "$J" "$N"
check "job $J's end record counts the $N copies and the runner ($((N + 1)) processes)" \
	eq "$(q "select count(*) from record where type = 'job' and job_id = '$J'
		and json like '%\"phase\":\"end\"%' and json like '%\"processes\":$((N + 1)),%';")" 1

# ---- 2. every name, the user's copy, in no job; a link and a script ------------------------

# shellcheck disable=SC2086
as_user "$WL/wait4each" "$LOOP" $PROGS "$H/link/sshd" "$H/script/cron" \
	>"$T/free.out" 2>"$T/free.err"
st=$?
check "the user's $N copies, the link and the script ran outside any job (exit $st)" \
	eq "$st:$(grep -c ' prog=' "$T/free.out")" "0:$((N + 2))"
marker "jt-nn-mark-2"
check_runs "$T/free.out" "the user's copies, link sshd and script cron in no job" "" $((N + 2))

# ---- 3. root's programs in a system folder, as the rules mean them -------------------------

# a "tree" daemon of a system account, with a child
as_daemon "$SYS/telegraf" -c "$LOOP"'; echo $$ >&3; "$1" 0.02 >/dev/null & echo $! >&3; wait' \
	sh "$WL/burn" 3>"$T/g-tree.pids"
# a "keep" one run by root: it goes, its child stays
"$SYS/cron" -c "$LOOP"'; echo $$ >&3; "$1" 0.02 >/dev/null & echo $! >&4; wait' \
	sh "$WL/burn" 3>"$T/g-keep.pids" 4>"$T/g-keep-child.pids"
# a #! script of root's, run by a system account, with a child
as_daemon "$SYS/run-parts" sh -c 'echo $PPID >&3; echo $$ >&3' 3>"$T/g-script.pids"
marker "jt-nn-mark-3"
check "root's telegraf run by daemon: neither it nor its child has a record ($(tr '\n' ' ' <"$T/g-tree.pids"))" \
	eq "$(records_of "$T/g-tree.pids")" ""
check "root's cron run by root: no record of its own ($(cat "$T/g-keep.pids"))" \
	eq "$(records_of "$T/g-keep.pids")" ""
check "... its child burn has its record" \
	eq "$(records_of "$T/g-keep-child.pids")" "$(cat "$T/g-keep-child.pids"):burn"
check "root's #! script run-parts run by daemon: neither it nor its child has a record ($(tr '\n' ' ' <"$T/g-script.pids"))" \
	eq "$(records_of "$T/g-script.pids")" ""

# the two found running go on: root's with its child, the user's copy
echo go >"$T/go-g"
echo go >"$T/go-n"
wait $FOUND_G $FOUND_N
reaped $FOUND_G
reaped $FOUND_N
marker "jt-nn-mark-found"
check "root's telegraf run by daemon, found running: neither it nor the child it starts then has a record ($(tr '\n' ' ' <"$T/g-found.pids"))" \
	eq "$(records_of "$T/g-found.pids")" ""
check "the user's copy named telegraf, found running: its record" \
	eq "$(records_of "$T/n-found.pids")" "$(cat "$T/n-found.pids"):telegraf"

# ---- 4. the same programs, where each condition fails -------------------------------------

# run by the user: a user's work
as_user "$SYS/telegraf" -c "$LOOP"'; echo $$ >&3; "$1" 0.02 >/dev/null & echo $! >&3; wait' \
	sh "$WL/burn" 3>"$T/n-user.pids"
as_user "$SYS/run-parts" sh -c 'echo $PPID >&3' 3>"$T/n-user-script.pids"
# in a job
setpriv --reuid=daemon --regid=daemon --clear-groups -- \
	bash -c 'read g <"$1"; shift; exec "$@"' sh "$H/go" \
	"$SYS/telegraf" -c "$LOOP"'; echo $$ >&3; "$1" 0.02 >/dev/null & echo $! >&3; wait' \
	sh "$WL/burn" 3>"$T/n-job.pids" &
RUNNER=$!
BG_PIDS="$BG_PIDS $RUNNER"
cli job-start --strict --job "$J-d" --scheduler test --pid $RUNNER >/dev/null 2>&1
echo go >"$H/go"
wait $RUNNER
reaped $RUNNER
cli job-end --strict --job "$J-d" --scheduler test >/dev/null 2>&1
# in a login session's cgroup (systemd's user.slice), on cgroup v2
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -n "$CG2" ]; then
	for d in "$CG2/user.slice" "$CG2/user.slice/user-$UID_U.slice"; do
		[ -d "$d" ] || { mkdir "$d" && CGMADE="$d $CGMADE"; }
	done
	CGDIR=$CG2/user.slice/user-$UID_U.slice/jt-nn-$$.scope
	mkdir "$CGDIR"
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CGDIR" \
		setpriv --reuid=daemon --regid=daemon --clear-groups -- \
		"$SYS/telegraf" -c "$LOOP"'; echo $$ >&3' 3>"$T/n-cg.pids"
fi
marker "jt-nn-mark-4"
check "root's telegraf run by the user: it and its child have records" \
	eq "$(records_of "$T/n-user.pids")" "$(head -n 1 "$T/n-user.pids"):telegraf $(tail -n 1 "$T/n-user.pids"):burn"
check "root's script run-parts run by the user: its record" \
	eq "$(records_of "$T/n-user-script.pids")" "$(cat "$T/n-user-script.pids"):run-parts"
check "root's telegraf run by daemon in job $J-d: it and its child have records in the job" \
	eq "$(q "select count(*) from process where job_id = '$J-d' and pid in ($(tr '\n' ',' <"$T/n-job.pids")0);")" 2
if [ -n "$CG2" ]; then
	check "root's telegraf run by daemon in ${CGDIR#"$CG2"}: its record" \
		eq "$(records_of "$T/n-cg.pids")" "$(cat "$T/n-cg.pids"):telegraf"
fi

finish
