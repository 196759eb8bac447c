package main

import (
	"net"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/tools/benchrun"
)

// The gaio servers' code with only the import changed to gale's aio
// (gaio.NewWatcher becomes aio.NewWatcher, default Config): what a gaio
// user gets by switching. Compare aio-gaio with gaio and aio-gaio-64k
// with gaio-64k.
var (
	aioGaio = benchrun.Server{Name: "aio-gaio", Serve: serveAIOGaio(gaioBuffer), Gale: true, Backend: "auto",
		Note: "gaio's README echo (the gaio server's code) on gale's aio, import changed: 4 KiB buffer per conn, read again once the write completes"}
	aioGaio64k = benchrun.Server{Name: "aio-gaio-64k", Serve: serveAIOGaio(64 << 10), Gale: true, Backend: "auto",
		Note: "aio-gaio with a 64 KiB buffer per conn"}
)

func serveAIOGaio(size int) func(net.Listener, func(net.Addr)) error {
	return func(ln net.Listener, ready func(net.Addr)) error {
		w, err := aio.NewWatcher()
		if err != nil {
			return err
		}
		defer w.Close()
		go aioGaioEcho(w)
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

// aioGaioEcho is gaioEcho on gale's aio.
func aioGaioEcho(w *aio.Watcher) {
	for {
		results, err := w.WaitIO()
		if err != nil {
			return
		}
		for _, res := range results {
			switch {
			case res.Error != nil:
				w.Free(res.Conn)
			case res.Operation == aio.OpRead:
				w.Write(nil, res.Conn, res.Buffer[:res.Size])
			case res.Operation == aio.OpWrite:
				w.Read(nil, res.Conn, res.Buffer[:cap(res.Buffer)])
			}
		}
	}
}
