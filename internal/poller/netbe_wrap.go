package poller

import (
	"io"
	"net"
	"time"
)

// netWrap is package net's view of an added descriptor: one of a stream
// connection, a listener or a datagram socket, as its first operation
// asked. Its methods are safe from any goroutine.
type netWrap struct {
	c  net.Conn
	ln net.Listener
	pc net.PacketConn
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
	switch {
	case w.c != nil:
		w.c.Close()
	case w.ln != nil:
		w.ln.Close()
	case w.pc != nil:
		w.pc.Close()
	}
}
