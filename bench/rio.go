package main

import (
	"fmt"
	"net"
	"runtime"
	"strings"

	"github.com/brickingsoft/rio"
	"github.com/galeio/gale/internal/tools/benchrun"
)

var rioServer = benchrun.Server{Name: "rio", Serve: serveRio,
	Note: "rio v1.6.15 (io_uring), default options: std net's echo (a goroutine per connection, 64 KiB buffer, Read then Write back) on a listener from rio.Listen; " +
		"does not start where RLIMIT_NOFILE is below 65535 (20000 here): its fixed-file table of 65535 slots is refused (EMFILE) and the error dropped, so listen fails with ENFILE; no option or environment variable sizes the table (see README)"}

// serveRio is std net's echo (serveStd in benchrun: a goroutine per
// connection, a 64 KiB buffer, Read then Write back) on rio's listener, as
// rio's README shows it: rio.Listen stands in for net.Listen, and the
// conns it accepts are its own io_uring ones. rio binds its own socket, so
// ln is closed first (see the engine server in benchrun for why that is
// safe). rio's Listener.Addr reports the address asked for, which is ln's
// with its port, so ready gets ln's address.
//
// rio v1.6.15 does not start where RLIMIT_NOFILE is below 65535: its
// poller registers a sparse fixed-file table of 65535 slots, which the
// kernel refuses with EMFILE; rio drops that error (RegisterFilesSparse
// breaks out of its retry loop on any errno before its EMFILE branch) and
// every socket it then allocates in the missing table fails with ENFILE,
// so Listen returns "socket: too many open files in system". The table's
// size is a constant (math.MaxUint16) with no option or environment
// variable to change it, so the failure is returned as it comes.
//
// The Write is std net's, which does not look at the count: rio's Write can
// return a short count with a nil error (a send without MSG_WAITALL), which
// would lose bytes here, and the load generator would then report the echo
// as wrong.
func serveRio(ln net.Listener, ready func(net.Addr)) error {
	addr := ln.Addr()
	if err := ln.Close(); err != nil {
		return err
	}
	rln, err := rioListen(addr.String())
	if err != nil {
		return err
	}
	defer rln.Close()
	ready(addr)
	return benchrun.EchoEach(rln)
}

// rioListen is rio.Listen("tcp", addr), with a panic in it returned as an
// error naming where rio panicked. rio v1.6.15 sometimes panics on its
// first submission (a nil func call in aio.(*Poller).Submit: the poller is
// handed out, running, before its goroutine sets its submitter); the suite
// records only the last few hundred bytes of a child's stderr, which for a
// panic would be the bottom of the stack, not the panic.
func rioListen(addr string) (ln net.Listener, err error) {
	defer func() {
		if p := recover(); p != nil {
			ln, err = nil, fmt.Errorf("rio.Listen panicked in %s: %v", rioFrame(), p)
		}
	}()
	return rio.Listen("tcp", addr)
}

// rioFrame is the innermost of rio's frames on the panicking stack, as
// "function (file:line)", called from a deferred function while it
// recovers.
func rioFrame() string {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
	for {
		f, more := frames.Next()
		if strings.HasPrefix(f.Function, "github.com/brickingsoft/rio") {
			file := f.File[strings.LastIndex(f.File, "/")+1:]
			return fmt.Sprintf("%s (%s:%d)", f.Function, file, f.Line)
		}
		if !more {
			return "rio"
		}
	}
}
