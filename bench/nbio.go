package main

import (
	"net"
	"os"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/lesismal/nbio"
	"github.com/lesismal/nbio/logging"
)

var nbioServer = benchrun.Server{Name: "nbio", Serve: serveNbio,
	Note: "nbio v1.6.12, the README's Quick Start: NewEngine with MaxWriteBufferSize 6 MiB and default pollers (NumCPU/4, at least 1), OnData writes back a copy of the data"}

// serveNbio is nbio's README Quick Start echo server on ln's address:
// nbio binds its own socket, so ln is closed first (see the engine server
// in benchrun for why that is safe). Start returns once the engine
// listens and its pollers run.
//
// nbio logs to stdout, where the suite reads the address: its log goes
// to stderr here, warnings and errors only.
func serveNbio(ln net.Listener, ready func(net.Addr)) error {
	logging.Output = os.Stderr
	logging.SetLevel(logging.LevelWarn)
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	engine := nbio.NewEngine(nbio.Config{
		Network:            "tcp",
		Addrs:              []string{addr.String()},
		MaxWriteBufferSize: 6 * 1024 * 1024,
	})
	engine.OnData(func(c *nbio.Conn, data []byte) {
		c.Write(append([]byte{}, data...))
	})
	if err := engine.Start(); err != nil {
		return err
	}
	ready(addr)
	select {}
}
