package main

import (
	"errors"
	"net"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/tidwall/evio"
)

var evioServer = benchrun.Server{Name: "evio", Serve: serveEvio,
	Note: "evio v1.0.8, the README's echo: evio.Serve with Data returning its input, default NumLoops (one event loop; -1 would be one per CPU)"}

// serveEvio is evio's README echo server on ln's address: evio binds its
// own socket, so ln is closed first (see the engine server in benchrun
// for why that is safe). Serving fires once the listener is bound, before
// the loop starts: a connection dialed then waits in the backlog.
//
// evio reads a connection only when it has no output pending, so a peer's
// end of file is read, and the connection closed, only after every echoed
// byte is written.
func serveEvio(ln net.Listener, ready func(net.Addr)) error {
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	var events evio.Events
	events.Serving = func(evio.Server) evio.Action {
		ready(addr)
		return evio.None
	}
	events.Data = func(_ evio.Conn, in []byte) ([]byte, evio.Action) {
		return in, evio.None
	}
	err := evio.Serve(events, "tcp://"+addr.String())
	if err == nil {
		err = errors.New("evio stopped")
	}
	return err
}
