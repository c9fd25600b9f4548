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
#      file's size; `jobtrace ps` prints "read 40% of big ...", and
#      `jobtrace top --once` the same progress on the process's line
#      (JSON: the sample's path, offset and size; text: 40% under PROG);
#   3. a canary planted inside a file the job reads and writes is in no
#      record, store, spool or log;
#   5. a process's files still open at its end (one on a tmpfs the test
#      mounts: the name crosses a mount) have their full names, offsets
#      and sizes;
#   4. the default rules drop /etc/ld.so.cache (open at the pause) and list
#      no library or its own executable;
#   6. a file a thread opened, read from and left open, the thread exiting
#      before the process, is listed with its bytes at the process's end;
#   8. a short tool's redirected standard fds, which coreutils close just
#      before they exit (sh -c 'head -c 1000 /dev/zero > hout; wc -l < win',
#      wc -c < wcin): listed in the tool's record with the bytes moved
#      (head's 1000 written, wc -l's 7000 read, wc -c's none: fstat); an
#      open shared with the parent counts the offset's movement since the
#      exec (sh -c 'echo abc; head -c 1000 /dev/zero' > shared: head's 1000);
#   9. processes that end with two files at fds 700 and 3000 (a table of 4096
#      fds): both listed in every record, and the exit program's run time
#      (kernel.bpf_stats_enabled) at most twice that with them at fds 3
#      and 4: the walk follows the open-fd bitmap (1 + 2 + 64 words read),
#      not 4096 slots.
#   A file opened and closed between two passes (a short tool's input:
#   sh -c 'cat small > out' closes small before it ends) is not guaranteed
#   by default: it is listed only if a pass ran while it was open
#   (doc/architecture.md, "Files").  With files.follow_opens:
#   7. the agent holds the open and close tracepoints; cat's small is
#      listed (read, all its bytes), catout (its fd 1) with the bytes cat
#      wrote, and in sh's record with the flags sh opened it with (write,
#      create, truncate); fileio under strace again: the record's paths under DIR
#      are exactly strace's, each file's bytes exact where the offset moves
#      (read, write, readv, writev), pread/pwrite's not counted (stated);
#      an existing file opened with O_CREAT is not "create".
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
start_watchdog 180

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

# What strace saw fileio (and its threads) open under $D, resolved by -y
# ($T/$1.out), into $T/$1.paths; the record's ($T/$2.json) into
# $T/$2.paths.
paths_under() {
	python3 - "$T/$1.out" "$D" >"$T/$1.paths" <<'PY'
import re, sys
d = sys.argv[2]
paths = set()
for line in open(sys.argv[1]):
	m = re.search(r'\b(open|openat|openat2|creat)\(.*\)\s+= \d+<([^>]*)>', line)
	if m and (m.group(2) == d or m.group(2).startswith(d + "/")):
		paths.add(m.group(2))
print("\n".join(sorted(paths)))
PY
	python3 - "$T/$2.json" "$D" >"$T/$2.paths" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2]
print("\n".join(sorted(f["path"] for f in r["files"]
			       if f["path"] == d or f["path"].startswith(d + "/"))))
PY
}

# Run fileio as job $1 under strace (-o $T/$2.out; stdout $T/$2.stdout)
# in the background (RUN) and wait until it pauses: sets W and FD.
fileio_paused() {
	"$CLI" --config "$CONF" run --job "$1" -- strace -f -qq -y -o "$T/$2.out" \
		-e trace=%file,read,write "$WL/fileio" "$D" "$BIG_READ" \
		>"$T/$2.stdout" 2>"$T/$2.err" </dev/null &
	RUN=$!
	BG_PIDS="$BG_PIDS $RUN"
	W= FD=
	for _ in $(seq 1 100); do
		line=$(grep '^paused ' "$T/$2.stdout" 2>/dev/null)
		if [ -n "$line" ]; then
			W=$(kv "$line" pid)
			FD=$(kv "$line" fd)
			return 0
		fi
		sleep 0.1
	done
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

SAMPLE_INTERVAL=0.5 start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"files = { enabled = true; };" || finish

# ---- 0. no program at system calls ------------------------------------------------

# The agent's BPF links (ids from its fdinfo) as the kernel lists them
# (bpftool): a tracepoint's name, an iterator's target, else the type and
# its program's name (a plain tracepoint's perf_event link: bpftool does
# not name its tracepoint).
agent_links() {
	for f in /proc/"$AGENT_PID"/fdinfo/*; do
		sed -n 's/^link_id:[[:space:]]*//p' "$f" 2>/dev/null
	done | while read -r id; do
		bpftool -j link show id "$id" 2>/dev/null; echo
	done | python3 -c 'import json, subprocess, sys
for l in sys.stdin:
	if l.strip():
		l = json.loads(l)
		n = l.get("tp_name") or l.get("target_name")
		if not n:
			p = subprocess.run(["bpftool", "-j", "prog", "show", "id",
					    str(l["prog_id"])], capture_output=True)
			n = l["type"] + ":" + json.loads(p.stdout or "{}").get("name", "?")
		print(n)' | sort | paste -sd' '
}

# a syscall tracepoint would put every call on the node on the slow path;
# the file iterator must be there
LINKS=$(agent_links)
note "the agent's links: $LINKS"
check "the agent's links include the file iterator (task_file) and no system-call tracepoint" \
	eq "$(printf '%s\n' $LINKS | grep -cE '^(sys_(enter|exit)|raw_syscalls|syscalls|perf_event:)')|$(printf '%s\n' $LINKS | grep -c '^task_file$')" "0|1"

# ---- 1. the workload, paused at a known offset of big ------------------------------

fileio_paused "$J" strace
check "fileio paused after reading $BIG_READ bytes of big (pid $W, fd $FD)" test -n "$W"
[ -n "$W" ] || finish
TRUTH=$(grep '^pid=' "$T/strace.stdout")
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
# top: the same progress on fileio's line, in its JSON and its text (PROG)
TOPJ=$(cli top --once --job "$J" --format json 2>&1)
TP=$(printf '%s' "$TOPJ" | python3 -c 'import json, sys
def walk(l):
	for x in l:
		if x.get("pid") == int(sys.argv[1]):
			p = x.get("progress") or {}
			print("%s|%s|%s" % (p.get("path"), p.get("offset_bytes"), p.get("size_bytes")))
		walk(x.get("children", []))
walk(json.load(sys.stdin)["runs"])' "$W" 2>&1)
check "top --format json: fileio's progress is the sample's ($TP)" eq "$TP" "$PROG"
TOPT=$(cli top --once --job "$J" 2>&1)
note "top: $(printf '%s\n' "$TOPT" | grep -E "^[a-z-]+ +$W " )"
check "top: fileio's line has 40% in its PROG column" \
	eval 'printf "%s\n" "$TOPT" | grep -E "^[a-z-]+ +$W " | grep -qE " 40% "'

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
check "jobtrace run of strace fileio exits 0 (exit $st; $(head -c 200 "$T/strace.err"))" eq "$st" 0

# ---- 1. the record's files -----------------------------------------------------------

REC=$(record_of "select json from process where pid = $W and comm = 'fileio';")
check "fileio's process record is stored" test -n "$REC"
printf '%s\n' "$REC" >"$T/record.json"

paths_under strace record
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

# ---- 2b. progress through a file a child reads for its waiting parent -------------
# bash holds shared open (fd 5) and waits for a child that reads 300000 bytes
# through the same open file after a go: the parent uses no CPU meanwhile,
# yet its offset moves (its fdinfo, the reference), and so must its progress
head -c 1000000 /dev/zero >"$D/shared"
mkfifo "$T/go"
"$CLI" --config "$CONF" run --job "$J-shared" -- bash -c '
	exec 5<"$1"
	( read -r _ <"$2"; dd bs=1000 count=300 <&5 >/dev/null 2>&1
	  echo "$BASHPID" >"$3"; exec sleep 600 ) &
	echo "$$" >"$4"
	wait' _ "$D/shared" "$T/go" "$T/shared.child" "$T/shared.pid" \
	>/dev/null 2>&1 &
BG_PIDS="$BG_PIDS $!"
for _ in $(seq 1 50); do [ -s "$T/shared.pid" ] && break; sleep 0.1; done
SP=$(cat "$T/shared.pid")
# the parent's latest sample's offset through shared; with $1, only from its
# second sample on (one whose progress the pass before may have kept)
shared_progress() {
	q "select json_extract(json, '\$.progress.offset_bytes') from record
		where type = 'sample' and json_extract(json, '\$.pid') = $SP
		and json_extract(json, '\$.progress.path') = '$D/shared'
		${1:+and time > (select min(time) from record where type = 'sample'
			and json_extract(json, '\$.pid') = $SP)}
		order by time desc limit 1;"
}
P0=
for _ in $(seq 1 50); do
	P0=$(shared_progress second)
	[ -n "$P0" ] && break
	sleep 0.2
done
echo go >"$T/go"
for _ in $(seq 1 50); do [ -s "$T/shared.child" ] && break; sleep 0.1; done
SPOS=$(sed -n 's/^pos:[[:space:]]*//p' "/proc/$SP/fdinfo/5")
P1=
for _ in $(seq 1 50); do
	P1=$(shared_progress)
	[ "$P1" = "$SPOS" ] && break
	sleep 0.2
done
note "shared: the parent's progress $P0 at its second sample, $P1 after the child read (its fdinfo pos $SPOS)"
check "a waiting parent's progress follows the child reading its open file: 0, then its fdinfo pos 300000" \
	eq "$P0|$P1|$SPOS" "0|300000|300000"
kill "$(cat "$T/shared.child")" 2>/dev/null

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

# ---- 6. a file opened by a thread that exits before the process -------------------

# the thread opens thr, reads 3000 bytes and ends (joined); the main thread
# ends 0.3 s later with thr still open: the exit's walk lists it
head -c 8000 /dev/zero >"$D/thr"
"$CLI" --config "$CONF" run --job "$J-thr" -- python3 -c 'import os, sys, threading, time
fds = []
def t():
	fds.append(os.open(sys.argv[1], os.O_RDONLY))
	os.read(fds[0], 3000)
th = threading.Thread(target=t)
th.start()
th.join()
time.sleep(0.3)
os._exit(0)' "$D/thr" >/dev/null 2>&1
THR=$(record_of "select json from process where job_id like '%$J-thr' and comm = 'python3';")
THR_FILE=$(printf '%s\n' "$THR" | python3 -c 'import json, sys
r = json.loads(sys.stdin.readline())
print(" ".join("%s %d %d %d" % (f["path"], f["opens"], f["read_bytes"], f["size_bytes"])
	       for f in r["files"] if f["path"] == sys.argv[1]))' "$D/thr")
check "a file opened by a thread that ended before the process: listed with its bytes ($THR_FILE)" \
	eq "$THR_FILE" "$D/thr 1 3000 8000"

# ---- 8. a short tool's standard fds ----------------------------------------------

# The files of job $1's process named $2 under $D: name flags opens read
# written size, one per line joined by /.
files_in() {
	record_of "select json from process where job_id like '%$1' and comm = '$2';" |
		python3 -c 'import json, sys
r = json.loads(sys.stdin.readline())
for f in r["files"]:
	if f["path"].startswith(sys.argv[1]):
		print(f["path"][len(sys.argv[1]):], ",".join(f["flags"]), f["opens"],
		      f["read_bytes"], f["write_bytes"], f["size_bytes"])' "$D/" | sort | paste -sd'/' -
}

# coreutils close their standard fds just before they exit (strace: close(0)
# when stdin was read, close(1), close(2)), so the exit walk finds them closed:
# the exec's slots for fds 0-2 read them again there.  hout: sh opens it and
# execs head (the file has no other holder, freed at head's close); win: wc -l
# reads it to its end; wcin: the test's own shell holds it (jobtrace run
# inherits it), wc -c takes its size from fstat and reads nothing (offset 0)
head -c 7000 /dev/zero | tr '\0' '\n' >"$D/win"
head -c 3000 /dev/zero >"$D/wcin"
rm -f "$D/hout"
"$CLI" --config "$CONF" run --job "$J-std" -- sh -c \
	"head -c 1000 /dev/zero > '$D/hout'; wc -l < '$D/win'" >/dev/null 2>&1
"$CLI" --config "$CONF" run --job "$J-wcc" -- wc -c <"$D/wcin" >/dev/null 2>&1
STD_HEAD=$(files_in "$J-std" head)
check "head -c 1000 > hout: hout listed in head's record with the bytes written through fd 1 ($STD_HEAD)" \
	eq "$STD_HEAD" "hout write 1 0 1000 $(stat -c %s "$D/hout")"
STD_WC=$(files_in "$J-std" wc)
check "wc -l < win: win listed in wc's record, read to its end through fd 0 ($STD_WC)" \
	eq "$STD_WC" "win read 1 7000 0 7000"
# shared: one open for the test's shell, jobtrace run, sh and head; sh's echo
# writes 4 bytes before head starts: head's bytes are its own 1000, not the
# shared offset's 1004
rm -f "$D/shared"
"$CLI" --config "$CONF" run --job "$J-shr" -- sh -c 'echo abc; head -c 1000 /dev/zero' \
	>"$D/shared" 2>/dev/null
STD_SHR=$(files_in "$J-shr" head)
check "head's stdout shared with sh (which wrote 4 bytes first): head's own 1000 bytes ($STD_SHR)" \
	eq "$STD_SHR" "shared write 1 0 1000 1004"
# one open, one name: the inner sh's exec finds rn-old on fd 1 with no slot
# of its parent's (the kernel walks its name); mv renames it to rn-new; head's
# exec finds it on the fd of its parent, which has a slot: the kernel sends
# it without a name and the agent takes the inner sh's, rn-old (a walk, or
# /proc, would say rn-new).  The inner sh had it open at its end and the
# kernel saw a name left then: renamed, not deleted (head closed it before
# its end: its path is lstat'ed, and gone; doc/architecture.md, "Files")
rm -f "$D/rn-old" "$D/rn-new"
"$CLI" --config "$CONF" run --job "$J-rn" -- sh -c \
	'sh -c "mv \"\$1\" \"\$2\"; head -c 500 /dev/zero" _ "$1" "$2" >"$1"' \
	_ "$D/rn-old" "$D/rn-new" </dev/null >/dev/null 2>&1
STD_RN=$(files_in "$J-rn" head)
check "stdout renamed between the shell's exec and head's: head's record names it as the shell's open did ($STD_RN)" \
	eq "$STD_RN" "rn-old write 1 0 500 500"
RN_DEL=$(q "select json_extract(f.value, '\$.deleted') from process, json_each(process.json, '\$.files') f
	where job_id like '%$J-rn' and comm = 'sh' and json_extract(f.value, '\$.path') = '$D/rn-old';")
check "... and in the inner sh's record not deleted: renamed while open, the kernel saw a name left at its end (deleted $RN_DEL)" \
	eq "$RN_DEL" 0
STD_WCC=$(files_in "$J-wcc" wc)
check "wc -c < wcin (fd 0 from the test's shell): wcin listed, its size, no byte read ($STD_WCC)" \
	eq "$STD_WCC" "wcin read 1 0 0 3000"
# pipes are counted once each: the middle of a pipeline, which execs
# three times (sh, sh, cat) and lives through passes (every 0.5 s), counts its
# two, the last cat its one; that one is a subshell that passes see before
# its exec (their slot, then the exec's pipe on fd 0).  The job closes the
# fds above 2 it inherits from whatever ran the test first: they would
# count too.
# The pipes the cats of job $1 counted, in order (a pipeline's run).
pipeline_pipes() {
	"$CLI" --config "$CONF" run --job "$1" -- bash -c \
		'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
		exec sh -c "$1"' _ "$2" </dev/null >/dev/null 2>&1
	q "select json_extract(json, '\$.files_nonregular.pipes') from process
		where job_id like '%$1' and comm = 'cat' order by 1;" | paste -sd' '
}
PIPES=$(pipeline_pipes "$J-pipe" \
	'echo x | sh -c "exec sh -c \"sleep 1.2; exec cat\"" | (sleep 1.2; exec cat) >/dev/null')
check "pipes of a pipeline's cats, seen at execs (three; one after passes), passes and the exit: 1 and 2 ($PIPES)" \
	eq "$PIPES" "1 2"

# The fds of process $1 that have a slot in the agent's fd map (fslots,
# key tgid << 32 | fd), in order.
fslot_fds() {
	local id
	for id in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool -j map show id "$id" 2>/dev/null | grep -q '"name":"fslots"' &&
			bpftool -j map dump id "$id" 2>/dev/null
	done | python3 -c 'import json, sys
def key(e):
	k = e.get("formatted", e)["key"]
	if isinstance(k, list):
		k = int.from_bytes(bytes(int(b, 16) for b in k), "little")
	return k
text = sys.stdin.read().strip()
pid = int(sys.argv[1])
print(" ".join(str(k & 0xffffffff) for k in sorted(map(key, json.loads(text) if text else []))
	       if k >> 32 == pid))' "$1"
}
# While a pipeline runs, a process whose exec found a pipe on fd 1 has no
# slot for it (it was counted then); a subshell, which no exec has seen
# yet, gets a slot for its pipe on fd 0 from a pass (waited for: up to
# 3 s).  The slot stays after its exec, and counts once.
"$CLI" --config "$CONF" run --job "$J-slots" -- bash -c \
	'for f in /proc/$$/fd/*; do n=${f##*/}; [ "$n" -gt 2 ] && eval "exec $n>&-"; done
	exec sh -c "$1"' _ 'sleep 4.51 | (sleep 4.52; exec cat) >/dev/null' \
	</dev/null >/dev/null 2>&1 &
SLOTS_RUN=$!
SLEEP_PID= SUB_FDS= SLEEP_FDS=unseen
for _ in $(seq 30); do
	sleep 0.1
	SLEEP_PID=$(pgrep -fx 'sleep 4.51' | head -1)
	SUB_PID=$(ps -o ppid= -p "$(pgrep -fx 'sleep 4.52' | head -1)" 2>/dev/null | tr -d ' ')
	[ -n "$SLEEP_PID" ] && [ -n "$SUB_PID" ] || continue
	SUB_FDS=$(fslot_fds "$SUB_PID")
	[ "$SUB_FDS" = 0 ] && SLEEP_FDS=$(fslot_fds "$SLEEP_PID") && break
done
check "a pass gave the subshell of 'sleep 4.51 | (sleep 4.52; exec cat)' a slot for its pipe on fd 0 ($SUB_FDS)" \
	eq "$SUB_FDS" 0
check "... and 'sleep 4.51', its pipe on fd 1 counted at its exec, has no slot ($SLEEP_FDS)" \
	eq "$SLEEP_FDS" ""
wait "$SLOTS_RUN"
PIPES=$(q "select json_extract(json, '\$.files_nonregular.pipes') from process
	where job_id like '%$J-slots' and comm in ('sleep', 'cat') order by comm;" | paste -sd' ')
check "... the cat it became and both sleeps count one pipe each (cat, sleep, sleep: $PIPES)" \
	eq "$PIPES" "1 1 1"

# ---- 9. a sparse fd table: the exit's walk follows its open bitmap ---------------

# The run time of the agent's jt_exit program so far (ns; bpf_stats).
exit_ns() {
	local id
	for id in $(sed -n 's/^prog_id:[[:space:]]*//p' /proc/"$AGENT_PID"/fdinfo/* 2>/dev/null | sort -u); do
		bpftool -j prog show id "$id" 2>/dev/null
		echo
	done | python3 -c 'import json, sys
print(sum(p.get("run_time_ns", 0) for p in map(json.loads, filter(str.strip, sys.stdin))
	  if p.get("name") == "jt_exit"))'
}

# 100 processes (bash) each end with fa and fb open at fds $1 and $2 of
# job $J-fd$3; jt_exit's run time over them (ns) into EXIT_NS
fd_job() {
	local n0
	n0=$(exit_ns)
	"$CLI" --config "$CONF" run --job "$J-fd$3" -- bash -c \
		'for i in $(seq 100); do bash -c "exec $1<\"$3\" $2<\"$4\"; :"; done' \
		_ "$1" "$2" "$D/fa" "$D/fb" >/dev/null 2>&1
	EXIT_NS=$(( $(exit_ns) - n0 ))
}
head -c 111 /dev/zero >"$D/fa"
head -c 222 /dev/zero >"$D/fb"
STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
extra_cleanup() {
	umount "$T/mnt" 2>/dev/null
	sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD"
}
sysctl -q -w kernel.bpf_stats_enabled=1
fd_job 3 4 dense
DENSE_NS=$EXIT_NS
fd_job 700 3000 sparse	# a table of 4096 fds: 64 words of open_fds
SPARSE_NS=$EXIT_NS
sysctl -q -w kernel.bpf_stats_enabled="$STATS_OLD"
for _ in $(seq 1 100); do	# the 100 and their loop's, stored
	[ "$(q "select count(*) from process where job_id like '%$J-fdsparse' and comm = 'bash';")" -ge 101 ] && break
	sleep 0.2
done
SPARSE=$(q "select json from process where job_id like '%$J-fdsparse' and comm = 'bash';" |
	python3 -c 'import json, sys
n, seen = 0, set()
for l in sys.stdin:
	r = json.loads(l)
	got = " ".join(sorted("%s %d" % (f["path"][len(sys.argv[1]):], f["size_bytes"])
			      for f in r["files"] or [] if f["path"].startswith(sys.argv[1])))
	n += got == "fa 111 fb 222"
	seen.add(got)
print(n, "of", len(seen), "kinds:", "/".join(sorted(seen)))' "$D/")
check "fa and fb at fds 700 and 3000 at each end: listed in all 100 records ($SPARSE)" \
	eq "${SPARSE%% of *}" 100
note "jt_exit per process: fds 3 and 4 $((DENSE_NS / 100)) ns, fds 700 and 3000 $((SPARSE_NS / 100)) ns"
check "jt_exit's walk follows the open fds, not the table's 4096 slots: at most 2x the cost with fds 3 and 4" \
	test "$SPARSE_NS" -le $((2 * DENSE_NS))

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

# ---- 7. files.follow_opens: every open and close -------------------------------------

SAMPLE_INTERVAL=0.5 start_agent "rules_dir = \"$top_srcdir/lua-rules\";" \
	"files = { enabled = true; follow_opens = true; };" || finish
LINKS=$(agent_links)
note "the agent's links with follow_opens: $LINKS"
check "follow_opens: the agent holds the open and close tracepoints beside the file iterator" \
	eq "$(printf '%s\n' $LINKS | grep -E '^perf_event:' | paste -sd' ')|$(printf '%s\n' $LINKS | grep -c '^task_file$')" \
	"perf_event:jt_close perf_event:jt_open perf_event:jt_open perf_event:jt_open perf_event:jt_open|1"

# a short tool's input, opened, read and closed between two passes
rm -f "$D/catout"
head -c 5000 /dev/urandom >"$D/small"
printf 'old\n' >"$D/exists"
"$CLI" --config "$CONF" run --job "$J-cat" -- sh -c \
	"cat '$D/small' > '$D/catout'; python3 -c 'import os; os.close(os.open(\"$D/exists\", os.O_WRONLY | os.O_CREAT))'" \
	>/dev/null 2>&1
# The files of job $J-cat's process named $1 under $D (files_in).
files_of() {
	files_in "$J-cat" "$1"
}
# sh opens catout (dash: before its fork, then dup2 to 1 and close), cat
# inherits it as fd 1: the open's flags are sh's, the bytes cat's
CAT_FILES=$(files_of cat)
check "cat small > catout: small read whole and closed before cat ended, catout written through fd 1 ($CAT_FILES)" \
	eq "$CAT_FILES" "catout write 1 0 5000 5000/small read 1 5000 0 5000"
SH_FILES=$(files_of sh)
check "sh created and truncated catout and closed it (dup2 to cat's fd 1) ($SH_FILES)" \
	eq "$SH_FILES" "catout write,create,truncate 1 0 0 0"
PYF=$(record_of "select json from process where job_id like '%$J-cat' and comm = 'python3';" |
	python3 -c 'import json, sys
r = json.loads(sys.stdin.readline())
print(" ".join(",".join(f["flags"]) for f in r["files"] if f["path"] == sys.argv[1]))' "$D/exists")
check "an existing file opened with O_CREAT is not created: flags write ($PYF)" eq "$PYF" "write"
# cat closes its stdin and stdout before it ends: a pipe counted at the
# exec is not counted again at its close (the cats would have 3 and 7).
# Each close is seen: between fork and exec, dash closes in each child the
# pipe fds it does not keep (the last cat's: the read end it moved to 0;
# the middle one's: that, the next pipe's write end it moved to 1 and
# that pipe's read end), each a pipe fd counted then (records.md).
PIPES=$(pipeline_pipes "$J-fpipe" 'echo x | cat | cat >/dev/null')
check "follow_opens: the pipes of a pipeline's cats, the exec's on fds 0 and 1 once each, and dash's closes before it: 2 and 5 ($PIPES)" \
	eq "$PIPES" "2 5"

# fileio again under strace: paths exactly strace's, bytes where offsets move
rm -f "$D/out" "$D/rw"
fileio_paused "$J-fo" strace2
check "fileio paused again (pid $W)" test -n "$W"
[ -n "$W" ] || finish
kill -USR1 "$W"
wait "$RUN"
reaped "$RUN"
REC2=$(record_of "select json from process where pid = $W and comm = 'fileio';")
printf '%s\n' "$REC2" >"$T/record2.json"
paths_under strace2 record2
note "strace: $(paste -sd' ' "$T/strace2.paths"); record: $(paste -sd' ' "$T/record2.paths")"
check "follow_opens: the record's paths under $D are exactly those strace saw fileio open" \
	eq "$(paste -sd' ' "$T/record2.paths")" "$(paste -sd' ' "$T/strace2.paths")"
FILES=$(python3 - "$T/record2.json" "$D" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
d = sys.argv[2] + "/"
for f in r["files"]:
	if f["path"].startswith(d):
		print("%s %s %d %d %d %s" % (f["path"][len(d):], ",".join(f["flags"]),
			f["opens"], f["read_bytes"], f["write_bytes"],
			str(f["deleted"]).lower()))
PY
)
note "files: $(printf '%s\n' "$FILES" | paste -sd'/' -)"
# in: 100000 by read (the thread's), its pread of 100000 moves no offset;
# out: 100000 written; tmp: 10000 written, deleted; rel: all of it
file_is in "read 1 100000 0 false"
file_is out "write,create,truncate 1 0 100000 false"
file_is tmp "write,create,truncate 1 0 10000 true"
file_is rel "read 1 $REL_SIZE 0 false"
file_is big "read 1 $((BIG_READ + 4096)) 0 false"
stop_agent
finish
