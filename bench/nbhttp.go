package main

import (
	"net"
	"os"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/lesismal/nbio/logging"
	"github.com/lesismal/nbio/nbhttp"
)

var nbhttpServer = benchrun.Server{Name: "nbhttp", ServeHTTP: serveNbhttp,
	Note: "nbio v1.6.12's nbhttp, as its examples write it: nbhttp.NewEngine(nbhttp.Config{Network: \"tcp\", Addrs: addr, Handler: HTTPHandler}), every other setting at its default (IOModNonBlocking: connections on the pollers, NumCPU/4 of them, at least 1; handlers on its task pool; the whole body read before the handler runs)"}

// serveNbhttp is nbhttp's server on ln's address, wired as nbio's HTTP
// examples do. nbhttp binds its own socket, so ln is closed first, as
// for the nbio server (see serveNbio); Start returns once it listens.
// Its log goes to stderr, warnings and errors only, as serveNbio's.
func serveNbhttp(ln net.Listener, ready func(net.Addr)) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	engine := nbhttp.NewEngine(nbhttp.Config{
		Network: "tcp",
		Addrs:   []string{addr.String()},
		Handler: benchrun.HTTPHandler(),
	})
	if err := engine.Start(); err != nil {
		return err
	}
	ready(addr)
	select {}
}
