#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Real services from Debian, nobody's test programs, attached to under load
# on 127.0.0.1 (dev.sh installs nginx-light, redis-server, redis-tools and
# apache2-utils; skipped where one is missing or where heaptrace does not
# run as root, since nginx's master must be root to run its workers as
# nobody). CASE is one of:
#  nginx     our own nginx (master as root, one worker as nobody, as
#            Debian's): heaptrace attaches to the worker while ab loads it,
#            on the inline backend (no fallback, no warning), and its
#            profile holds nginx's own allocations; every request of the
#            load is answered with 200. A second attach is killed with
#            SIGKILL in the middle of the load: every request is still
#            answered, the worker is the same process and nginx logged no
#            worker death.
#  nginx-run `heaptrace run` of nginx itself (daemon off): the worker forked
#            after the master read its configuration, then turned nobody,
#            gets its own profile with nginx's allocations; ab's requests
#            are all answered; nginx stops at SIGQUIT with status 0.
#  redis     redis-server under redis-benchmark (SET, GET, LPUSH, LPOP,
#            20 clients, pipeline 8): 10 attach/detach cycles during the
#            load, each on the inline backend with no warning and a profile
#            holding redis's allocations; the benchmark sees no error; a
#            key written before the cycles reads back; no mapping heaptrace
#            made is left; then an attach killed with SIGKILL, after which
#            redis still answers.
# Exit 0 pass, 1 fail, 77 skip, 99 harness error.
#
# usage: services.sh HEAPTRACE CASE
set -u
. "$(dirname "$0")/../lib.sh" || exit 99

[ $# -eq 2 ] || usage "services.sh HEAPTRACE CASE"
ht=$(abspath "$1") case=$2
need_exec "$ht"
[ "$(id -u)" -eq 0 ] || skip "needs root (nginx's workers run as nobody)"
scratch
chmod 755 "$tmp" || harness "chmod $tmp"

# free_port: a TCP port on 127.0.0.1 nothing listens on, in $port.
free_port() {
	local i
	for i in $(seq 1 50); do
		port=$((20000 + RANDOM % 30000))
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			return 0
		fi
	done
	harness "no free port"
}

# wait_port PORT: up to 10 s for something to listen on PORT.
wait_port() {
	local i
	for i in $(seq 1 100); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# exec_maps PID: PID's executable mappings that are no file's (what a
# scratch page left behind is), one a line.
exec_maps() {
	awk '$2 ~ /x/ && NF < 6 { print $1 }' "/proc/$1/maps"
}

# attach_checked NAME PID SECONDS: heaptrace attaches to PID for SECONDS
# (--duration) writing $tmp/NAME.massif; a failure unless it exits 0, on
# the inline backend, with nothing on stderr but its summary line.
attach_checked() {
	local name=$1 pid=$2 secs=$3 status=0
	"$ht" attach --time-unit=B --duration="$secs" \
		--massif-out-file="$tmp/$name.massif" "$pid" \
		>"$tmp/$name.out" 2>"$tmp/$name.err" || status=$?
	if [ "$status" -ne 0 ]; then
		fail "$name: heaptrace attach exited $status: $(head -c 300 "$tmp/$name.err")"
		return 1
	fi
	if ! grep -q '(inline)' "$tmp/$name.err" ||
		[ "$(grep -vc '^heaptrace: peak' "$tmp/$name.err")" -ne 0 ]; then
		fail "$name: not a clean inline attach:"
		cat "$tmp/$name.err"
		return 1
	fi
	return 0
}

# holds FILE PATTERN: the profile FILE's trees name a frame matching
# PATTERN, with a peak above 0 bytes.
holds() {
	grep -q "^mem_heap_B=[1-9]" "$1" && grep -q "$2" "$1"
}

# nginx_conf PORT: an nginx configuration in $tmp/nginx.conf: one worker
# as nobody, serving $tmp/www on 127.0.0.1:PORT, everything under $tmp.
nginx_conf() {
	mkdir -p "$tmp/www" "$tmp/nginx-tmp"
	head -c 20000 /dev/urandom | base64 >"$tmp/www/page.txt"
	chmod -R a+rX "$tmp/www"
	cat >"$tmp/nginx.conf" <<EOF
user nobody nogroup;
worker_processes 1;
daemon off;
master_process on;
pid $tmp/nginx.pid;
error_log $tmp/nginx.error.log notice;
events { worker_connections 256; }
http {
	access_log off;
	client_body_temp_path $tmp/nginx-tmp/body;
	proxy_temp_path $tmp/nginx-tmp/proxy;
	fastcgi_temp_path $tmp/nginx-tmp/fastcgi;
	uwsgi_temp_path $tmp/nginx-tmp/uwsgi;
	scgi_temp_path $tmp/nginx-tmp/scgi;
	server {
		listen 127.0.0.1:$1;
		root $tmp/www;
	}
}
EOF
}

# ab_checked NAME SECONDS: ab loads nginx for SECONDS with 4 clients in
# the background (pid in $ab_pid), its report in $tmp/NAME.ab.
ab_start() {
	ab -q -s 10 -t "$2" -n 1000000 -c 4 "http://127.0.0.1:$port/page.txt" \
		>"$tmp/$1.ab" 2>&1 &
	ab_pid=$!
	pids+=("$ab_pid")
}

# ab_answered NAME: ab's run NAME ended well: requests completed, none
# failed, none answered other than 200.
ab_answered() {
	local status=0
	wait "$ab_pid" || status=$?
	local done failed
	done=$(awk '/^Complete requests:/ { print $3 }' "$tmp/$1.ab")
	failed=$(awk '/^Failed requests:/ { print $3 }' "$tmp/$1.ab")
	if [ "$status" -ne 0 ] || [ "${done:-0}" -lt 100 ] ||
		[ "${failed:-1}" -ne 0 ] || grep -q '^Non-2xx' "$tmp/$1.ab"; then
		fail "$1: ab: status $status, $done complete, $failed failed"
		tail -20 "$tmp/$1.ab"
		return 1
	fi
	echo "$1: $done requests answered"
}

# worker_of MASTER: the pid of nginx's worker, child of MASTER.
worker_of() {
	local i w
	for i in $(seq 1 100); do
		w=$(pgrep -P "$1" | head -1)
		[ -n "$w" ] && { echo "$w"; return 0; }
		sleep 0.1
	done
	return 1
}

case_nginx() {
	need nginx ab
	free_port
	nginx_conf "$port"
	nginx -c "$tmp/nginx.conf" -e "$tmp/nginx.error.log" &
	local master=$!
	pids+=("$master")
	wait_port "$port" || harness "nginx did not listen: $(cat "$tmp/nginx.error.log")"
	local worker
	worker=$(worker_of "$master") || harness "no nginx worker"
	[ "$(stat -c %U "/proc/$worker")" = nobody ] ||
		harness "the worker does not run as nobody"
	local before
	before=$(exec_maps "$worker")

	ab_start load1 4
	sleep 0.5
	if attach_checked attach1 "$worker" 2; then
		holds "$tmp/attach1.massif" 'ngx_' ||
			fail "nginx: the worker's profile holds no nginx allocation"
	fi
	ab_answered load1
	[ "$(exec_maps "$worker")" = "$before" ] ||
		fail "nginx: the detach left executable mappings: $(exec_maps "$worker")"

	# heaptrace killed in the middle of the load.
	ab_start load2 4
	sleep 0.5
	"$ht" attach -q --massif-out-file="$tmp/attach2.massif" "$worker" \
		2>"$tmp/attach2.err" &
	local hpid=$!
	sleep 1.5
	kill -9 "$hpid"
	wait "$hpid" 2>/dev/null
	ab_answered load2
	alive "$worker" || fail "nginx: the worker died after heaptrace's SIGKILL"
	[ "$(worker_of "$master")" = "$worker" ] ||
		fail "nginx: another worker replaced $worker"
	if grep -q 'exited on signal' "$tmp/nginx.error.log"; then
		fail "nginx: a worker died:"
		grep 'exited on signal' "$tmp/nginx.error.log"
	fi
	kill -QUIT "$master"
	wait_gone "$master" 10 || fail "nginx did not stop at SIGQUIT"
}

case_nginx_run() {
	need nginx ab
	free_port
	nginx_conf "$port"
	"$ht" run --time-unit=B --massif-out-file="$tmp/run.%p.massif" -- \
		nginx -c "$tmp/nginx.conf" -e "$tmp/nginx.error.log" \
		>"$tmp/run.out" 2>"$tmp/run.err" &
	local hpid=$!
	pids+=("$hpid")
	wait_port "$port" || harness "nginx did not listen: $(cat "$tmp/run.err")"
	local master
	master=$(cat "$tmp/nginx.pid") || harness "no nginx pid file"
	local worker
	worker=$(worker_of "$master") || harness "no nginx worker"
	ab_start load 3
	ab_answered load
	kill -QUIT "$master"
	local status=0
	wait "$hpid" || status=$?
	[ "$status" -eq 0 ] || fail "nginx-run: status $status: $(head -c 300 "$tmp/run.err")"
	if grep -v '^heaptrace: peak' "$tmp/run.err" | grep -q .; then
		fail "nginx-run: heaptrace said more than its summary:"
		cat "$tmp/run.err"
	fi
	[ -f "$tmp/run.$worker.massif" ] || fail "nginx-run: no profile for the worker $worker"
	[ -f "$tmp/run.$worker.massif" ] && ! holds "$tmp/run.$worker.massif" 'ngx_' &&
		fail "nginx-run: the worker's profile holds no nginx allocation"
	return 0
}

case_redis() {
	need redis-server redis-benchmark redis-cli
	free_port
	redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --dir "$tmp" >"$tmp/redis.log" 2>&1 &
	local redis=$!
	pids+=("$redis")
	wait_port "$port" || harness "redis did not listen: $(cat "$tmp/redis.log")"
	redis-cli -p "$port" set heaptrace-key heaptrace-value >/dev/null ||
		harness "redis-cli set"
	local before
	before=$(exec_maps "$redis")

	redis-benchmark -p "$port" -c 20 -P 8 -n 4000000 -t set,get,lpush,lpop \
		-q >"$tmp/bench.out" 2>&1 &
	local bench=$!
	pids+=("$bench")
	sleep 0.5
	local i
	for i in $(seq 1 10); do
		attach_checked "cycle$i" "$redis" 1 || break
		holds "$tmp/cycle$i.massif" 'zmalloc\|sdsnew\|createObject\|redis\|listpack\|lp' ||
			fail "redis: cycle $i's profile holds no redis allocation"
	done
	kill "$bench" 2>/dev/null
	wait "$bench" 2>/dev/null
	if grep -qi 'error' "$tmp/bench.out"; then
		fail "redis: the benchmark saw errors:"
		grep -i error "$tmp/bench.out" | head -5
	fi
	[ "$(redis-cli -p "$port" get heaptrace-key)" = heaptrace-value ] ||
		fail "redis: the key written before the attaches is gone"
	[ "$(exec_maps "$redis")" = "$before" ] ||
		fail "redis: the detaches left executable mappings: $(exec_maps "$redis")"

	"$ht" attach -q --massif-out-file="$tmp/killed.massif" "$redis" \
		2>"$tmp/killed.err" &
	local hpid=$!
	sleep 1
	redis-benchmark -p "$port" -c 4 -n 20000 -t set,get -q >"$tmp/bench2.out" 2>&1 &
	bench=$!
	sleep 0.3
	kill -9 "$hpid"
	wait "$hpid" 2>/dev/null
	wait "$bench" || fail "redis: the benchmark during the kill failed"
	grep -qi 'error' "$tmp/bench2.out" && fail "redis: errors during the kill"
	alive "$redis" || fail "redis died after heaptrace's SIGKILL"
	[ "$(redis-cli -p "$port" get heaptrace-key)" = heaptrace-value ] ||
		fail "redis: no answer after heaptrace's SIGKILL"
	redis-cli -p "$port" shutdown nosave >/dev/null 2>&1
	wait_gone "$redis" 10 || fail "redis did not shut down"
}

case $case in
nginx) case_nginx ;;
nginx-run) case_nginx_run ;;
redis) case_redis ;;
*) usage "services.sh HEAPTRACE nginx|nginx-run|redis" ;;
esac
pass_or_fail
