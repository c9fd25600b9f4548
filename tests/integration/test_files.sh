#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_files.sh - what each process read and wrote, and how far along it is
# (issue 27), against the real kernel and references independent of the
# agent:
#   0. the agent attaches no system-call tracepoint (bpftool link) and has
#      the file iterator;
#   1. tests/workload/fileio, run as a job under strace (-f -y), opens files
#      from a thread that exits before the process, reads and writes known
#      bytes through each (read, pread, readv, write, pwrite, writev),
#      deletes a file while it is open, opens a folder and a relative path
#      with openat2, moves bytes through a pipe and a socket pair, keeps
#      some open while paused.  The kernel reads open files at each sample
#      pass and at the process's end (doc/architecture.md, "Files"), so
#      what it guarantees is checked: the files open at the pause
#      (/proc/PID/fd, a pass ran since) are listed, nothing strace did not
#      see opened is; a file's bytes are its offset at the end (big, read
#      from its start: exactly what fileio read; rw, moved by pwrite,
#      writev, pread, lseek, readv: its fdinfo pos, not the bytes moved),
#      its size the test's stat; pipes and sockets open at the pause are
#      counted, not listed;
#   2. while it is paused after reading a known part of a file, a sample's
#      progress has the offset /proc/PID/fdinfo/N gives (read by the test
#      before and after the sample, the same since it waits) and the
#      file's size; `jobtrace ps` prints "read 40% of big ...";
#   3. a canary planted inside a file the job reads and writes is in no
#      record, store, spool or log;
#   5. a process's files still open at its end (one on a tmpfs the test
#      mounts: the name crosses a mount) have their full names, offsets
#      and sizes;
#   4. the default rules drop /etc/ld.so.cache (open at the pause) and list
#      no library or its own executable.
#
# Needs root, kernel BTF, strace and the sqlite3 CLI.  Exit 0 pass, 1 fail,
# 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_files.sh   (in BUILD),
# under flock /tmp/jobtrace-it.lock.

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI" "$WL/fileio"
need_commands strace python3 bpftool
D=$T/d		# the files the workload reads and writes
BIG_READ=400000
CANARY="JTCANARY$$files$(date +%s%N)"
J=files-$$
start_watchdog 100

# The answer of query $1, waited for up to 10 s (a record being stored).
record_of() {
	local r=
	for _ in $(seq 1 50); do
		r=$(q "$1")
		[ -n "$r" ] && break
		sleep 0.2
	done
	printf '%s\n' "$r"
}

mkdir -p "$D"
# in: 300000 bytes, the canary inside (the workload reads it and copies
# 100000 bytes of it to out); rel: a relative open; big: the paused input
python3 -c 'import os, sys
c = sys.argv[2].encode()
b = bytearray(os.urandom(300000))
b[5000:5000 + len(c)] = c
open(sys.argv[1] + "/in", "wb").write(b)' "$D" "$CANARY"
printf 'relative %s\n' "$CANARY" >"$D/rel"
head -c 1000000 /dev/zero >"$D/big"
REL_SIZE=$(stat -c %s "$D/rel")

SAMPLE_INTERVAL=0.5 start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish

# ---- 0. no program at system calls ------------------------------------------------

# the agent's BPF links (ids from its fdinfo) as the kernel lists them
# (bpftool): a syscall tracepoint would put every call on the node on the
# slow path; the file iterator must be there
LINKS=$(for f in /proc/"$AGENT_PID"/fdinfo/*; do
	sed -n 's/^link_id:[[:space:]]*//p' "$f" 2>/dev/null
done | while read -r id; do
	bpftool -j link show id "$id" 2>/dev/null; echo
done | python3 -c 'import json, sys
for l in sys.stdin:
	if l.strip():
		l = json.loads(l)
		print(l.get("tp_name") or l.get("target_name") or l["type"])' | sort | paste -sd' ')
note "the agent's links: $LINKS"
check "the agent's links include the file iterator (task_file) and no system-call tracepoint" \
	eq "$(printf '%s\n' $LINKS | grep -cE '^(sys_(enter|exit)|raw_syscalls|syscalls)')|$(printf '%s\n' $LINKS | grep -c '^task_file$')" "0|1"

# ---- 1. the workload, paused at a known offset of big ------------------------------

"$CLI" --config "$CONF" run --job "$J" -- strace -f -qq -y -o "$T/strace.out" \
	-e trace=%file,read,write "$WL/fileio" "$D" "$BIG_READ" \
	>"$T/fileio.out" 2>"$T/fileio.err" </dev/null &
RUN=$!
BG_PIDS="$BG_PIDS $RUN"
W= FD=
for _ in $(seq 1 100); do
	line=$(grep '^paused ' "$T/fileio.out" 2>/dev/null)
	if [ -n "$line" ]; then
		W=$(kv "$line" pid)
		FD=$(kv "$line" fd)
		break
	fi
	sleep 0.1
done
check "fileio paused after reading $BIG_READ bytes of big (pid $W, fd $FD)" test -n "$W"
[ -n "$W" ] || finish
TRUTH=$(grep '^pid=' "$T/fileio.out")
note "fileio: $TRUTH"

# ---- 2. progress: a sample against /proc/PID/fdinfo/N, ps ---------------------------

POS0=$(sed -n 's/^pos:[[:space:]]*//p' "/proc/$W/fdinfo/$FD")
SAMPLE_Q="select json_extract(json, '\$.progress.path') || '|' ||
	json_extract(json, '\$.progress.offset_bytes') || '|' ||
	json_extract(json, '\$.progress.size_bytes') from record
	where type = 'sample' and json_extract(json, '\$.pid') = $W
	and json_extract(json, '\$.progress') is not null order by time desc limit 1;"
PROG=$(record_of "$SAMPLE_Q")
POS1=$(sed -n 's/^pos:[[:space:]]*//p' "/proc/$W/fdinfo/$FD")
note "fdinfo pos before $POS0, after $POS1; sample progress $PROG"
check "the test's fdinfo pos is $BIG_READ before and after the sample (it waits)" \
	eq "$POS0|$POS1" "$BIG_READ|$BIG_READ"
check "a sample's progress: $D/big at offset $POS1 of its 1000000 bytes" \
	eq "$PROG" "$D/big|$POS1|1000000"
PS=$(cli ps 2>&1)
note "ps: $(printf '%s\n' "$PS" | grep -A1 "^$W " | tr '\n' '/')"
check "jobtrace ps shows 'read 40% of big (390.6 of 976.6 KiB)' under fileio's row" \
	eq "$(printf '%s\n' "$PS" | grep -A1 "^$W " | tail -n 1 | sed 's/^ *//')" \
	"read 40% of big (390.6 of 976.6 KiB)"

# what fileio has open while paused, the reference of section 1: a pass
# ran since (the sample above) and it opens and closes nothing until its end
LINKS=$(for l in /proc/"$W"/fd/*; do readlink "$l"; done)
printf '%s\n' "$LINKS" | grep -E "^$D(/|\$)" | sort -u >"$T/open.paths"
NP=$(printf '%s\n' "$LINKS" | grep -c '^pipe:')
NS=$(printf '%s\n' "$LINKS" | grep -c '^socket:')
RW_POS=
for l in /proc/"$W"/fd/*; do
	[ "$(readlink "$l")" = "$D/rw" ] &&
		RW_POS=$(sed -n 's/^pos:[[:space:]]*//p' "/proc/$W/fdinfo/${l##*/}")
done
note "open at the pause: $(paste -sd' ' "$T/open.paths"), $NP pipes, $NS sockets, rw at $RW_POS"

kill -USR1 "$W"
wait "$RUN"
st=$?
reaped "$RUN"
check "jobtrace run of strace fileio exits 0 (exit $st; $(head -c 200 "$T/fileio.err"))" eq "$st" 0

# ---- 1. the record's files -----------------------------------------------------------

REC=$(record_of "select json from process where pid = $W and comm = 'fileio';")
check "fileio's process record is stored" test -n "$REC"
printf '%s\n' "$REC" >"$T/record.json"

# what strace saw fileio (and its threads) open under $D, resolved by -y
python3 - "$T/strace.out" "$D" >"$T/strace.paths" <<'PY'
import re, sys
d = sys.argv[2]
paths = set()
for line in open(sys.argv[1]):
	m = re.search(r'\b(open|openat|openat2|creat)\(.*\)\s+= \d+<([^>]*)>', line)
	if m and (m.group(2) == d or m.group(2).startswith(d + "/")):
		paths.add(m.group(2))
print("\n".join(sorted(paths)))
PY
python3 - "$T/record.json" "$D" >"$T/record.paths" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2]
print("\n".join(sorted(f["path"] for f in r["files"]
		       if f["path"] == d or f["path"].startswith(d + "/"))))
PY
note "strace: $(paste -sd' ' "$T/strace.paths")"
note "record: $(paste -sd' ' "$T/record.paths")"
check "the record lists the files under $D open at the pause ($(wc -l <"$T/open.paths"))" \
	eq "$(comm -23 "$T/open.paths" "$T/record.paths")" ""
check "the record lists no path under $D that strace did not see fileio open" \
	eq "$(comm -23 "$T/record.paths" "$T/strace.paths")" ""

# each file: flags, opens, bytes read, written, size, deleted, mmap
FILES=$(python3 - "$T/record.json" "$D" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2] + "/"
for f in r["files"]:
	name = f["path"][len(d):] if f["path"].startswith(d) else f["path"] == d[:-1] and "." or None
	if name is None:
		continue
	print("%s %s %d %d %d %s %s %s" % (name, ",".join(f["flags"]), f["opens"],
		f["read_bytes"], f["write_bytes"], f["size_bytes"],
		str(f["deleted"]).lower(), str(f["mmap"]).lower()))
PY
)
note "files: $(printf '%s\n' "$FILES" | paste -sd'/' -)"
file_is() {
	check "$1: $2 (record: $(printf '%s\n' "$FILES" | grep "^$1 " | cut -d' ' -f2-))" \
		eq "$(printf '%s\n' "$FILES" | grep "^$1 " | cut -d' ' -f2-)" "$2"
}
# big: read from its start, open at the end; rw: its offset (fdinfo pos)
# as the write side of a file opened for writing; the folder
file_is big "read 1 $((BIG_READ + 4096)) 0 1000000 false false"
file_is rw "read,write 1 0 $RW_POS $(stat -c %s "$D/rw") false false"
file_is . "read,directory 1 0 0 $(stat -c %s "$D") false false"
NONREG=$(python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["files_nonregular"]
print(n["pipes"], n["sockets"])' "$T/record.json")
# at least those open at the pause, at most also fileio's pipe and pair
check "files_nonregular: $NP to $((NP + 2)) pipes, $NS to $((NS + 2)) sockets ($NONREG)" \
	test "${NONREG% *}" -ge "$NP" -a "${NONREG% *}" -le $((NP + 2)) \
	-a "${NONREG#* }" -ge "$NS" -a "${NONREG#* }" -le $((NS + 2))
TIDS=$(q "select count(*) from process where comm = 'fileio' and pid != $W;")
check "the thread's files count for the process: no record of its own ($TIDS)" eq "$TIDS" 0

# ---- 4. what the default rules drop ---------------------------------------------------

LISTED=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
bad = [f["path"] for f in r["files"] if ".so" in f["path"] or
       f["path"].startswith(("/usr/lib", "/lib", "/proc", "/etc/ld.so")) or
       f["path"] == r["exe"]]
print(" ".join(bad) or "none", r["files_rest"]["count"])' "$T/record.json")
note "listed that the rules drop, and files_rest.count: $LISTED"
check "no library, loader cache or its own executable listed; they are counted in files_rest" \
	eq "$(echo "$LISTED" | cut -d' ' -f1)" none
check "files_rest counts what was dropped (at least /etc/ld.so.cache, open at the pause)" \
	test "$(echo "$LISTED" | cut -d' ' -f2)" -ge 1

# ---- 5. files open at a process's end: their names from the exit's walk ---------------

# a tmpfs of the test's own under the folder: the name crosses a mount;
# a process opens two files, reads 2 bytes of one and all of the other,
# and ends at once (a pass seldom sees them first: either way the names,
# offsets and sizes are the same)
extra_cleanup() { umount "$T/mnt" 2>/dev/null; }
mkdir -p "$T/mnt" "$D/a/b"
mount -t tmpfs -o size=1m jt-files "$T/mnt"
check "a tmpfs mounted on $T/mnt" mountpoint -q "$T/mnt"
printf 'hello\n' >"$T/mnt/shm"
head -c 12345 /dev/zero >"$D/a/b/late"
"$CLI" --config "$CONF" run --job "$J-late" -- python3 -c 'import os, sys
a = os.open(sys.argv[1], os.O_RDONLY)
b = os.open(sys.argv[2], os.O_RDONLY)
os.read(a, 2)
while os.read(b, 65536):
	pass
os._exit(0)' "$T/mnt/shm" "$D/a/b/late" >/dev/null 2>&1
LATE=$(record_of "select json from process where job_id like '%$J-late' and comm = 'python3';")
LATE_FILES=$(printf '%s\n' "$LATE" | python3 -c 'import json, sys
r = json.loads(sys.stdin.readline())
for f in r["files"]:
	if f["path"].startswith(sys.argv[1]):
		print(f["path"], f["read_bytes"], f["size_bytes"])' "$T/" | sort | paste -sd'/' -)
check "a process's files open at its end: names across a mount, offsets, sizes ($LATE_FILES)" \
	eq "$LATE_FILES" "$D/a/b/late 12345 12345/$T/mnt/shm 2 6"

# ---- 3. the canary -------------------------------------------------------------------

stop_agent
FILES_W=$(find "$T/state" "$T/run" "$T/agent.log" -type f 2>/dev/null)
note "searched: $(printf '%s\n' "$FILES_W" | sed "s|^$T/||" | paste -sd' ')"
check "the store and a spool segment are among the files searched" \
	eq "$(printf '%s\n' "$FILES_W" | grep -c '/state/jobtrace.db$')|$(printf '%s\n' "$FILES_W" | grep -c '/spool/.*\.seg$')" "1|1"
HITS=$(printf '%s\n' "$FILES_W" | xargs grep -la "$CANARY" 2>/dev/null)
check "the canary inside in and rel is in no record, store, spool or log (${HITS:-none})" test -z "$HITS"
check "the canary is in the files the job read (the search can find it)" \
	grep -qa "$CANARY" "$D/in" "$D/out"
finish
