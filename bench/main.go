// Command bench runs galebench's suite with the peers' echo servers beside
// gale's: gaio, gnet, nbio, evio and netpoll, each written the way its
// README or examples show, and cepoll, a small C epoll server, as the
// reference of what the machine can do, with curing, the same server on
// raw io_uring, beside it (not in the default set). rio, std net's echo on
// brickingsoft/rio's io_uring listener, is not in the default set either:
// v1.6.15 does not start where RLIMIT_NOFILE is below 65535 (see rio.go).
//
// It is a Go module of its own (github.com/galeio/gale/bench) so that
// gale's core module keeps its single dependency; the suite itself is
// gale's internal/tools/benchrun, which cmd/galebench runs with gale's servers
// alone.
//
// Usage:
//
//	cd bench && go run .                    # the full suite, every server
//	go run . -out ../docs/bench             # also write results, report and charts
//	go run . -servers engine,gnet,cepoll -d 2s -reps 3
//	go run . -scenarios tls -idle 10000     # the TLS servers: engine-tls, std-tls, nbio-tls
//	go run . -scenarios http -reps 3        # the HTTP servers: gale's, std-http, nbhttp, fasthttp
//	go run . -h                             # every flag
//
// cepoll and curing need a C compiler (cc); without one their runs are
// recorded as failed and the others go on.
//
// The TLS scenarios (-scenarios tls) compare gale's engine-tls and
// std-tls, from benchrun, with nbio-tls, nbio's TLS echo (nbio_tls.go).
//
// The HTTP scenarios (-scenarios http, which need wrk) compare gale's
// HTTP/1.1 servers (gale-http and gale-http-mixed, http1.go) and
// std-http (net/http), from benchrun, with nbhttp (nbio's, nbhttp.go)
// and fasthttp (fasthttp.go).
//
// The grpc-bench subcommand (grpc_bench.go, docs/bench/grpc.md) measures
// gRPC unary calls per second, and the server's CPU per call, with
// grpc-go's server on gale's httpd (ServeHTTP as its Handler), on net/http
// and on grpc-go's own transport:
//
//	go run . grpc-bench -reps 3 -d 5s
package main

import (
	"os"
	"slices"

	"github.com/galeio/gale/internal/tools/benchrun"
)

// peers are the other libraries' servers and the C references.
var peers = []benchrun.Server{cepoll, curing, gaioServer, gaio64k, aioGaio, aioGaio64k, evioServer, gnetServer, nbioServer, nbioExecServer, netpollServer, rioServer}

// tlsPeers are the other libraries' TLS servers, beside benchrun's
// engine-tls and std-tls; they run the tls- scenarios alone.
var tlsPeers = []benchrun.Server{nbioTLSServer}

// httpPeers are the other libraries' HTTP/1.1 servers, beside benchrun's
// std-http and gale's; they run the http- scenarios alone.
var httpPeers = []benchrun.Server{nbhttpServer, fasthttpServer}

// config is the suite as this command runs it: every server, the full
// suite by default.
func config() benchrun.Config {
	return benchrun.Config{
		Command:     "bench",
		Servers:     slices.Concat(benchrun.GaleServers(), peers, benchrun.TLSServers(), tlsPeers, benchrun.HTTPServers(), benchrun.GaleHTTPServers(serveHTTP1), httpPeers),
		Default:     []string{"stdnet", "cepoll", "curing", "gaio", "gaio-64k", "evio", "gnet", "nbio", "netpoll", "aio", "aio-io_uring", "aio-gaio-64k", "engine", "engine-epoll"},
		DefaultTLS:  []string{"std-tls", "nbio-tls", "engine-tls"},
		DefaultHTTP: []string{"std-http", "nbhttp", "fasthttp", "gale-http", "gale-http-mixed"},
		Full:        true,
		Usage:       "bench: gale's echo servers against its peers' (gaio, gnet, nbio, evio, netpoll, rio) and C epoll and io_uring references, on loopback; its HTTP servers against net/http, nbhttp and fasthttp. Flags:",
	}
}

func main() {
	if subcommand(wsCommands, os.Args[1:]) { // ws-server, ws-load, ws-bench, ws-scale: ws_main.go
		return
	}
	if subcommand(grpcCommands, os.Args[1:]) { // grpc-bench, grpc-server, grpc-load: grpc_bench.go
		return
	}
	benchrun.Main(config())
}
