package main

import (
	"errors"
	"fmt"
	"net"
	"os"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/panjf2000/gnet/v2"
)

var gnetServer = benchrun.Server{Name: "gnet", Serve: serveGnet,
	Note: "gnet v2.10.0, gnet.Run with WithMulticore(true) (an event loop per CPU), OnTraffic writes back c.Next(-1)"}

// gnetEcho is the echo handler of gnet's examples: OnTraffic takes all the
// input and writes it back. Write sends at once and keeps what the socket
// does not take in the connection's outbound buffer.
type gnetEcho struct {
	gnet.BuiltinEventEngine
	ready func()
}

// OnBoot runs once the listener is bound and listening, before the event
// loops start: a connection dialed now waits in the backlog.
func (h *gnetEcho) OnBoot(gnet.Engine) gnet.Action {
	h.ready()
	return gnet.None
}

func (h *gnetEcho) OnTraffic(c gnet.Conn) gnet.Action {
	buf, _ := c.Next(-1)
	c.Write(buf)
	return gnet.None
}

// serveGnet runs gnet on ln's address: gnet binds its own socket, so ln
// is closed first (see the engine server in benchrun for why that is
// safe).
//
// gnet's default logger writes to stdout, where the suite reads the
// address; gnetLogger sends warnings and errors to stderr instead and
// drops the rest.
func serveGnet(ln net.Listener, ready func(net.Addr)) error {
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	h := &gnetEcho{ready: func() { ready(addr) }}
	err := gnet.Run(h, "tcp://"+addr.String(), gnet.WithMulticore(true), gnet.WithLogger(gnetLogger{}))
	if err == nil {
		err = errors.New("gnet stopped")
	}
	return err
}

// gnetLogger is a logging.Logger that writes warnings and errors to stderr.
type gnetLogger struct{}

func (gnetLogger) Debugf(string, ...any) {}
func (gnetLogger) Infof(string, ...any)  {}
func (gnetLogger) Warnf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gnet: "+format+"\n", args...)
}
func (gnetLogger) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gnet: "+format+"\n", args...)
}
func (gnetLogger) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gnet: "+format+"\n", args...)
	os.Exit(1)
}
