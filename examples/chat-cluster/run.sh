#!/usr/bin/env bash
# run.sh: the chat cluster on this machine, in one command: Redis, three
# chat instances and HAProxy in front of them, all on 127.0.0.1, in a
# temporary directory that goes with them. Needs Go, haproxy and
# redis-server (Debian: apt-get install haproxy redis-server).
#
#	bash examples/chat-cluster/run.sh
#
# Open the URL it prints in a few browser tabs. Press Enter to restart
# the three instances one after the other (each new process takes its
# listener over from the old one: package restart); Ctrl-C stops it all.
# PORT sets HAProxy's port (8080).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
export GOWORK=off

for tool in go haproxy redis-server; do
	command -v "$tool" >/dev/null || { echo "run.sh: $tool is not installed" >&2; exit 1; }
done

tmp=$(mktemp -d)
pids=()
cleanup() {
	trap - EXIT INT TERM
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free finds a free port from $1 up: one nobody answers on.
free() {
	local p=$1
	while (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; do p=$((p + 1)); done
	echo "$p"
}
# healthy reports whether the instance on port $1 answers /healthz with 200.
healthy() {
	local line
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
	IFS= read -r line <&3 || true
	exec 3<&-
	[[ $line == *" 200 "* ]]
}
waitport() {
	local i
	for i in $(seq 100); do
		"$@" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "run.sh: gave up waiting for: $*" >&2
	exit 1
}
listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1"); }

echo "building the chat instance"
go build -o "$tmp/chat-cluster" .

redis_port=$(free 6390)
redis-server --bind 127.0.0.1 --port "$redis_port" --save '' --appendonly no --dir "$tmp" \
	>"$tmp/redis.log" 2>&1 &
pids+=($!)
waitport listening "$redis_port"

# HAProxy connects from 127.0.0.2 (haproxy.cfg.tmpl), with a PROXY header.
proxy=127.0.0.2/32

ports=()
inst_pids=()
# instance starts (or, with one running, replaces) instance $1.
instance() {
	local i=$1
	"$tmp/chat-cluster" -addr "127.0.0.1:${ports[i]}" -control "$tmp/chat$i.sock" \
		-redis "127.0.0.1:$redis_port" -proxy "$proxy" >>"$tmp/chat$i.log" 2>&1 &
	inst_pids[i]=$!
	pids+=($!)
}
next=9001
for i in 1 2 3; do
	ports[i]=$(free "$next")
	next=$((ports[i] + 1))
	instance "$i"
	waitport healthy "${ports[i]}"
done

port=$(free "${PORT:-8080}")
sed -e "s|@FRONT@|127.0.0.1:$port|" -e "s|@S1@|127.0.0.1:${ports[1]}|" \
	-e "s|@S2@|127.0.0.1:${ports[2]}|" -e "s|@S3@|127.0.0.1:${ports[3]}|" \
	-e "s|@STATS@|$tmp/haproxy.sock|" \
	haproxy.cfg.tmpl >"$tmp/haproxy.cfg"
haproxy -db -f "$tmp/haproxy.cfg" >"$tmp/haproxy.log" 2>&1 &
pids+=($!)
waitport listening "$port"

cat <<END

  chat:     http://127.0.0.1:$port/   (through HAProxy; open it in a few tabs)
  metrics:  http://127.0.0.1:${ports[1]}/metrics  :${ports[2]}/metrics  :${ports[3]}/metrics
  logs:     $tmp/*.log

  Enter: rolling restart of the three instances.  Ctrl-C: stop everything.
END
while read -r _; do
	for i in 1 2 3; do
		old=${inst_pids[i]}
		instance "$i"
		# The old process exits once the new one serves its listener.
		wait "$old" || true
		waitport healthy "${ports[i]}"
		echo "chat$i: pid $old replaced by ${inst_pids[i]}"
	done
done
# stdin closed: keep serving until Ctrl-C.
wait
