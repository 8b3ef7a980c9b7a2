# SPDX-License-Identifier: GPL-2.0-or-later
# What the benchmarks that watch a service (attach.sh, top_services.sh)
# share: whether it lives, how it is stopped, the CPU it used, a
# redis-server of their own. Sourced
# from the project's root; the service's pid is $SVC.

# alive: the service is there and not a zombie (a service that died is
# a zombie until reaped, and kill -0 still succeeds on one).
alive() {
	kill -0 "$SVC" 2>/dev/null &&
		! awk '$1 == "State:" && $2 == "Z" { z = 1 } END { exit !z }' \
			"/proc/$SVC/status" 2>/dev/null
}

# stop_service: SIGTERM, and SIGKILL after 5 s (a service stopped under a
# debugger that hangs), which nothing can hold up; then reaped.
stop_service() {
	[ -n "${SVC:-}" ] || return 0
	kill -TERM "$SVC" 2>/dev/null || true
	for _ in $(seq 50); do
		alive || break
		sleep 0.1
	done
	kill -KILL "$SVC" 2>/dev/null || true
	wait "$SVC" 2>/dev/null || true
	SVC=
}

# ticks [PID]: the CPU time PID ($SVC by default) has used so far, in
# clock ticks (utime + stime; the fields are counted after the command
# name, which may hold spaces).
ticks() {
	sed 's/.*) //' "/proc/${1:-$SVC}/stat" 2>/dev/null |
		awk '{ print $12 + $13 }'
}

# start_redis: a redis-server of its own on 127.0.0.1 ($W its directory),
# no persistence, on a random port that nothing answers on (neither a
# listener nor a redis); $SVC its pid, $PORT its port, once it answers.
start_redis() {
	for _ in $(seq 10); do
		PORT=$((20000 + $(od -An -N2 -tu2 /dev/urandom) % 30000))
		! (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null || continue
		redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
			--daemonize no --dir "$W" >"$W/redis.log" 2>&1 </dev/null &
		SVC=$!
		for _ in $(seq 50); do
			[ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && return 0
			alive || break
			sleep 0.1
		done
		stop_service
	done
	echo "redis-server did not start: $(tail -1 "$W/redis.log")" >&2
	return 1
}
