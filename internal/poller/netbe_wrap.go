package poller

import (
	"io"
	"net"
	"syscall"
	"time"
)

// netWrap is package net's view of an added descriptor: one of a stream
// connection, a listener or a datagram socket, as its first operation
// asked. Its methods are safe from any goroutine.
type netWrap struct {
	c    net.Conn
	ln   net.Listener
	pc   net.PacketConn
	opts optSnapshot // a listener's options, which its accepted sockets get
	// borrowed is set where the view is the descriptor's own object
	// (internal/sock's table, without Unix descriptors), not a
	// duplicate: closing it would close the socket for its owner, so
	// close ends the calls in flight with a past deadline instead, and
	// release clears it once they have ended.
	borrowed bool
}

func (w *netWrap) made() bool { return w.c != nil || w.ln != nil || w.pc != nil }

// has reports whether w's view can do op.
func (w *netWrap) has(op Op) bool {
	switch op {
	case OpAccept:
		return w.ln != nil
	case OpRecvFrom:
		return w.pc != nil
	}
	return w.c != nil || w.pc != nil
}

// deadliner is what a listener has beside net.Listener (TCP, Unix).
type deadliner interface{ SetDeadline(time.Time) error }

func (w *netWrap) setReadDeadline(t time.Time) {
	switch {
	case w.c != nil:
		w.c.SetReadDeadline(t)
	case w.pc != nil:
		w.pc.SetReadDeadline(t)
	case w.ln != nil:
		if d, ok := w.ln.(deadliner); ok {
			d.SetDeadline(t)
		}
	}
}

func (w *netWrap) setWriteDeadline(t time.Time) {
	switch {
	case w.c != nil:
		w.c.SetWriteDeadline(t)
	case w.pc != nil:
		w.pc.SetWriteDeadline(t)
	}
}

// reader is where a receive reads: the connection, or a datagram
// socket.
func (w *netWrap) reader() io.Reader {
	if w.c != nil {
		return w.c
	}
	if c, ok := w.pc.(io.Reader); ok {
		return c
	}
	return errWriter{}
}

// writer is where a send writes: the connection, or a connected datagram
// socket.
func (w *netWrap) writer() io.Writer {
	if w.c != nil {
		return w.c
	}
	if c, ok := w.pc.(io.Writer); ok {
		return c
	}
	return errWriter{}
}

// errWriter stands for a view that cannot do the operation asked.
type errWriter struct{}

func (errWriter) Write([]byte) (int, error) { return 0, net.ErrClosed }
func (errWriter) Read([]byte) (int, error)  { return 0, net.ErrClosed }

// close ends every call in flight on w.
func (w *netWrap) close() {
	if w.borrowed {
		w.setDeadline(time.Unix(1, 0))
		return
	}
	switch {
	case w.c != nil:
		w.c.Close()
	case w.ln != nil:
		w.ln.Close()
	case w.pc != nil:
		w.pc.Close()
	}
}

// release clears what close set on a borrowed view, once its calls have
// ended, for the object's owner.
func (w *netWrap) release() {
	if w.borrowed {
		w.setDeadline(time.Time{})
	}
}

// setDeadline sets both deadlines of w's view.
func (w *netWrap) setDeadline(t time.Time) {
	w.setReadDeadline(t)
	w.setWriteDeadline(t)
}

// rawConn returns the system-call view of e's package net view.
func (w *netWrap) rawConn() syscall.RawConn {
	var sc syscall.Conn
	switch {
	case w.c != nil:
		sc, _ = w.c.(syscall.Conn)
	case w.ln != nil:
		sc, _ = w.ln.(syscall.Conn)
	case w.pc != nil:
		sc, _ = w.pc.(syscall.Conn)
	}
	if sc == nil {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// waitReadable parks the calling goroutine until w has data, an end of
// file or an error to read, without a buffer: package net waits in the
// runtime's poller (on Windows, with a zero-byte receive). A nil-buffer
// receive waits so before it takes its scratch buffer, so an idle
// connection holds none. The first look asks the system whether there is
// something already (readableNow): readiness that came before the wait
// is not signalled again. It returns the error that ended the wait (a
// deadline, a close), or nil.
func (w *netWrap) waitReadable() error {
	rc := w.rawConn()
	if rc == nil {
		return nil // no such view: the read itself will wait
	}
	first := true
	return rc.Read(func(fd uintptr) bool {
		if first {
			first = false
			return readableNow(fd)
		}
		return true
	})
}
