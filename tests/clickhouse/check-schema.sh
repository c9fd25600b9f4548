#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# check-schema.sh - the ClickHouse schema and rows (agent/core/chschema.c) against
# a real clickhouse-server (Debian's 18.16 here), end to end:
#
#   - the DDL (chrow --schema, what `jobtrace schema clickhouse` prints)
#     applies with clickhouse-client --multiquery, twice (IF NOT EXISTS);
#   - records of every type, with escapes, surrogate pairs, odd bytes,
#     nulls, unknown future fields and values that do not fit their
#     columns, become rows (chrow) that INSERT ... FORMAT JSONEachRow
#     takes over HTTP, as `default` and as `jobtrace` with basic auth
#     (a wrong password is refused);
#   - the typed columns hold the right values;
#   - a second insert of the same rows (a retried delivery) is counted once
#     with FINAL, and OPTIMIZE ... FINAL merges the copies away;
#   - SELECT json ... FORMAT TabSeparatedRaw gives back the records byte
#     for byte, per table and per job;
#   - `jobtrace cost --source clickhouse` (agent/query/chquery.c, costq.c) gives
#     what it gives from a SQLite store of the same records
#     (cost-records.ndjson: three hosts, a job on two of them, two
#     currencies, a job without a price, a host record in the second of
#     --since), for --since, --run and --job, and the totals worked out by
#     hand;
#   - `jobtrace sweep --source clickhouse` gives SQLite's answer for the same
#     records and three signals (a node_idle, a stall's start and end), and
#     the idle and stuck figures worked out by hand;
#   - the table `files` (a row per process and file, from the files of
#     process records) answers "which runs read this reference" and "which
#     tool writes the most scratch" with what the records say, counts a
#     retried insert once with FINAL, and `jobtrace files --source
#     clickhouse` gives what it gives from a SQLite store;
#   - the data is still there after the server is stopped and started
#     again, and a paused (hung) server times out instead of answering.
#
# Needs root and clickhouse-server/clickhouse-client (exit 77 without them).
# Exit 0 pass, 1 fail, 77 skipped, 99 hard error; ends with "N passed, M
# failed".  Run: top_builddir=BUILD top_srcdir=SRC bash check-schema.sh
# (CH_KEEP=1 keeps the server's folder).

set -u

top_builddir=${top_builddir:-$(pwd)}
top_srcdir=${top_srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
CHROW=$top_builddir/tests/clickhouse/chrow
STORE_PUT=$top_builddir/tests/integration/store-put
CLI=$top_builddir/jobtrace

if [ ! -x /usr/sbin/clickhouse-server ] || ! command -v clickhouse-client >/dev/null; then
	echo "# skipped: clickhouse-server/clickhouse-client are not installed"
	exit 77
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "# skipped: needs root (the server runs as user clickhouse)"
	exit 77
fi
if ! command -v curl >/dev/null; then
	echo "# error: curl is missing"
	exit 99
fi
for p in "$CHROW" "$STORE_PUT" "$CLI"; do
	if [ ! -x "$p" ]; then
		echo "# error: $p is not built (make check builds it)"
		exit 99
	fi
done

. "$top_srcdir/tests/clickhouse/ch-env.sh"

passed=0
failed=0
T=$(mktemp -d /tmp/jobtrace-ch.XXXXXX)
chmod 0755 "$T"

# Stop the server and remove the temporary folder.
cleanup() {
	ch_destroy
	[ -n "${CH_KEEP:-}" ] || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 99' INT TERM

# Record one assertion: check "message" cmd args...
check() {
	local msg=$1
	shift
	if "$@"; then
		echo "ok - $msg"
		passed=$((passed + 1))
	else
		echo "not ok - $msg"
		failed=$((failed + 1))
	fi
}

# True if "$1" equals "$2"; shows both otherwise.
same() {
	[ "$1" = "$2" ] && return 0
	printf '#   want: %s\n#   got:  %s\n' "$2" "$1" | head -n 20
	return 1
}

# True if files $1 and $2 are byte-identical; shows a diff otherwise.
same_file() {
	cmp -s "$1" "$2" && return 0
	diff "$2" "$1" | head -n 10 | sed 's/^/#   /'
	return 1
}

# INSERT the rows of table $2 from folder $T/$1 over HTTP.
insert_dir() {
	ch_http "INSERT INTO jobtrace.$2 FORMAT JSONEachRow" \
		"input_format_skip_unknown_fields=1" <"$T/$1/$2.rows"
}

# INSERT table's rows over HTTP; extra curl arguments follow.
insert() {
	local t=$1
	shift
	ch_http "INSERT INTO jobtrace.$t FORMAT JSONEachRow" \
		"input_format_skip_unknown_fields=1" "$@" <"$T/rows/$t.rows"
}

# ---- records: every type, as the agent writes them (doc/records.md) ----------
# Odd ones: argv with quotes, backslashes, raw and escaped UTF-8, a byte that
# is not UTF-8 (\u00ff), a surrogate pair, a control character; unknown
# future fields; records without exe_truncated (older agents); a uid that
# does not fit UInt32; a time past 2105; nulls.
cat >"$T/records.ndjson" <<'EOF'
{"type":"host","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000001","time":"2026-11-22T09:59:00.000001Z","phase":"start","boot_id":"b7c1e0d2-7f4e-4b7a-9d55-0c1f2e3d4c5b","agent_version":"0.3.0","drops":{"ringbuf_fork":0,"ringbuf_exec":0,"ringbuf_exit":0,"ringbuf_oom":0,"tracked_map_full":0,"exits_lost":0},"events_seen":0}
{"type":"job","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000002","phase":"start","job":{"scheduler":"slurm","id":"12345","step":null,"run":"run-7","pipeline":"rnaseq","task":null,"user":"alice","account":"genomics","cost_center":"genomics"},"name":"align-all","partition":"debug","node":"node-a1","uid":1001,"start_time":"2026-11-22T09:59:58.5Z","end_time":null,"allocation":{"cpus":8,"mem_bytes":34359738368,"gpus":null},"exit_code":null,"cost":null}
{"type":"process","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000003","pid":4242,"ppid":4200,"start_time":"2026-11-22T10:00:00.123456Z","exe":"/usr/bin/bwa","exe_truncated":false,"comm":"bwa","argv":["bwa","mem","-t","8","-R","@RG\\tID:s1\\tSM:sample \"NA12878\"","/data/ref/GRCh38.fa","/data/réads_1.fq","caf\u00ff","\ud83d\ude00\u0001"],"argv_truncated":false,"uid":1001,"cgroup":"/slurm_node-a1/uid_1001/job_12345/step_batch/task_0","container":null,"job":{"scheduler":"slurm","id":"12345","step":"batch","run":"run-7","pipeline":"rnaseq","task":"align","user":"alice","account":"genomics","cost_center":"genomics"},"tool":{"name":"bwa","category":"aligner","version":null},"end_time":"2026-11-22T10:05:30.000001Z","exit":{"code":0,"signal":null,"core_dumped":false,"oom_killed":false,"lost":false},"cpu":{"user_s":312.5,"sys_s":4.25},"mem":{"peak_rss_bytes":5368709120,"maxrss_kernel_bytes":5370000000},"io":{"read_bytes":1073741824,"write_bytes":536870912,"rchar":2147483648,"wchar":536870912,"blkio_delay_s":0.125},"net":{"rx_bytes":0,"tx_bytes":17}}
{"type":"sample","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000004","time":"2026-11-22T10:01:00.0005Z","pid":4243,"ppid":4242,"start_time":"2026-11-22T10:00:10Z","exe":"/usr/bin/samtools","exe_truncated":true,"comm":"samtools","argv":["samtools","sort"],"argv_truncated":true,"uid":1001,"cgroup":"/","container":null,"job":{"scheduler":"slurm","id":"12345","step":"batch","run":"run-7","pipeline":"rnaseq","task":"sort","user":"alice","account":"genomics","cost_center":"genomics"},"tool":{"name":"samtools","category":"alignment-utils","version":"1.16"},"cpu":{"user_s":59.999999,"sys_s":0},"mem":{"peak_rss_bytes":4096,"rss_bytes":2048},"io":{"read_bytes":0,"write_bytes":0,"rchar":10,"wchar":20,"blkio_delay_s":0},"net":{"rx_bytes":1,"tx_bytes":2}}
{"type":"signal","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000005","kind":"oom_kill","time":"2026-11-22T10:03:00.000001Z","job":"12345","pid":4300,"comm":"touchmem","tool":"touchmem","evidence":{"rss_bytes":1073741824,"total_vm_bytes":2147483648}}
{"type":"process","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000006","pid":4300,"ppid":4200,"start_time":"2026-11-22T10:02:00Z","exe":"/opt/bin/touchmem","comm":"touchmem","argv":["touchmem","2G"],"argv_truncated":false,"uid":4294967296,"cgroup":"/","container":null,"job":{"scheduler":"slurm","id":"12345","step":"0","run":"run-7","pipeline":"rnaseq","task":null,"user":"alice","account":"genomics","cost_center":"genomics"},"tool":{"name":"touchmem","category":null,"version":null},"end_time":"2206-01-01T00:00:00Z","exit":{"code":null,"signal":9,"core_dumped":false,"oom_killed":true,"lost":false},"cpu":{"user_s":0.5,"sys_s":1.5},"mem":{"peak_rss_bytes":1073741824,"maxrss_kernel_bytes":1073745920},"io":{"read_bytes":0,"write_bytes":0,"rchar":0,"wchar":0,"blkio_delay_s":0},"net":{"rx_bytes":0,"tx_bytes":0},"gpu":{"util":0.5,"mem_bytes":[1,2]},"labels":["future","fields"]}
{"type":"job","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000007","phase":"end","job":{"scheduler":"slurm","id":"12345","step":null,"run":"run-7","pipeline":"rnaseq","task":null,"user":"alice","account":"genomics","cost_center":"genomics"},"name":null,"partition":null,"node":"node-a1","uid":null,"start_time":"2026-11-22T09:59:58.5Z","end_time":"2026-12-01T00:00:01.25Z","allocation":{"cpus":null,"mem_bytes":null,"gpus":null,"time_limit_s":3600},"exit_code":-9,"cost":{"amount":1.25,"currency":"USD","source":"config:node_hour","formula":"allocation_share","price_per_hour":3.6,"share":0.25,"elapsed_s":5000,"note":null},"efficiency":{"cpu":0.48,"memory":null,"time":1.388889},"flags":["cpu_underused","time_overrequested"]}
{"type":"process","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000008","pid":5000,"ppid":1,"start_time":"2026-11-22T11:00:00.999999Z","exe":null,"comm":"nf-ALIGN (1)","argv":[],"argv_truncated":false,"uid":0,"cgroup":"/docker/0123abcd","container":"docker://0123abcd","job":{"scheduler":"aws_batch","id":"a1b2c3d4-job","step":null,"run":null,"pipeline":null,"task":"ALIGN","user":null,"account":null,"cost_center":null},"tool":{"name":"nextflow-task","category":"workflow","version":null},"end_time":null,"exit":{"code":1,"signal":null,"core_dumped":false,"oom_killed":false,"lost":true},"cpu":{"user_s":0,"sys_s":0},"mem":{"peak_rss_bytes":0,"maxrss_kernel_bytes":0},"io":{"read_bytes":0,"write_bytes":0,"rchar":0,"wchar":0,"blkio_delay_s":0},"net":{"rx_bytes":0,"tx_bytes":0}}
{"type":"process","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-000000000009","pid":6000,"ppid":1,"start_time":"2026-12-31T23:59:59.5Z","exe":"/bin/true","comm":"true","argv":["true"],"argv_truncated":false,"uid":0,"cgroup":"/","container":null,"job":null,"tool":{"name":"true","category":null,"version":null},"end_time":"2027-01-01T00:00:00Z","exit":{"code":0,"signal":null,"core_dumped":false,"oom_killed":false,"lost":false},"cpu":{"user_s":0.001,"sys_s":0.000001},"mem":{"peak_rss_bytes":1,"maxrss_kernel_bytes":2},"io":{"read_bytes":0,"write_bytes":0,"rchar":0,"wchar":0,"blkio_delay_s":0},"net":{"rx_bytes":0,"tx_bytes":0}}
{"type":"signal","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-00000000000a","kind":"node_idle","time":"2026-11-22T12:00:00Z","job":null,"pid":null,"comm":null,"tool":null,"evidence":{"idle_s":600,"cpu":0.01,"cost":0.016,"currency":"USD"}}
{"type":"host","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-00000000000b","time":"2026-11-22T12:30:00Z","phase":"stop","boot_id":"b7c1e0d2-7f4e-4b7a-9d55-0c1f2e3d4c5b","agent_version":"0.3.0","drops":{"ringbuf_fork":1,"ringbuf_exec":2,"ringbuf_exit":3,"ringbuf_oom":0,"tracked_map_full":5,"exits_lost":4,"spool":{"fleet":12,"http":3}},"events_seen":123456,"cloud":{"provider":"aws","instance_id":"i-1234567890abcdef0","instance_type":"t2.micro","region":"us-west-2","zone":"us-west-2b","lifecycle":"spot"},"price":{"per_hour":0.0035,"currency":"USD","source":"prices:/etc/jobtrace/prices.tsv","node_cpus":1,"node_mem_bytes":1073741824,"note":null}}
{"type":"signal","schema":1,"host":"node-a1","id":"00000000-0000-8000-8000-00000000000c","kind":"spot_interruption","time":"2026-11-22T12:10:00.25Z","job":null,"jobs":["slurm:12345","awsbatch:a1b2c3d4-job"],"pid":null,"comm":null,"tool":{"name":null,"category":null,"version":null},"evidence":{"rss_bytes":null,"total_vm_bytes":null,"action":"terminate","action_time":"2026-11-22T12:12:00.000000Z"}}
EOF

# ---- server and schema --------------------------------------------------------

ch_pick_ports || exit 99
if ! ch_start "$T/ch"; then
	echo "# error: clickhouse-server did not start"
	exit 99
fi
echo "# clickhouse-server $(ch_query 'SELECT version()') on $CH_URL (pid $CH_PID)"

"$CHROW" --schema jobtrace >"$T/schema.sql"
check "the schema applies with clickhouse-client --multiquery" \
	ch_multiquery <"$T/schema.sql"
check "and applies again (IF NOT EXISTS)" ch_multiquery <"$T/schema.sql"
check "one table per record type, and the rules table" \
	same "$(ch_query "SELECT name FROM system.tables WHERE database = 'jobtrace' ORDER BY name" | tr '\n' ' ')" \
	"files host job process rules sample signal "
for t in process sample job signal host; do
	create=$(ch_query "SHOW CREATE TABLE jobtrace.$t")
	check "$t: ReplacingMergeTree ... ORDER BY (host, ..., id)" \
		eval '[[ "$create" == *"ENGINE = ReplacingMergeTree() PARTITION BY toYYYYMM("*") ORDER BY (host, "*", id)"* ]]'
done

# ---- rows -----------------------------------------------------------------------

mkdir -p "$T/rows"
counts=$("$CHROW" "$T/rows" <"$T/records.ndjson" 2>"$T/chrow.err")
check "chrow converts every record" same "$(cat "$T/chrow.err")" ""
check "rows per table" same "$(echo $counts)" "process 4 sample 1 job 2 signal 3 host 2 files 0"

check "process rows INSERT over HTTP as default" insert process
check "sample rows INSERT as jobtrace (basic auth)" insert sample -u jobtrace:jt-secret
check "job rows INSERT as jobtrace (basic auth)" insert job -u jobtrace:jt-secret
check "signal rows INSERT as jobtrace (X-ClickHouse-User/Key)" insert signal \
	-H "X-ClickHouse-User: jobtrace" -H "X-ClickHouse-Key: jt-secret"
check "host rows INSERT as jobtrace (basic auth)" insert host -u jobtrace:jt-secret
check "a wrong password is refused" eval '! insert host -u jobtrace:wrong >"$T/auth.err" 2>&1'
grep -q "516\|192\|Authentication\|Wrong password" "$T/auth.err" ||
	sed 's/^/#   /' "$T/auth.err"
check "a row that does not fit the table fails (so chschema must not write one)" \
	eval '! printf "{\"pid\":-1}\n" | ch_http "INSERT INTO jobtrace.process FORMAT JSONEachRow" \
		input_format_skip_unknown_fields=1 >/dev/null 2>&1'

# ---- typed columns ----------------------------------------------------------------

# The id of test record N.
rid() { printf "00000000-0000-8000-8000-%012x" "$1"; }
check "process: identity, times, job, exit, counters" \
	same "$(ch_query "SELECT schema, host, pid, ppid, start_time, start_time_us, end_time, end_time_us,
		exe, comm, uid, job_id, job_step, job_task, tool_name, tool_version, exit_code,
		exit_signal, exit_oom_killed, cpu_user_s, cpu_sys_s, mem_peak_rss_bytes, io_rchar,
		io_blkio_delay_s, net_tx_bytes
		FROM jobtrace.process FINAL WHERE id = '$(rid 3)'")" \
	"$(printf '%s\t' 1 node-a1 4242 4200 '2026-11-22 10:00:00' 123456 '2026-11-22 10:05:30' 1 \
		/usr/bin/bwa bwa 1001 12345 batch align bwa '\N' 0 '\N' 0 312.5 4.25 5368709120 \
		2147483648 0.125 17 | sed 's/\t$//')"
check "process: argv with escapes, UTF-8, U+00FF, a surrogate pair, U+0001" \
	same "$(ch_query "SELECT length(argv), argv[6], argv[8], hex(argv[9]), hex(argv[10])
		FROM jobtrace.process FINAL WHERE id = '$(rid 3)'")" \
	"$(printf '10\t@RG\\\\tID:s1\\\\tSM:sample "NA12878"\t/data/réads_1.fq\t636166C3BF\tF09F988001')"
check "process: values that do not fit are NULL or 0, future fields ignored" \
	same "$(ch_query "SELECT uid, end_time, exit_code, exit_signal, exit_oom_killed
		FROM jobtrace.process FINAL WHERE id = '$(rid 6)'")" \
	"$(printf '0\t\\N\t\\N\t9\t1')"
check "process: a container, no exe, no job step, an empty argv" \
	same "$(ch_query "SELECT exe, container, job_scheduler, job_id, job_step, argv, exit_lost
		FROM jobtrace.process FINAL WHERE id = '$(rid 8)'")" \
	"$(printf '\\N\tdocker://0123abcd\taws_batch\ta1b2c3d4-job\t\\N\t[]\t1')"
check "process: partitioned by the month of its start" \
	same "$(ch_query "SELECT partition, sum(rows) FROM system.parts WHERE database = 'jobtrace'
		AND table = 'process' AND active GROUP BY partition ORDER BY partition" | tr '\n' ' ')" \
	"202611	3 202612	1 "
check "sample: time, microseconds, current RSS" \
	same "$(ch_query "SELECT time, time_us, mem_rss_bytes, argv_truncated, tool_version
		FROM jobtrace.sample FINAL")" \
	"$(printf '2026-11-22 10:01:00\t500\t2048\t1\t1.16')"
check "exe_truncated: false, true (a sample), absent (an older agent's record)" \
	same "$(ch_query "SELECT (SELECT exe_truncated FROM jobtrace.process FINAL WHERE id = '$(rid 3)'),
		(SELECT exe_truncated FROM jobtrace.sample FINAL),
		(SELECT exe_truncated FROM jobtrace.process FINAL WHERE id = '$(rid 9)')")" \
	"$(printf '0\t1\t0')"
check "job: the record's time is its start, or its end at the end" \
	same "$(ch_query "SELECT phase, time, time_us, start_time, end_time, allocation_cpus,
		allocation_mem_bytes, exit_code, cost_amount FROM jobtrace.job FINAL ORDER BY time" | tr '\n' '|')" \
	"$(printf 'start\t2026-11-22 09:59:58\t500000\t2026-11-22 09:59:58\t\\N\t8\t34359738368\t\\N\t\\N|end\t2026-12-01 00:00:01\t250000\t2026-11-22 09:59:58\t2026-12-01 00:00:01\t\\N\t\\N\t-9\t1.25|')"
check "job: the end's cost, efficiency and flags" \
	same "$(ch_query "SELECT cost_currency, cost_source, cost_formula, cost_price_per_hour,
		cost_share, cost_elapsed_s, cost_note, allocation_time_limit_s, efficiency_cpu,
		efficiency_memory, efficiency_time, flags FROM jobtrace.job FINAL WHERE phase = 'end'")" \
	"$(printf "USD\tconfig:node_hour\tallocation_share\t3.6\t0.25\t5000\t\\N\t3600\t0.48\t\\N\t1.388889\t['cpu_underused','time_overrequested']")"
check "signal: job id, tool, evidence; an idle node without a job" \
	same "$(ch_query "SELECT kind, job_id, pid, tool_name, evidence_rss_bytes, evidence_idle_s,
		evidence_cpu, evidence_cost, evidence_currency
		FROM jobtrace.signal FINAL ORDER BY time" | tr '\n' '|')" \
	"$(printf 'oom_kill\t12345\t4300\ttouchmem\t1073741824\t\\N\t\\N\t\\N\t\\N|node_idle\t\\N\t\\N\t\\N\t\\N\t600\t0.01\t0.016\tUSD|spot_interruption\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N|')"
check "signal: a spot interruption's jobs, action and its time" \
	same "$(ch_query "SELECT jobs, evidence_action, evidence_action_time, evidence_action_time_us
		FROM jobtrace.signal FINAL WHERE kind = 'spot_interruption'")" \
	"$(printf "['slurm:12345','awsbatch:a1b2c3d4-job']\tterminate\t2026-11-22 12:12:00\t0")"
check "host: the price, NULL where there is none" \
	same "$(ch_query "SELECT phase, price_per_hour, price_currency, price_source, price_node_cpus,
		price_node_mem_bytes FROM jobtrace.host FINAL ORDER BY time" | tr '\n' '|')" \
	"$(printf 'start\t\\N\t\\N\t\\N\t\\N\t\\N|stop\t0.0035\tUSD\tprices:/etc/jobtrace/prices.tsv\t1\t1073741824|')"
check "host: the cloud instance, NULL where there is none" \
	same "$(ch_query "SELECT phase, cloud_provider, cloud_instance_id, cloud_instance_type,
		cloud_region, cloud_zone, cloud_lifecycle FROM jobtrace.host FINAL ORDER BY time" | tr '\n' '|')" \
	"$(printf 'start\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N|stop\taws\ti-1234567890abcdef0\tt2.micro\tus-west-2\tus-west-2b\tspot|')"
check "host: drop counters and per-sink spool drops" \
	same "$(ch_query "SELECT phase, drops_tracked_map_full, drops_exits_lost, drops_spool_sink,
		drops_spool_count, arraySum(drops_spool_count) FROM jobtrace.host FINAL ORDER BY time" | tr '\n' '|')" \
	"$(printf "start\t0\t0\t[]\t[]\t0|stop\t5\t4\t['fleet','http']\t[12,3]\t15|")"

# ---- a retried delivery ------------------------------------------------------------

check "the same process rows INSERT again (a retry) as jobtrace" \
	insert process -u jobtrace:jt-secret
check "the same host rows INSERT again" insert host
check "FINAL counts each process record once" \
	same "$(ch_query "SELECT count() FROM jobtrace.process FINAL")" 4
check "GROUP BY id counts each once too" \
	same "$(ch_query "SELECT count() FROM (SELECT id FROM jobtrace.process GROUP BY id)")" 4
check "FINAL counts the job's processes once" \
	same "$(ch_query "SELECT count() FROM jobtrace.process FINAL WHERE job_id = '12345'")" 2
echo "# before merging: $(ch_query "SELECT count() FROM jobtrace.process") process rows," \
	"$(ch_query "SELECT count() FROM jobtrace.host") host rows"
check "OPTIMIZE ... FINAL merges the copies away" \
	eval 'ch_query "OPTIMIZE TABLE jobtrace.process FINAL" &&
		ch_query "OPTIMIZE TABLE jobtrace.host FINAL" &&
		[ "$(ch_query "SELECT count() FROM jobtrace.process") $(ch_query "SELECT count() FROM jobtrace.host")" = "4 2" ]'

# ---- the records back, byte for byte ------------------------------------------------

for t in process sample job signal host; do
	grep "^{\"type\":\"$t\"," "$T/records.ndjson" | LC_ALL=C sort >"$T/want.$t"
	ch_query "SELECT json FROM jobtrace.$t FINAL ORDER BY id FORMAT TabSeparatedRaw" \
		>"$T/got.$t"
	check "$t: SELECT json ... FORMAT TabSeparatedRaw gives the records back byte for byte" \
		same_file "$T/got.$t" "$T/want.$t"
done
grep '"job":{"scheduler":"slurm","id":"12345"' "$T/records.ndjson" |
	grep '^{"type":"process"' >"$T/want.job12345"
ch_query "SELECT json FROM jobtrace.process FINAL WHERE job_id = '12345'
	ORDER BY start_time, start_time_us FORMAT TabSeparatedRaw" >"$T/got.job12345"
check "a job's process records back, in start order, byte for byte" \
	same_file "$T/got.job12345" "$T/want.job12345"
printf 'SELECT json FROM jobtrace.process FINAL WHERE job_id = %s ORDER BY id FORMAT TabSeparatedRaw' \
	"'12345'" | curl -sS -m 30 -u jobtrace:jt-secret --data-binary @- "$CH_URL" >"$T/got.http"
LC_ALL=C sort "$T/want.job12345" >"$T/want.http"
check "the same over HTTP as jobtrace" same_file "$T/got.http" "$T/want.http"

# ---- tables of an older version ------------------------------------------------

# made before exe_truncated: the rows still go in, and the column can be
# added as README says
"$CHROW" --schema jobtrace_old | grep -v '^    exe_truncated ' >"$T/schema-old.sql"
check "tables without exe_truncated (an older version's) apply" \
	ch_multiquery <"$T/schema-old.sql"
check "rows with exe_truncated INSERT into them" \
	eval 'ch_http "INSERT INTO jobtrace_old.process FORMAT JSONEachRow" \
		input_format_skip_unknown_fields=1 <"$T/rows/process.rows"'
check "ALTER TABLE ... ADD COLUMN exe_truncated UInt8 AFTER exe; old rows read 0" \
	eval 'ch_query "ALTER TABLE jobtrace_old.process ADD COLUMN exe_truncated UInt8 AFTER exe" &&
		same "$(ch_query "SELECT count(), sum(exe_truncated) FROM jobtrace_old.process")" "$(printf "4\t0")"'

# ---- jobtrace cost: ClickHouse and SQLite agree ----------------------------------------

# The same records in a SQLite store and in a database of their own; cost
# read from each must match byte for byte.  Hand-worked totals for --since
# T0 + 0.5 s (T0 = 2025-03-01T10:00:00Z, every host stopped, so "now" does
# not matter): USD jobs 1 + 0.5 + 0.8 = 2.3; idle n1: up [0.5, 5000] less
# its jobs' union [100, 1500] + [3000, 3500] = 3099.5 s at 3.6/h = 3.0995;
# idle n2: [0.5, 4000] less [1000, 2000] + [2500, 3000] = 2499.5 s at 7.2/h
# = 4.999; USD 10.3985, EUR 2.  n1's last host record before T0 + 0.5 is
# at T0 + 0.25, in the same second.
COST_RECORDS=$top_srcdir/tests/clickhouse/cost-records.ndjson
"$CHROW" --schema jobtrace_cost >"$T/schema-cost.sql"
mkdir -p "$T/costrows"
"$CHROW" "$T/costrows" <"$COST_RECORDS" >"$T/costrows.out" 2>"$T/costrows.err"
ok=yes
ch_multiquery <"$T/schema-cost.sql" || ok=no
for t in process job host; do
	ch_http "INSERT INTO jobtrace_cost.$t FORMAT JSONEachRow" \
		"input_format_skip_unknown_fields=1" <"$T/costrows/$t.rows" || ok=no
done
check "cost records into ClickHouse database jobtrace_cost ($(echo $(cat "$T/costrows.out")))" \
	same "$ok:$(cat "$T/costrows.err")" "yes:"
"$STORE_PUT" "$T/cost.db" <"$COST_RECORDS" >"$T/cost.put" 2>&1
check "and into a SQLite store" same "$(cat "$T/cost.put")" "stored=26"
cat >"$T/cost.conf" <<EOF
agent = { run_dir = "$T"; };
store = { sqlite_path = "$T/cost.db"; };
sinks = ( { type = "clickhouse"; name = "fleet"; url = "$CH_URL";
	database = "jobtrace_cost"; } );
EOF
# Both sources' output of `jobtrace CMD ARGS...`: the same, and exit 0
# (sweep's JSON "until" is each run's own now, left out of the comparison).
query_both() {
	local a b sa sb cmd=$1 nonow='s/"until":"[^"]*",//'
	shift
	a=$("$CLI" --config "$T/cost.conf" "$cmd" "$@" 2>&1)
	sa=$?
	b=$("$CLI" --config "$T/cost.conf" "$cmd" "$@" --source clickhouse 2>&1)
	sb=$?
	a=$(printf '%s\n' "$a" | sed "$nonow")
	b=$(printf '%s\n' "$b" | sed "$nonow")
	printf '%s\n' "$a" >"$T/cost.last"
	same "$sb:$b" "0:$a" && same "$sa" 0
}
cost_both() { query_both cost "$@"; }
for by in job task tool user account cost-center; do
	check "cost --since --by $by --format csv: ClickHouse gives SQLite's answer" \
		cost_both --since @1740823200.5 --by $by --format csv
	check "  and its totals are those worked out by hand: EUR 2, USD 10.3985" \
		same "$(awk -F, '$1 == "total" { printf "%s %.9f|", $3, $4 }' "$T/cost.last")" \
		"EUR 2.000000000|USD 10.398500000|"
done
check "cost --since --by task (text): ClickHouse gives SQLite's answer" \
	cost_both --since @1740823200.5 --by task
check "cost --run r1 --by task (json): the same" cost_both --run r1 --by task --format json
check "  1 USD of job 1 (its own run) + 0.25 of job 2 (one process in r1)" \
	same "$(grep -o '"totals":\[[^]]*\]' "$T/cost.last")" \
	'"totals":[{"currency":"USD","cost":1.25,"jobs_cost":1.25,"idle_allocation":0.7,"idle_nodes":0,"jobs":2,"processes":3,"cpu_s":450}]'
check "cost --job 2 --by tool (csv): the same" cost_both --job 2 --by tool --format csv
check "  1.3 USD over its two hosts" \
	same "$(grep '^total,' "$T/cost.last")" "$(printf 'total,TOTAL,USD,1.3,0.4,1,1,2,100,,\r')"

# ---- jobtrace sweep: ClickHouse and SQLite agree ---------------------------------------

# Signals added to the cost records (the cost figures above do not read
# them): a node_idle signal on n1 at T0 + 2000 (1800 s idle), and job 1's
# process 4020 on n1 stalled from its last progress at T0 + 200 to the
# stall's end at T0 + 500.  By hand, for --since T0 + 0.5: n1 idle 3099.5 s
# costing 3.0995 USD with 1 node_idle signal (costq's idle, above); job 1
# stuck 300 s, 3.6 x 300 / 3600 = 0.3 USD; n2 idle 2499.5 s, 4.999 USD.
sig() { # KIND TIME_OFFSET JOB PID EVIDENCE
	printf '{"type":"signal","schema":1,"host":"n1","id":"00000000-0000-8000-8000-0000000%s","kind":"%s","time":"%s","job":%s,"pid":%s,"evidence":%s}\n' \
		"$(printf '%05d' "$2")" "$1" "$(date -u -d "@$((1740823200 + $2))" +%Y-%m-%dT%H:%M:%S.000000Z)" "$3" "$4" "$5"
}
{
	sig node_idle 2000 null null '{"idle_s":1800,"cpu":0.01,"cost":null}'
	sig stall 260 '{"scheduler":"slurm","id":"1"}' 4020 '{"phase":"start","stalled_s":60,"last_progress":"2025-03-01T10:03:20.000000Z"}'
	sig stall 500 '{"scheduler":"slurm","id":"1"}' 4020 '{"phase":"end","stalled_s":300,"last_progress":"2025-03-01T10:03:20.000000Z"}'
} >"$T/sweep-signals.ndjson"
mkdir -p "$T/sigrows"
"$CHROW" "$T/sigrows" <"$T/sweep-signals.ndjson" >/dev/null 2>"$T/sigrows.err"
check "three signals into ClickHouse's jobtrace_cost.signal" \
	eval 'ch_http "INSERT INTO jobtrace_cost.signal FORMAT JSONEachRow" \
		"input_format_skip_unknown_fields=1" <"$T/sigrows/signal.rows" &&
		same "$(ch_query "SELECT count() FROM jobtrace_cost.signal")" 3'
check "and into the SQLite store" \
	same "$("$STORE_PUT" "$T/cost.db" <"$T/sweep-signals.ndjson" 2>&1)" "stored=3"
check "sweep --since --format csv: ClickHouse gives SQLite's answer" \
	query_both sweep --since @1740823200.5 --format csv
check "sweep --since --format json: the same" query_both sweep --since @1740823200.5 --format json
j=$T/cost.last
check "  n1: idle 3099.5 s, 3.0995 USD, 1 node_idle signal (by hand)" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
n = [x for x in d["nodes"] if x["host"] == "n1"][0]
assert abs(n["idle_s"] - 3099.5) < 1e-6 and abs(n["idle_cost"] - 3.0995) < 1e-9 and n["idle_signals"] == 1, n
' "$j"
check "  job 1 stuck 300 s costing 0.3 USD (by hand)" \
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["stuck"] if x["job"] == "1"][0]
assert abs(s["stuck_s"] - 300) < 1e-6 and abs(s["cost"] - 0.3) < 1e-9, s
' "$j"
# ---- files: one row per process and file ------------------------------------------------

# Two runs read the reference; bwa of run-8 reads it twice (two processes),
# samtools writes scratch it deletes; a path with a quote, a byte that is
# not UTF-8 (\u00ff) and a tab; a size not known (null); an element of
# another shape (no row).
F=$T/files.ndjson
frec() {	# id pid run task tool start files
	printf '{"type":"process","schema":1,"host":"node-f1","id":"00000000-0000-8000-8000-0000000001%02d","pid":%d,"ppid":1,"start_time":"%s","exe":"/usr/bin/%s","comm":"%s","argv":["%s"],"argv_truncated":false,"uid":1001,"cgroup":"/","container":null,"job":{"scheduler":"slurm","id":"9%d","step":"batch","run":"%s","pipeline":"rnaseq","task":"%s","user":"alice","account":"genomics","cost_center":"genomics"},"tool":{"name":"%s","category":null,"version":null},"end_time":"%s","exit":{"code":0,"signal":null,"core_dumped":false,"oom_killed":false,"lost":false},"cpu":{"user_s":1,"sys_s":0},"mem":{"peak_rss_bytes":1,"maxrss_kernel_bytes":1},"io":{"read_bytes":0,"write_bytes":0,"rchar":0,"wchar":0,"blkio_delay_s":0},"net":{"rx_bytes":0,"tx_bytes":0},"files":%s,"files_rest":{"count":0,"opens":0,"read_bytes":0,"write_bytes":0},"files_nonregular":{"pipes":0,"sockets":0,"read_bytes":0,"write_bytes":0}}\n' \
		"$1" "$2" "$6" "$5" "$5" "$5" "$1" "$3" "$4" "$5" "$6" "$7"
}
REF='{"path":"/ref/GRCh38.fa","flags":["read"],"opens":1,"read_bytes":3000000000,"write_bytes":0,"size_bytes":3100000000,"mmap":false,"deleted":false}'
{
	frec 1 100 run-7 align bwa 2026-11-23T10:00:00Z "[$REF,{\"path\":\"/d/a \\\"q\\\" caf\\u00ff\\tx.fq\",\"flags\":[\"read\"],\"opens\":2,\"read_bytes\":5,\"write_bytes\":0,\"size_bytes\":null,\"mmap\":true,\"deleted\":false},7]"
	frec 2 200 run-8 align bwa 2026-11-23T11:00:00Z "[$REF]"
	frec 3 201 run-8 align bwa 2026-11-23T11:00:05Z "[$REF]"
	frec 4 300 run-8 sort samtools 2026-11-23T12:00:00Z '[{"path":"/scratch/s.tmp.0001.bam","flags":["write","create"],"opens":1,"read_bytes":0,"write_bytes":800000000,"size_bytes":800000000,"mmap":false,"deleted":true},{"path":"/out/s.bam","flags":["write","create","truncate"],"opens":1,"read_bytes":0,"write_bytes":1000,"size_bytes":1000,"mmap":false,"deleted":false}]'
	frec 5 400 run-9 qc fastqc 2026-11-23T13:00:00Z null
} >"$F"
mkdir -p "$T/frows"
fcounts=$("$CHROW" "$T/frows" <"$F" 2>"$T/frows.err")
check "chrow: a files row per element that is an object ($(echo $fcounts))" \
	same "$(cat "$T/frows.err")|$(echo $fcounts)" "|process 5 sample 0 job 0 signal 0 host 0 files 6"
check "files rows INSERT over HTTP" insert_dir frows files
check "a retry's files rows INSERT again" insert_dir frows files
check "which runs read the reference: run-7 and run-8" \
	same "$(ch_query "SELECT DISTINCT job_run FROM jobtrace.files FINAL
		WHERE path = '/ref/GRCh38.fa' AND has(flags, 'read') ORDER BY job_run" | tr '\n' ' ')" \
	"run-7 run-8 "
check "  by 3 processes that read 9000000000 bytes of it (FINAL: the retry once)" \
	same "$(ch_query "SELECT count(), sum(read_bytes), any(size_bytes) FROM jobtrace.files FINAL
		WHERE path = '/ref/GRCh38.fa'")" "$(printf '3\t9000000000\t3100000000')"
check "which tool writes the most scratch (deleted): samtools, 800000000 bytes" \
	same "$(ch_query "SELECT tool_name, sum(write_bytes) FROM jobtrace.files FINAL
		WHERE deleted GROUP BY tool_name ORDER BY 2 DESC LIMIT 1")" "$(printf 'samtools\t800000000')"
check "a row's process columns: host, pid, uid, start, job, task" \
	same "$(ch_query "SELECT host, process_id, pid, uid, start_time, job_id, job_task, opens
		FROM jobtrace.files FINAL WHERE pid = 300 AND path = '/out/s.bam'")" \
	"$(printf 'node-f1\t00000000-0000-8000-8000-000000000104\t300\t1001\t2026-11-23 12:00:00\t94\tsort\t1')"
check "a path with a quote, U+00FF and a tab; size null; mmap; flags" \
	same "$(ch_query "SELECT hex(path), size_bytes, mmap, flags FROM jobtrace.files FINAL WHERE pid = 100
		AND path != '/ref/GRCh38.fa'")" \
	"$(printf '%s\t\\N\t1\t%s' "$(printf '/d/a "q" caf\xc3\xbf\tx.fq' | od -An -tx1 | tr -d ' \n' | tr a-f A-F)" "['read']")"
# files --source clickhouse reads the process table's json: what SQLite gives
ch_http "INSERT INTO jobtrace_cost.process FORMAT JSONEachRow" \
	"input_format_skip_unknown_fields=1" <"$T/frows/process.rows"
"$STORE_PUT" "$T/cost.db" <"$F" >/dev/null 2>&1
files_both() {
	local a b
	a=$("$CLI" --config "$T/cost.conf" files "$@" 2>&1)
	b=$("$CLI" --config "$T/cost.conf" files "$@" --source clickhouse 2>&1)
	printf '%s\n' "$a" >"$T/files.last"
	same "$b" "$a"
}
check "files --run run-8 --format csv: ClickHouse gives SQLite's answer" \
	files_both --run run-8 --format csv
check "  a row per process and file (1 + 1 + 2, and the header)" \
	same "$(wc -l <"$T/files.last")" 5
check "files --run run-8 --task sort (json): the same" files_both --run run-8 --task sort --format json

# ---- stop, start, pause ----------------------------------------------------------------

ch_stop
check "the server is down after ch_stop" eval '! curl -s -m 2 "${CH_URL}ping" >/dev/null'
check "ch_start on the same folder" ch_start "$T/ch"
check "the records are still there" \
	same "$(ch_query "SELECT count() FROM jobtrace.process FINAL") $(ch_query "SELECT count() FROM jobtrace.host FINAL")" "4 2"
ch_pause
check "a paused server does not answer (timeout)" eval '! curl -s -m 2 "${CH_URL}ping" >/dev/null'
ch_resume
check "and answers again when resumed" same "$(curl -s -m 10 "${CH_URL}ping")" "Ok."

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
