package main

import (
	"net"

	"github.com/galeio/gale/internal/tools/benchrun"
	"github.com/xtaci/gaio"
)

// gaioBuffer is each connection's read buffer. gaio's README echo server
// gives each connection its own buffer (128 bytes there, a demo size) and
// reuses it for every read; 4 KiB is the usual size of such a buffer.
const gaioBuffer = 4 << 10

var gaioServer = benchrun.Server{Name: "gaio", Serve: serveGaio(gaioBuffer),
	Note: "gaio v1.2.34, the README echo: one Watcher, WaitIO loop, write back what was read, read again once the write completes; 4 KiB buffer per conn"}

// gaio64k is the same server with 64 KiB buffers: the size of the
// stream's writes, so that one read can take a whole one, as std net's
// 64 KiB buffer does.
var gaio64k = benchrun.Server{Name: "gaio-64k", Serve: serveGaio(64 << 10),
	Note: "the gaio server with a 64 KiB buffer per conn"}

// serveGaio is gaio's README echo server: the accept loop hands each
// connection to one Watcher with a first read; a goroutine takes the
// completions, writes back what a read got and reads again when the write
// is done. A connection's buffer serves both, as only one operation is
// outstanding at a time. On an error, end of file included, the
// connection is freed: its write has completed by then, so nothing is
// lost.
func serveGaio(size int) func(net.Listener, func(net.Addr)) error {
	return func(ln net.Listener, ready func(net.Addr)) error {
		w, err := gaio.NewWatcher()
		if err != nil {
			return err
		}
		defer w.Close()
		go gaioEcho(w)
		ready(ln.Addr())
		for {
			c, err := ln.Accept()
			if err != nil {
				return err
			}
			if err := w.Read(nil, c, make([]byte, size)); err != nil {
				return err
			}
		}
	}
}

func gaioEcho(w *gaio.Watcher) {
	for {
		results, err := w.WaitIO()
		if err != nil {
			return
		}
		for _, res := range results {
			switch {
			case res.Error != nil:
				w.Free(res.Conn)
			case res.Operation == gaio.OpRead:
				w.Write(nil, res.Conn, res.Buffer[:res.Size])
			case res.Operation == gaio.OpWrite:
				w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
			}
		}
	}
}
