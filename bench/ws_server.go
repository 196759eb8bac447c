package main

import (
	"fmt"
	"strings"

	"github.com/galeio/gale/bench/internal/wsserve"
)

// wsServer is one library's WebSocket echo server: serve serves ln,
// upgrading requests for /ws, and echoes every message back with its type;
// it returns only on failure. Compression is off in all of them (every
// library's default).
type wsServer struct {
	name    string
	version string
	note    string // how it is written
	// serve serves ln.
	serve wsserve.Serve
	// extra leaves the server out of ws-bench's default -libs: gale's
	// own variants (docs/bench/gorilla.md), beside the libraries
	// docs/bench/ws compares.
	extra bool
}

// wsServers are the servers, by -lib name, in the order of the tables.
var wsServers = []wsServer{wsGale, wsGorilla, wsGws, wsNbio, wsCoder, wsGaleGorilla, wsGaleGorillaHTTPD}

func findWsServer(name string) (wsServer, error) {
	for _, s := range wsServers {
		if s.name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range wsServers {
		names = append(names, s.name)
	}
	return wsServer{}, fmt.Errorf("unknown -lib %q (have %s)", name, strings.Join(names, ", "))
}

// wsServerMain is the ws-server subcommand: one library's echo server on
// -addr, speaking wsserve's protocol with its parent.
func wsServerMain(args []string) error {
	return wsserve.Main(args, strings.Join(wsNames(), ", "), func(lib string) (wsserve.Serve, error) {
		s, err := findWsServer(lib)
		return s.serve, err
	})
}

func wsNames() []string {
	var names []string
	for _, s := range wsServers {
		names = append(names, s.name)
	}
	return names
}

// wsDefaultNames are the servers ws-bench runs unless -libs names others.
func wsDefaultNames() []string {
	var names []string
	for _, s := range wsServers {
		if !s.extra {
			names = append(names, s.name)
		}
	}
	return names
}

// loopbackOnly refuses an address outside 127.0.0.0/8.
func loopbackOnly(addr string) error { return wsserve.LoopbackOnly(addr) }

// wsStartProfile starts a CPU profile into path ("" for none) and returns
// what stops it, which may be called more than once.
func wsStartProfile(path string) (func(), error) { return wsserve.StartProfile(path) }
