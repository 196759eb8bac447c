package aio

import (
	"net"
	"os"

	"github.com/galeio/gale/internal/loop"
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
	if c.lp.l.Post(loop.Func(func(l *loop.Loop) { fds <- c.detach(l) })) != nil {
		return nil, ErrWatcherClosed
	}
	var fd int
	select {
	case fd = <-fds:
	case <-c.lp.l.Done():
		return nil, ErrWatcherClosed
	}
	if fd < 0 {
		return nil, ErrConnClosed
	}
	f := os.NewFile(uintptr(fd), "gale-detached")
	nc, err := net.FileConn(f) // duplicates fd, close-on-exec
	f.Close()
	if err != nil {
		return nil, c.opError("detach", err)
	}
	return nc, nil
}

// detach releases c like Free but keeps its descriptor open and returns
// it, or -1 if c was already released.
func (c *conn) detach(l *loop.Loop) int {
	if c.released {
		return -1
	}
	if !c.attached {
		c.released = true
		c.cleanup.Stop()
		return c.fd
	}
	fd := c.fd
	c.fd = -1
	c.release(l, ErrConnClosed)
	return fd
}
