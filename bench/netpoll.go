package main

import (
	"context"
	"errors"
	"net"

	"github.com/cloudwego/netpoll"
	"github.com/galeio/gale/internal/tools/benchrun"
)

var netpollServer = benchrun.Server{Name: "netpoll", Serve: serveNetpoll,
	Note: "netpoll v0.7.2, NewEventLoop with default options serving ln; OnRequest as documented: reader.Next(reader.Len()), Writer().Malloc, copy, Flush, Release"}

// serveNetpoll serves ln with a netpoll EventLoop, as netpoll's guide
// shows (Serve takes a net.Listener). ln already listens, so connections
// may be dialed at once.
func serveNetpoll(ln net.Listener, ready func(net.Addr)) error {
	loop, err := netpoll.NewEventLoop(netpollEcho)
	if err != nil {
		return err
	}
	ready(ln.Addr())
	err = loop.Serve(ln)
	if err == nil {
		err = errors.New("netpoll stopped")
	}
	return err
}

// netpollEcho is the OnRequest handler of netpoll's documentation: take
// the input, copy it into the output buffer and flush. Flush returns once
// the bytes are written (or the connection failed); Release then frees
// the input.
func netpollEcho(_ context.Context, c netpoll.Connection) error {
	r, w := c.Reader(), c.Writer()
	in, err := r.Next(r.Len())
	if err != nil {
		return err
	}
	out, err := w.Malloc(len(in))
	if err != nil {
		return err
	}
	copy(out, in)
	err = w.Flush()
	r.Release()
	return err
}
