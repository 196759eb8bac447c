package aio

import (
	"errors"
	"io"
	"net"
	"os"

	"github.com/galeio/gale/internal/sock"
)

// The errors of gaio, by the same names. Each is returned as the variable
// itself, never wrapped, so comparisons with == written for gaio keep
// working; unlike gaio's, they also answer errors.Is for the standard
// sentinel they stand for.
var (
	// ErrUnsupported reports a connection that cannot be delegated: nil,
	// not a pointer, or without a descriptor (no syscall.Conn, as with a
	// *tls.Conn or a net.Pipe end). errors.Is(ErrUnsupported,
	// errors.ErrUnsupported) holds.
	ErrUnsupported error = &sentinel{msg: "unsupported connection type", is: errors.ErrUnsupported}
	// ErrNoRawConn is kept for compatibility with gaio; gale never returns
	// it (a connection without a descriptor gets ErrUnsupported).
	ErrNoRawConn = errors.New("net.Conn does not implement syscall.Conn")
	// ErrWatcherClosed reports a call on a closed Watcher. It matches
	// net.ErrClosed.
	ErrWatcherClosed error = &sentinel{msg: "watcher closed", is: net.ErrClosed}
	// ErrPollerClosed is returned by SetPollerAffinity after Close. It
	// matches net.ErrClosed.
	ErrPollerClosed error = &sentinel{msg: "poller closed", is: net.ErrClosed}
	// ErrConnClosed completes the requests still pending on a connection
	// when it is released by Free or Detach, and is what CloseWrite
	// returns for such a conn. It matches net.ErrClosed and
	// io.ErrClosedPipe (what gaio returned in that case).
	ErrConnClosed error = &sentinel{msg: "connection closed", is: net.ErrClosed, is2: io.ErrClosedPipe}
	// ErrDeadline is os.ErrDeadlineExceeded itself: a request that did not
	// complete before its deadline. It is a net.Error whose Timeout is true.
	ErrDeadline = os.ErrDeadlineExceeded
	// ErrEmptyBuffer reports a Write, WriteTimeout or ReadFull with an empty
	// buffer.
	ErrEmptyBuffer = errors.New("empty buffer")
	// ErrCPUID reports a CPU number outside [0, runtime.NumCPU()).
	ErrCPUID = errors.New("no such core")
)

// errWriteShut completes, wrapped in a *net.OpError ("write"), a Write
// submitted on a conn after CloseWrite. It matches net.ErrClosed, as
// engine's Conn.Write after CloseWrite does; unexported, because callers
// have no reason to tell it from other closed-connection errors.
var errWriteShut error = &sentinel{msg: "write after CloseWrite", is: net.ErrClosed}

// sentinel is an error value that also matches the standard errors it
// stands for.
type sentinel struct {
	msg string
	is  error
	is2 error
}

func (e *sentinel) Error() string { return e.msg }

func (e *sentinel) Is(target error) bool {
	return target == e.is || (e.is2 != nil && target == e.is2)
}

// opError wraps a failure of op on the caller's conn nc once
// (sock.OpError). A delegated nc is closed but still knows its addresses,
// so the watcher's conn keeps no copy of them.
func opError(nc net.Conn, op string, err error) error {
	la := nc.LocalAddr()
	return sock.OpError(op, addrNetwork(la), la, nc.RemoteAddr(), err)
}
