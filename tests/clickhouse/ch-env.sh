# SPDX-License-Identifier: GPL-2.0-or-later
#
# ch-env.sh - a throw-away ClickHouse server for tests (sourced by bash).
#
#   ch_start DIR      write a private configuration under DIR (a DIR used
#                     before keeps its data) and start Debian's
#                     clickhouse-server as user clickhouse,
#                     on 127.0.0.1 only; 0 once /ping answers (30 s max,
#                     CH_START_TIMEOUT), else 1 with the server log's tail.
#   ch_pick_ports     keep the default ports if free, else pick two free
#                     ones (before ch_start, when other servers may run)
#   ch_query SQL [ARGS...]
#                     run one query with clickhouse-client on the native
#                     port and print the result as TSV (extra ARGS go to
#                     clickhouse-client, e.g. --user jobtrace --password X)
#   ch_multiquery     run the statements on stdin (clickhouse-client
#                     --multiquery)
#   ch_http SQL [PARAMS [CURL-ARGS...]]
#                     run one query through the HTTP interface (curl);
#                     stdin is the request body (for INSERT ... FORMAT ...),
#                     PARAMS more URL parameters ("a=1&b=2")
#   ch_stop           stop the server ch_start started: SIGTERM, wait up to
#                     30 s, then SIGKILL of that pid only.  DIR is kept, so
#                     ch_start DIR brings the same data back.  Safe to call
#                     twice.
#   ch_pause/ch_resume
#                     SIGSTOP/SIGCONT the server: it keeps its port but
#                     answers nothing (what a hung server looks like, as
#                     opposed to ch_stop's "connection refused")
#   ch_destroy        ch_stop, then remove DIR (unless CH_KEEP is set)
#
# Outputs (exported): CH_URL=http://127.0.0.1:18123/, CH_HTTP_PORT,
# CH_TCP_PORT, CH_DIR, CH_PID (the server's pid).
# Users: `default` (no password) and `jobtrace` (password jt-secret), both
# allowed from localhost only.  Ports: CH_HTTP_PORT (18123) and CH_TCP_PORT
# (19000) may be set before ch_start; there is no interserver port.
#
# The machine's own /etc/clickhouse-server is never read: the server gets a
# complete configuration of its own in DIR/etc.

CH_HTTP_PORT=${CH_HTTP_PORT:-18123}
CH_TCP_PORT=${CH_TCP_PORT:-19000}
CH_DIR=
CH_PID=
CH_WRAPPER_PID=

# Whether nothing listens on TCP port $1.
ch_port_free() {
	[ -z "$(ss -Htln "sport = :$1" 2>/dev/null)" ]
}

# Use the default ports when free, else two free ones in 20000..39999
# (call before ch_start when other servers may be running).
ch_pick_ports() {
	local p
	ch_port_free "$CH_HTTP_PORT" && ch_port_free "$CH_TCP_PORT" && return 0
	for _ in $(seq 1 100); do
		p=$((20000 + RANDOM % 19999))
		if ch_port_free "$p" && ch_port_free "$((p + 1))"; then
			CH_HTTP_PORT=$p
			CH_TCP_PORT=$((p + 1))
			return 0
		fi
	done
	echo "# ch-env: no free ports found" >&2
	return 1
}

# Write the server and users configuration into DIR/etc.
ch_write_conf() {
	local dir=$1
	cat >"$dir/etc/config.xml" <<-EOF
		<?xml version="1.0"?>
		<!-- written by tests/clickhouse/ch-env.sh: a private test server -->
		<yandex>
		    <logger>
		        <level>information</level>
		        <log>$dir/log/clickhouse-server.log</log>
		        <errorlog>$dir/log/clickhouse-server.err.log</errorlog>
		        <size>100M</size>
		        <count>2</count>
		    </logger>
		    <listen_host>127.0.0.1</listen_host>
		    <http_port>$CH_HTTP_PORT</http_port>
		    <tcp_port>$CH_TCP_PORT</tcp_port>
		    <max_connections>256</max_connections>
		    <keep_alive_timeout>3</keep_alive_timeout>
		    <max_concurrent_queries>50</max_concurrent_queries>
		    <uncompressed_cache_size>67108864</uncompressed_cache_size>
		    <mark_cache_size>67108864</mark_cache_size>
		    <path>$dir/data/</path>
		    <tmp_path>$dir/tmp/</tmp_path>
		    <user_files_path>$dir/user_files/</user_files_path>
		    <format_schema_path>$dir/format_schemas/</format_schema_path>
		    <users_config>$dir/etc/users.xml</users_config>
		    <default_profile>default</default_profile>
		    <default_database>default</default_database>
		    <timezone>UTC</timezone>
		    <mlock_executable>false</mlock_executable>
		    <builtin_dictionaries_reload_interval>3600</builtin_dictionaries_reload_interval>
		    <max_session_timeout>3600</max_session_timeout>
		    <default_session_timeout>60</default_session_timeout>
		    <max_table_size_to_drop>0</max_table_size_to_drop>
		    <max_partition_size_to_drop>0</max_partition_size_to_drop>
		</yandex>
	EOF
	cat >"$dir/etc/users.xml" <<-EOF
		<?xml version="1.0"?>
		<!-- written by tests/clickhouse/ch-env.sh: test users only -->
		<yandex>
		    <profiles>
		        <default>
		            <max_memory_usage>1000000000</max_memory_usage>
		            <use_uncompressed_cache>0</use_uncompressed_cache>
		            <load_balancing>random</load_balancing>
		        </default>
		    </profiles>
		    <users>
		        <default>
		            <password></password>
		            <networks replace="replace">
		                <ip>::1</ip>
		                <ip>127.0.0.1</ip>
		            </networks>
		            <profile>default</profile>
		            <quota>default</quota>
		        </default>
		        <jobtrace>
		            <password>jt-secret</password>
		            <networks replace="replace">
		                <ip>::1</ip>
		                <ip>127.0.0.1</ip>
		            </networks>
		            <profile>default</profile>
		            <quota>default</quota>
		        </jobtrace>
		    </users>
		    <quotas>
		        <default>
		            <interval>
		                <duration>3600</duration>
		                <queries>0</queries>
		                <errors>0</errors>
		                <result_rows>0</result_rows>
		                <read_rows>0</read_rows>
		                <execution_time>0</execution_time>
		            </interval>
		        </default>
		    </quotas>
		</yandex>
	EOF
}

# Print the last lines of the server's logs to stderr.
ch_log_tail() {
	local f
	for f in "$CH_DIR/log/clickhouse-server.err.log" \
		"$CH_DIR/log/clickhouse-server.log" "$CH_DIR/log/stdout.log"; do
		[ -s "$f" ] || continue
		echo "#   --- $f" >&2
		tail -n 8 "$f" | sed 's/^/#   /' >&2
	done
}

# The pid of the clickhouse-server that runuser pid $1 started, if any.
ch_server_pid() {
	local p
	for p in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		if [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = /usr/sbin/clickhouse-server ]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}

# Start the server on DIR (see the top of this file).
ch_start() {
	local dir=$1 timeout=${CH_START_TIMEOUT:-30} c i pid=
	if [ -z "$dir" ]; then
		echo "# ch-env: usage: ch_start DIR" >&2
		return 1
	fi
	if [ -n "$CH_PID" ] && ch_alive "$CH_PID"; then
		echo "# ch-env: already running (pid $CH_PID, $CH_DIR)" >&2
		return 1
	fi
	for c in /usr/sbin/clickhouse-server clickhouse-client curl runuser; do
		if ! command -v "$c" >/dev/null; then
			echo "# ch-env: $c is missing (apt-get install clickhouse-server clickhouse-client curl)" >&2
			return 1
		fi
	done
	if ! id clickhouse >/dev/null 2>&1; then
		echo "# ch-env: there is no user clickhouse (the Debian package creates it)" >&2
		return 1
	fi
	if [ "$(id -u)" -ne 0 ]; then
		echo "# ch-env: ch_start needs root (runs the server as user clickhouse)" >&2
		return 1
	fi
	for i in "$CH_HTTP_PORT" "$CH_TCP_PORT"; do
		if ! ch_port_free "$i"; then
			echo "# ch-env: port $i is already in use:" >&2
			ss -Htlnp "sport = :$i" 2>/dev/null | sed 's/^/#   /' >&2
			return 1
		fi
	done
	mkdir -p "$dir" || return 1
	dir=$(cd "$dir" && pwd) || return 1
	CH_DIR=$dir
	mkdir -p "$dir/etc" "$dir/data" "$dir/tmp" "$dir/log" \
		"$dir/user_files" "$dir/format_schemas" || return 1
	ch_write_conf "$dir"
	# the server writes its preprocessed configuration next to the file
	chown -R clickhouse:clickhouse "$dir" || return 1
	chmod 0755 "$dir"
	# runuser stays as the server's parent (it waits to close the PAM
	# session); the server itself is its only child.  (--pid-file is
	# honoured by 18.16 in --daemon mode only.)
	(
		cd "$dir" &&
			exec runuser -u clickhouse -- /usr/sbin/clickhouse-server \
				--config-file="$dir/etc/config.xml"
	) </dev/null >>"$dir/log/stdout.log" 2>&1 &
	CH_WRAPPER_PID=$!
	export CH_DIR CH_HTTP_PORT CH_TCP_PORT
	export CH_URL="http://127.0.0.1:$CH_HTTP_PORT/"
	for i in $(seq 1 $((timeout * 10))); do
		if [ -z "$pid" ]; then
			pid=$(ch_server_pid "$CH_WRAPPER_PID")
			CH_PID=$pid
			export CH_PID
		fi
		if [ -n "$pid" ] && [ "$(curl -s -m 2 "${CH_URL}ping" 2>/dev/null)" = "Ok." ]; then
			return 0
		fi
		if ! ch_alive "$CH_WRAPPER_PID"; then
			echo "# ch-env: clickhouse-server exited at start:" >&2
			ch_log_tail
			wait "$CH_WRAPPER_PID" 2>/dev/null
			CH_PID=
			CH_WRAPPER_PID=
			return 1
		fi
		sleep 0.1
	done
	echo "# ch-env: clickhouse-server did not answer ${CH_URL}ping within ${timeout} s:" >&2
	ch_log_tail
	ch_stop
	return 1
}

# Run one query on the native port; prints TSV.
ch_query() {
	local sql=$1
	shift
	clickhouse-client --host 127.0.0.1 --port "$CH_TCP_PORT" \
		--format TabSeparated "$@" --query "$sql"
}

# Run the statements on stdin, separated by ';'.
ch_multiquery() {
	clickhouse-client --host 127.0.0.1 --port "$CH_TCP_PORT" --multiquery "$@"
}

# Percent-encode $1 for a URL query value.
ch_urlencode() {
	local s=$1 out= c i
	local LC_ALL=C
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[a-zA-Z0-9.~_-]) out+=$c ;;
		*) printf -v c '%%%02X' "'$c"; out+=$c ;;
		esac
	done
	printf '%s' "$out"
}

# Run one query over HTTP with stdin as the body and PARAMS ("a=1&b=2",
# optional) as more URL parameters; then curl ARGS.  Fails on an HTTP error.
ch_http() {
	local sql=$1 params=${2:-}
	shift
	[ $# -gt 0 ] && shift
	curl -sS --fail-with-body -m 60 --data-binary @- "$@" \
		"${CH_URL}?query=$(ch_urlencode "$sql")${params:+&$params}"
}

# Whether pid $1 runs (exists and is not a zombie).
ch_alive() {
	local st
	st=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# Stop the server: SIGTERM, wait, then SIGKILL of its pid only.
ch_stop() {
	local p
	if [ -z "$CH_PID" ] && [ -n "$CH_WRAPPER_PID" ]; then
		CH_PID=$(ch_server_pid "$CH_WRAPPER_PID")
	fi
	ch_resume 2>/dev/null	# in case it was paused
	if [ -n "$CH_PID" ] && ch_alive "$CH_PID"; then
		kill -TERM "$CH_PID" 2>/dev/null
		for _ in $(seq 1 300); do
			ch_alive "$CH_PID" || break
			sleep 0.1
		done
		if ch_alive "$CH_PID"; then
			echo "# ch-env: clickhouse-server $CH_PID ignored SIGTERM for 30 s; killing it" >&2
			kill -KILL "$CH_PID" 2>/dev/null
		fi
	fi
	# runuser waits for the server; reap it
	p=$CH_WRAPPER_PID
	if [ -n "$p" ]; then
		for _ in $(seq 1 50); do
			ch_alive "$p" || break
			sleep 0.1
		done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	fi
	CH_PID=
	CH_WRAPPER_PID=
	return 0
}

# Freeze the server (it keeps its listening sockets, answers nothing).
ch_pause() {
	[ -n "$CH_PID" ] && kill -STOP "$CH_PID"
}

# Unfreeze the server, and runuser: like su, it stops itself when its
# child stops (job control) and would then never reap the server.
ch_resume() {
	[ -n "$CH_PID" ] || return 1
	kill -CONT "$CH_PID"
	[ -n "$CH_WRAPPER_PID" ] && kill -CONT "$CH_WRAPPER_PID" 2>/dev/null
	return 0
}

# Stop the server and remove its folder (kept when CH_KEEP is set).
ch_destroy() {
	ch_stop
	if [ -n "$CH_DIR" ] && [ -z "${CH_KEEP:-}" ]; then
		rm -rf "$CH_DIR"
	fi
	CH_DIR=
}
