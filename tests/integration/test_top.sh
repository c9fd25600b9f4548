#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# test_top.sh - `jobtrace top` on a real Snakemake pipeline run twice under
# the agent (the first run gives the expected durations).
#
# Rules: quick (sleep 1), slow (sleep 3, then 60 in the second run) and
# bad (fine in the first run, exit 3 in the second).  While the second run
# is in slow's sleep and bad has failed:
#  - --once --run R2: slow is running with its sleep process, an elapsed
#    and an expected time ("of ~3s"), quick is done, bad failed;
#  - --format json: the sleep's pid, ppid and comm are /proc's, its RSS is
#    /proc's VmRSS at the frame's time (a sample 1 s after its start: a
#    sleeping sleep's RSS does not move; within the kernel's per-CPU
#    counter batches, which the agent's figure leaves out), its elapsed time
#    is /proc's start to the frame's (1.5 s: btime has whole seconds);
#  - the view in tmux (120x40): the tree, Enter on the run collapses and
#    expands it, the filter "bad" leaves the run and bad only, s sorts by
#    name, f follows the run, and q gives the shell's prompt back with the
#    view's screen gone; with TOP_SCREENSHOT=PATH its first screen is drawn
#    into PATH (README's doc/top.png);
#  - user nobody, who may not read the store, gets the agent's answer
#    without root's run;
#  - nobody's view of nobody's own run in tmux: one answering child of
#    the agent serves every frame (the same pid 2 s apart while the
#    header's clock moves), and q ends the view and that child.
#
# Needs root, kernel BTF, the sqlite3 CLI, snakemake, tmux, python3
# (chromium for TOP_SCREENSHOT) (scripts/install-deps.sh).  Exit 0 pass, 1 fail, 77 skipped, 99 hard error.
#
# Run:  make check TESTS=tests/integration/test_top.sh   (in BUILD)

set -u

. "$(dirname "$0")/lib.sh"
need_built "$AGENT" "$CLI"
need_commands snakemake python3 tmux
start_watchdog 300

TMUX_S=jt_top$$
# End the second run: the processes it started, by pid; what is left after
# 2 s of SIGTERM (snakemake can hang in its own shutdown, and an orphan would
# hold the integration-test lock's fd) gets SIGKILL.
stop_run2() {
	local pids p
	[ -n "${SMK_PID:-}" ] || return 0
	pids="$(below "$SMK_PID") $SMK_PID"
	kill $pids >/dev/null 2>&1
	for _ in $(seq 1 20); do
		for p in $pids; do
			kill -0 "$p" 2>/dev/null && break
		done || break
		sleep 0.1
	done
	kill -9 $pids >/dev/null 2>&1
	wait "$SMK_PID" 2>/dev/null
	SMK_PID=
}
extra_cleanup() {
	tmux kill-session -t "$TMUX_S" >/dev/null 2>&1
	stop_run2
}

W=$T/wf
TAG=top$$
mkdir -p "$W"
cat >"$W/Snakefile" <<'EOF'
rule all:
    input: "out/quick.txt", "out/slow.txt", "out/bad.txt"

rule quick:
    output: "out/quick.txt"
    shell: "sleep 1; echo q > {output}"

rule slow:
    input: "out/quick.txt"
    output: "out/slow.txt"
    shell: "sleep ${{SLOW_S:-3}}; echo s > {output}"

rule bad:
    input: "out/quick.txt"
    output: "out/bad.txt"
    shell: "test -z \"${{FAIL:-}}\" || exit 3; echo b > {output}"
EOF

# Run the pipeline as job $TAG-j$1, run $TAG-r$1 (env: SLOW_S, FAIL).
run_pipeline() {
	(cd "$W" && rm -rf out .snakemake && "$CLI" --config "$CONF" run \
		--job "$TAG-j$1" --run "$TAG-r$1" --pipeline toppl -- \
		snakemake -s Snakefile -j 2 --keep-going \
		>"$T/snakemake.$1.out" 2>&1)
}

# The `top --once` line of task $2 of run $1 (text), or nothing.
task_line() {
	cli top --once --run "$TAG-r$1" | grep -E "^[a-z-]+ +[-+ ]? *$2 "
}

start_agent "rules_dir = \"$top_srcdir/lua-rules\";" || finish

# ---- the first run: the expected durations ------------------------------------------
run_pipeline 1
st=$?
check "run 1: snakemake exits 0 (got $st)" eq "$st" 0
[ "$st" = 0 ] || note "$(tail -n 15 "$T/snakemake.1.out")"
wait_q "select count(*) from process where job_run = '$TAG-r1' and comm = 'sleep';" 2 10 ||
	note "run 1's sleeps are not stored"
note "$(cli top --once --run "$TAG-r1" 2>&1)"
check "run 1 ended: top shows it done, slow done in about 3 s" \
	eval 'cli top --once --run "$TAG-r1" | grep -qE "^done +$TAG-r1 toppl" &&
		cli top --once --run "$TAG-r1" | grep -qE "^done +  slow +[34]s "'

# ---- the second run: slow sleeps, bad fails -----------------------------------------
(SLOW_S=60 FAIL=1 run_pipeline 2) &
SMK_PID=$!
wait_q "select count(*) > 0 from process where job_run = '$TAG-r2' and job_task = 'bad'
	and exit_code = 3;" 1 30 || note "bad's failure is not stored"
wait_q "select count(distinct json_extract(json, '\$.time')) >= 2 from record where type = 'sample'
	and json_extract(json, '\$.job.run') = '$TAG-r2' and json_extract(json, '\$.comm') = 'sleep';" 1 30 ||
	note "slow's sleep has no two samples"
SPID=
for p in $(below "$SMK_PID"); do
	[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" = "sleep 60 " ] && SPID=$p
done
check "slow's sleep 60 runs (pid $SPID)" test -n "$SPID"
# its RSS settles once it sleeps: wait for a stored sample 1 s after its start
wait_q "select count(*) > 0 from record where type = 'sample' and json_extract(json, '\$.pid') = $SPID
	and time - (julianday(json_extract(json, '\$.start_time')) - 2440587.5) * 86400 >= 1;" 1 10 ||
	note "no sample of sleep $SPID 1 s after its start"

cli top --once --run "$TAG-r2" >"$T/once.txt" 2>&1
note "$(cat "$T/once.txt")"
check "--once: the run is running" grep -qE "^running +$TAG-r2 toppl" "$T/once.txt"
check "--once: slow is running, its elapsed time against the first run's (of ~3s)" \
	grep -qE "^running +  slow +[0-9]+s of ~[34]s " "$T/once.txt"
check "--once: slow's process sleep $SPID is under it" \
	grep -qE "^running +    $SPID sleep " "$T/once.txt"
check "--once: quick is done (of ~1s)" grep -qE "^done +  quick +[12]s of ~[12]s " "$T/once.txt"
check "--once: bad failed" grep -qE "^failed +  bad " "$T/once.txt"

# ---- JSON against /proc at the frame's time -------------------------------------------
cli top --format json --run "$TAG-r2" >"$T/top.json" 2>"$T/top.err"
PROC_RSS=$(awk '/^VmRSS:/ { print $2 * 1024 }' "/proc/$SPID/status")
PROC_PPID=$(awk '{ print $4 }' "/proc/$SPID/stat")
PROC_COMM=$(cat "/proc/$SPID/comm")
# /proc's start: boot time + starttime ticks
PROC_START=$(awk -v b="$(awk '/^btime/ { print $2 }' /proc/stat)" \
	-v t="$(awk '{ print $22 }' "/proc/$SPID/stat")" -v hz="$(getconf CLK_TCK)" \
	'BEGIN { printf "%.2f", b + t / hz }')
read -r J_PID J_PPID J_COMM J_RSS J_EL J_NOW <<<"$(python3 -c '
import json, sys, datetime
d = json.load(open(sys.argv[1]))
def walk(n):
    yield n
    for c in n["children"]:
        yield from walk(c)
now = datetime.datetime.fromisoformat(d["time"].replace("Z", "+00:00")).timestamp()
for r in d["runs"]:
    for n in walk(r):
        if n["kind"] == "process" and n["pid"] == int(sys.argv[2]):
            print(n["pid"], n["ppid"], n["comm"], n["rss_bytes"], n["elapsed_s"], now)
' "$T/top.json" "$SPID")"
note "json: pid $J_PID ppid $J_PPID comm $J_COMM rss $J_RSS elapsed $J_EL at $J_NOW; /proc: ppid $PROC_PPID comm $PROC_COMM rss $PROC_RSS start $PROC_START"
check "json: the sleep's pid, ppid and comm are /proc's" \
	eq "$J_PID:$J_PPID:$J_COMM" "$SPID:$PROC_PPID:$PROC_COMM"
# The agent reads the mm's RSS counters without their per-CPU deltas
# (/proc sums them): each CPU may hold up to percpu_counter_batch pages,
# max(32, 2 x CPUs), of each counter (file and anon here).
NCPU=$(nproc)
BATCH=$((2 * NCPU > 32 ? 2 * NCPU : 32))
RSS_TOL=$((2 * BATCH * NCPU * $(getconf PAGESIZE)))
check "json: its RSS $J_RSS is /proc's VmRSS $PROC_RSS (within $RSS_TOL bytes: the kernel's per-CPU batches)" \
	near "$J_RSS" "$PROC_RSS" 0 "$RSS_TOL"
check "json: its elapsed $J_EL s is the frame's time less /proc's start (1.5 s)" \
	near "$J_EL" "$(awk -v a="$J_NOW" -v b="$PROC_START" 'BEGIN { printf "%.2f", a - b }')" 0 1.5

# ---- the view in tmux -----------------------------------------------------------------
# The screen $1 (capture-pane -e) as a PNG $2, drawn by headless chromium
# (TOP_SCREENSHOT=PATH: the README's picture).
screenshot() {
	python3 - "$1" >"$T/top-screen.html" <<'PYEOF'
import html, re, sys
colors = {30: "#000", 31: "#e05050", 32: "#4ec94e", 33: "#e0c040",
          34: "#5080f0", 35: "#d060d0", 36: "#40c0c0", 37: "#ddd"}
out, st = [], {}
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().split("\n")
while lines and not re.sub(r"\x1b\[[0-9;]*m|\s", "", lines[-1]):
    lines.pop()
open(sys.argv[1] + ".rows", "w").write(str(len(lines)))
for line in lines:
    for part in re.split(r"(\x1b\[[0-9;]*m)", line.rstrip("\n")):
        m = re.fullmatch(r"\x1b\[([0-9;]*)m", part)
        if m:
            for c in [int(x or 0) for x in m.group(1).split(";")]:
                if c == 0: st = {}
                elif c == 1: st["font-weight"] = "bold"
                elif c == 2: st["opacity"] = "0.55"
                elif c == 7: st["background"] = "#ccc"; st["color"] = "#000"
                elif c in colors: st["color"] = colors[c]
            continue
        if part:
            css = ";".join(f"{k}:{v}" for k, v in st.items())
            out.append(f'<span style="{css}">{html.escape(part)}</span>')
    out.append("\n")
print('<html><body style="margin:0;background:#1e1e1e;color:#ddd">'
      '<pre style="font:14px DejaVu Sans Mono,monospace;margin:8px">'
      + "".join(out) + "</pre></body></html>")
PYEOF
	chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--screenshot="$2" --window-size=1100,$(($(cat "$1.rows") * 16 + 20)) \
		"file://$T/top-screen.html" \
		>/dev/null 2>&1
}
tmux new-session -d -s "$TMUX_S" -x 120 -y 40 "env PS1='PROMPT\$ ' bash --norc --noprofile"
tmux send-keys -t "$TMUX_S" "$CLI --config $CONF top --run $TAG-r2 -d 0.5" Enter
check "view: the header, the run, slow running with sleep $SPID, bad failed" \
	eval 'screen_has "^jobtrace top " && screen_has "^running +-$TAG-r2" &&
		screen_has "^running +- slow +[0-9]+s of ~[34]s" &&
		screen_has "^running +    $SPID sleep" && screen_has "^failed +- bad"'
note "$(screen)"
tmux capture-pane -e -p -t "$TMUX_S" >"$T/top-screen.ansi"
[ -n "${TOP_SCREENSHOT:-}" ] && screenshot "$T/top-screen.ansi" "$TOP_SCREENSHOT"
tmux send-keys -t "$TMUX_S" Enter	# the cursor is on the run
check "view: Enter on the run collapses it (+, its tasks gone)" \
	eval 'screen_has "^running +\+$TAG-r2" && screen_lacks " slow "'
tmux send-keys -t "$TMUX_S" Enter
check "view: Enter again expands it" screen_has "^running +- slow "
tmux send-keys -t "$TMUX_S" / b a d Enter
check "view: the filter bad leaves the run and bad, not slow or quick" \
	eval 'screen_has "^failed +- bad" && screen_lacks " slow " && screen_lacks " quick " &&
		screen_has "^running +-?$TAG-r2"'
note "$(screen)"
tmux send-keys -t "$TMUX_S" / Escape s s s	# the filter cleared; sort: cpu, mem, elapsed, name
check "view: s three times sorts by name: bad first under the run" \
	eval 'screen_has "^sort name " &&
		screen | grep -A1 -E "^running +-$TAG-r2" | tail -n 1 | grep -qE "^failed +- bad "'
note "$(screen)"
tmux send-keys -t "$TMUX_S" f
check "view: f follows the run under the cursor" screen_has "follow $TAG-r2"
tmux send-keys -t "$TMUX_S" q
check "view: q ends it: the prompt is back and the view's screen is gone" \
	eval 'screen_has "^PROMPT\\$ *$" && screen_lacks "^jobtrace top "'
note "$(screen)"

# ---- who sees what -------------------------------------------------------------------
# nobody reaches the configuration and the socket, not the store (0600)
chmod 755 "$T"
chmod 644 "$CONF"
cli_as nobody top --once --run "$TAG-r2" >"$T/nobody.txt" 2>&1
st=$?
note "$(head -n 3 "$T/nobody.txt")"
check "a user who may not read the store gets the agent's answer without root's run (exit $st)" \
	eval '[ $st = 0 ] && grep -q "^jobtrace top .* 0 runs, 0 running" "$T/nobody.txt" &&
		! grep -q "$TAG-r2" "$T/nobody.txt"'

# ---- a user's view stays open ----------------------------------------------------------
# nobody's own job (a sleep) and nobody's view of it in tmux: one answering
# child of the agent (jobtrace --serve-query, follow=0.5) serves every
# frame, the same process while the frames come (the header's clock
# moves), rather than a child a frame; q ends the view and its child.
cli_as nobody run --job "$TAG-nj" --run "$TAG-rn" -- sleep 25 >/dev/null 2>&1 &
NJOB=$!
BG_PIDS="$BG_PIDS $NJOB"
kids() { pgrep -P "$AGENT_PID" -f -- "--serve-query" | paste -sd' '; }
clock() { screen | sed -n 's/^jobtrace top  [0-9-]*T\([0-9:]*\) UTC.*/\1/p'; }
tmux send-keys -t "$TMUX_S" "runuser -u nobody -- $CLI --config $CONF top --run $TAG-rn -d 0.5" Enter
check "user view: nobody's run and its sleep, not root's run" \
	eval 'screen_has "^running +-$TAG-rn" && screen_has "^running +  +[0-9]+ sleep " &&
		screen_lacks "$TAG-r2"'
note "$(screen)"
K1=$(kids)
C1=$(clock)
sleep 2
K2=$(kids)
C2=$(clock)
check "user view: one answering child serves it ($K1), the same 2 s later ($K2)" \
	eval '[ -n "$K1" ] && [ "$K1" = "$K2" ] && [ "$(echo $K1 | wc -w)" = 1 ]'
check "user view: its frames still come (the header's clock $C1, then $C2)" \
	eval '[ -n "$C1" ] && [ -n "$C2" ] && [ "$C1" != "$C2" ]'
tmux send-keys -t "$TMUX_S" q
check "user view: q ends it, and its child within 2 s" \
	eval 'screen_has "^PROMPT\\$ *$" && for _ in $(seq 1 20); do [ -z "$(kids)" ] && break; sleep 0.1; done;
		[ -z "$(kids)" ]'

# ---- the agent gone under a user's view -----------------------------------------------
# nobody's view again; the agent stops: the last frame stays, and the view
# says why no frame comes on its last row (before, the message was written
# under the view and drawn over, or dropped)
tmux send-keys -t "$TMUX_S" "runuser -u nobody -- $CLI --config $CONF top --run $TAG-rn -d 0.5" Enter
check "user view again: nobody's run" screen_has "^running +-$TAG-rn"
stop_agent
note "agent stopped (exit $?)"
check "agent stopped: the view keeps nobody's run and says it cannot reach jobtraced" \
	eval 'screen_has "^! cannot read the store .* nor reach" && screen_has "^running +-$TAG-rn"'
note "$(screen | tail -n 3)"
check "agent stopped: the view's answering child ended with it" \
	eval '! pgrep -f -- "--serve-query.*$T" >/dev/null'
tmux send-keys -t "$TMUX_S" q
check "agent stopped: q still ends the view" screen_has "^PROMPT\\$ *$"
kill "$NJOB" 2>/dev/null
wait "$NJOB" 2>/dev/null

stop_run2
finish
