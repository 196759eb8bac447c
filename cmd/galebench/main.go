// Command galebench measures gale's echo servers against the standard
// library's on loopback, side by side, and prints a comparison table.
//
// Each server runs in a child process (this binary, re-executed with
// -serve), so its CPU time and memory are measured from /proc alone. The
// load generator is the same for every server: a goroutine per connection
// over package net, and it verifies every byte it gets back.
//
// Usage:
//
//	go run ./cmd/galebench                  # the short suite, about a minute
//	go run ./cmd/galebench -full -out docs/bench/gale   # every case, ~15 min
//	go run ./cmd/galebench -servers engine,stdnet -scenarios pingpong -pingpong 1000x1024
//	go run ./cmd/galebench -scenarios tls -idle 10000   # the TLS comparison
//	go run ./cmd/galebench -scenarios http              # the HTTP comparison (needs wrk)
//	go run ./cmd/galebench -scenarios h2                # the HTTP/2 comparison (needs h2load)
//
// Servers: aio (a Watcher, default Config) and engine (package engine's
// reactor, default Options), each on the backend Auto picks, as a user
// gets them; aio-epoll, aio-io_uring, engine-epoll and engine-io_uring on
// the backend named; netconn and netconn-io_uring (std net's code on a
// netconn listener); and stdnet (a goroutine per connection). The peers
// (gaio, gnet, nbio, evio, netpoll and C epoll and io_uring references)
// are in the bench module: cd bench && go run . (see docs/bench/README.md).
//
// TLS servers, which run the tls- scenarios alone: engine-tls (the engine
// server on Engine.ListenTLS) and std-tls (stdnet's code over crypto/tls),
// with the same certificate; bench adds nbio-tls.
//
// HTTP/1.1 servers, which run the http- scenarios alone: gale-http
// (package httpd's Server, default settings), gale-http-mixed (the same
// in ModeMixed) and std-http (net/http's Server, default settings);
// bench adds nbhttp and fasthttp. Each serves "Hello, World!" on /, 64 KiB on /64k and
// answers a POST to /upload with the length of its body, read whole.
//
// HTTP/2 servers, which run the h2- scenarios alone: gale-h2 (httpd's
// Server with Protocols HTTP1 and UnencryptedHTTP2) and std-h2 (net/http's
// Server with the same Protocols), the same handler as the HTTP/1.1 ones.
//
// Scenarios:
//
//	stream    1 conn streams 64 KiB writes; the echo is read back (MB/s)
//	pingpong  CONNS conns send BYTES-byte messages, each waiting for its
//	          echo (msg/s, latency percentiles); -pingpong 50x4,1000x1024
//	conns     N conns each echo 1 KiB per round (ms per round); -conns 1000,8192
//	idle      N conns each echo 1 byte, then stay open: the server's
//	          resident memory growth per connection (bytes); -idle 10000
//
// TLS scenarios (-scenarios tls for all four), with crypto/tls clients at
// its defaults (TLS 1.3) that resume no session:
//
//	tls-stream     stream over one TLS conn (MB/s)
//	tls-pingpong   pingpong over TLS; -tls-pingpong 50x1024
//	tls-handshake  N clients each loop: dial, full handshake, 64 B echo,
//	               close (handshakes/s); -tls-handshake 16
//	tls-idle       idle over TLS, each conn handshaken; -idle 10000
//
// HTTP scenarios (-scenarios http for all four); the load generator of
// the first three is wrk -t2 --latency (github.com/wg/wrk, which must be
// in PATH), a run of -d rounded up to whole seconds, failed by any
// socket error or status of 400 or more:
//
//	http-hello   keep-alive GETs of "Hello, World!" (req/s, p99 latency,
//	             server CPU per request); -http-hello 50,1000
//	http-64k     keep-alive GETs of 64 KiB (MB/s); -http-bulk 50
//	http-upload  keep-alive POSTs of 1 MiB, read whole (MB/s); -http-bulk 50
//	http-idle    N conns each make one keep-alive GET, then stay open:
//	             the server's memory growth per connection; -http-idle 10000
//
// HTTP/2 scenarios (-scenarios h2 for both), over h2c by prior
// knowledge; h2-hello's load generator is h2load (nghttp2's, Debian's
// nghttp2-client, which must be in PATH) with -t2 (-t1 for one
// connection) for -d, failed by any failed request or status of 400 or
// more:
//
//	h2-hello  GETs of "Hello, World!", CONNS connections × STREAMS
//	          concurrent streams each (req/s, server CPU per request);
//	          -h2 1x100,50x10,500x1
//	h2-idle   N h2c conns each exchange SETTINGS and make one GET, then
//	          stay open: the server's memory growth per connection;
//	          -h2-idle 10000
//
// Every run records the server's CPU seconds and peak RSS and the load
// generator's CPU; -out DIR writes them as JSON lines with a Markdown
// report and SVG charts.
//
// Soak test:
//
//	go run ./cmd/galebench soak -d 10m -out DIR
//
// runs gale's aio and engine servers on every backend the machine has,
// all at once, under a random mix of clients (message sizes, churn,
// pauses, half-closes, resets; -seed), verifies every echoed byte,
// samples each server's descriptors, goroutines and memory, and exits
// non-zero on a lost or corrupted byte, an unexpected error, or a server
// not back to its idle descriptor and goroutine counts at the end.
// go run ./cmd/galebench soak -h lists its flags.
package main

import (
	"os"
	"slices"

	"github.com/galeio/gale/cmd/galebench/internal/soak"
	"github.com/galeio/gale/internal/tools/benchrun"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "soak" {
		os.Exit(soak.Main("galebench soak", benchrun.GaleServers(), os.Args[2:]))
	}
	benchrun.Main(benchrun.Config{
		Command: "galebench",
		Servers: slices.Concat(benchrun.GaleServers(), benchrun.TLSServers(), benchrun.HTTPServers(), benchrun.GaleHTTPServers(serveHTTP1),
			benchrun.H2Servers(), benchrun.GaleH2Servers(serveH2)),
		Default:     []string{"aio", "aio-io_uring", "engine", "engine-epoll", "netconn", "netconn-io_uring", "stdnet"},
		DefaultTLS:  []string{"engine-tls", "std-tls"},
		DefaultHTTP: []string{"gale-http", "gale-http-mixed", "std-http"},
		DefaultH2:   []string{"gale-h2", "std-h2"},
		Usage:       "galebench: gale's echo servers against std net's on loopback. Flags:",
	})
}
