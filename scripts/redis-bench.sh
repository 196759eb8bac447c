#!/usr/bin/env bash
# redis-bench.sh compares examples/engine-redis with a real redis-server
# under redis-benchmark, on loopback:
#
#	redis-benchmark -p PORT -t ping,set,get -P 32 -q -n 1000000
#
# against each server in turn, ROUNDS times interleaved (gale, redis,
# gale, redis, ...), and prints every run and then the median requests
# per second of each test (PING_INLINE, PING_MBULK, SET, GET) for each
# server. Before measuring it checks both servers' replies with redis-cli.
#
# It builds the example, starts both servers on 127.0.0.1 (redis-server
# with --save '' --appendonly no, so neither touches the disk) and stops
# them by PID when it ends, however it ends.
#
# Requirements: Go, and redis-tools (redis-benchmark, redis-cli) and
# redis-server from Debian's packages:
#
#	apt-get install -y redis-tools redis-server
#
# Settings, from the environment:
#
#	ROUNDS=3        runs per server
#	REQUESTS=1000000 requests per test (-n)
#	PIPELINE=32     pipelined requests (-P)
#	LOOPS=          engine loops of the example (-loops; empty: GOMAXPROCS)
#	GALE_PORT=16380 REDIS_PORT=16379
set -euo pipefail

ROUNDS=${ROUNDS:-3}
REQUESTS=${REQUESTS:-1000000}
PIPELINE=${PIPELINE:-32}
LOOPS=${LOOPS:-}
GALE_PORT=${GALE_PORT:-16380}
REDIS_PORT=${REDIS_PORT:-16379}

for tool in go redis-benchmark redis-cli redis-server; do
	command -v "$tool" >/dev/null || {
		echo "redis-bench.sh: $tool not found (apt-get install -y redis-tools redis-server)" >&2
		exit 1
	}
done

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

go build -o "$tmp/engine-redis" ./examples/engine-redis

loops=()
[ -n "$LOOPS" ] && loops=(-loops "$LOOPS")
"$tmp/engine-redis" -addr "127.0.0.1:$GALE_PORT" "${loops[@]}" >"$tmp/gale.log" 2>&1 &
pids+=($!)
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no \
	--daemonize no --logfile "$tmp/redis.log" &
pids+=($!)

# wait_ready polls PORT with PING for up to 10 s.
wait_ready() {
	for _ in $(seq 100); do
		[ "$(redis-cli -p "$1" PING 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	echo "redis-bench.sh: nothing answers PING on port $1" >&2
	exit 1
}

# check runs COMMAND... on PORT with redis-cli and compares the reply.
check() {
	local port=$1 want=$2
	shift 2
	local got
	got=$(redis-cli -p "$port" "$@")
	if [ "$got" != "$want" ]; then
		echo "redis-bench.sh: port $port: $* = '$got', want '$want'" >&2
		exit 1
	fi
}

for port in "$GALE_PORT" "$REDIS_PORT"; do
	wait_ready "$port"
	check "$port" OK SET a 1
	check "$port" 1 GET a
	check "$port" PONG PING
	check "$port" hello PING hello
	check "$port" "" GET no-such-key
done
echo "replies checked on both servers (SET a 1, GET a, PING, PING hello, GET of a missing key)"

# bench NAME PORT ROUND runs redis-benchmark and appends "name test rps"
# lines to $tmp/results.
bench() {
	local name=$1 port=$2 round=$3 out
	echo "== $name (port $port), round $round: redis-benchmark -p $port -t ping,set,get -P $PIPELINE -q -n $REQUESTS"
	out=$(redis-benchmark -p "$port" -t ping,set,get -P "$PIPELINE" -q -n "$REQUESTS" | tr '\r' '\n' |
		grep 'requests per second')
	echo "$out"
	local n
	n=$(echo "$out" | wc -l)
	if [ "$n" -ne 4 ]; then
		echo "redis-bench.sh: $name: $n results, want 4 (PING_INLINE, PING_MBULK, SET, GET)" >&2
		exit 1
	fi
	echo "$out" | awk -v s="$name" -F'[: ]+' '{print s, $1, $2}' >>"$tmp/results"
}

for round in $(seq "$ROUNDS"); do
	bench gale "$GALE_PORT" "$round"
	bench redis "$REDIS_PORT" "$round"
done

# Both servers must still be right after the load.
check "$GALE_PORT" PONG PING
check "$REDIS_PORT" PONG PING

echo
echo "median requests per second over $ROUNDS rounds (-P $PIPELINE, -n $REQUESTS):"
printf '%-12s %14s %14s %8s\n' test engine-redis redis-server ratio
for test in PING_INLINE PING_MBULK SET GET; do
	med() {
		awk -v s="$1" -v t="$test" '$1 == s && $2 == t {print $3}' "$tmp/results" | sort -g |
			awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'
	}
	g=$(med gale)
	r=$(med redis)
	printf '%-12s %14.2f %14.2f %8.2f\n' "$test" "$g" "$r" "$(awk -v g="$g" -v r="$r" 'BEGIN {print g / r}')"
done
