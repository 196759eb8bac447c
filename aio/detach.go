package aio

import (
	"net"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// Detach takes conn back from the watcher and returns it as a working
// net.Conn (a new object: the one delegated was closed at delegation).
// Requests still pending on conn complete with ErrConnClosed. Socket
// options and unread data stay with the socket. A conn the watcher never
// delegated is returned as it is. Safe from any goroutine; it waits for
// the connection's loop.
func (w *watcher) Detach(conn net.Conn) (net.Conn, error) {
	if w.closed.Load() {
		return nil, ErrWatcherClosed
	}
	if conn == nil || connPtr(conn) == nil {
		return nil, ErrUnsupported
	}
	c := w.take(conn)
	if c == nil {
		return conn, nil
	}
	fds := make(chan int, 1)
	if c.lp.l.Post(loop.Func(func(l *loop.Loop) { c.detach(l, fds) })) != nil {
		w.orphan(c)
		return nil, ErrWatcherClosed
	}
	var fd int
	select {
	case fd = <-fds:
	case <-c.lp.l.Done():
		// The loop is gone; if it handed the descriptor over before it
		// went, take it (it would leak in the channel otherwise).
		select {
		case fd = <-fds:
		default:
			return nil, ErrWatcherClosed
		}
	}
	if fd < 0 {
		return nil, ErrConnClosed
	}
	nc, err := sock.FileConn(fd)
	if err != nil {
		return nil, opError(conn, "detach", err)
	}
	return nc, nil
}

// detach releases c like Free but hands its descriptor to fds instead of
// closing it, once no operation is in flight; -1 if c was already released.
func (c *conn) detach(l *loop.Loop, fds chan int) {
	if c.released {
		fds <- -1
		return
	}
	c.handOff = fds
	c.release(l, ErrConnClosed)
}
