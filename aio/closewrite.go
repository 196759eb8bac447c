package aio

import (
	"errors"
	"net"

	"github.com/galeio/gale/internal/loop"
	"github.com/galeio/gale/internal/sock"
)

// CloseWrite shuts down the sending side of conn (shutdown(2), SHUT_WR)
// once every Write submitted on it before the call has completed: the
// peer reads the bytes of those writes, then end of file, and conn goes
// on reading. This is how a proxy passes a half-close through. (gaio has
// no such call.)
//
// It returns at once and, like Free, produces no completion of its own.
// It is ordered with conn's writes as a Write would be: a Write submitted
// after it completes with a *net.OpError ("write") whose error matches
// net.ErrClosed, without writing anything; a second CloseWrite does
// nothing. A failure of shutdown(2) itself (the connection already reset)
// is not reported: the connection's next read reports its state. Free or
// Detach before the earlier writes complete drops the CloseWrite; Free
// closes the socket anyway, and a Detached conn is the caller's to shut.
//
// A conn the watcher never delegated is still the caller's: CloseWrite
// calls its own CloseWrite method (*net.TCPConn, *net.UnixConn) and
// returns its error, ErrUnsupported if it has none. A Write that
// delegates it later then fails with the kernel's EPIPE.
//
// Errors: ErrWatcherClosed after Close; ErrUnsupported for a nil conn, a
// delegated conn that is not a stream socket, or a conn without
// CloseWrite; ErrConnClosed for a conn already freed, detached or closed.
// Safe from any goroutine.
func (w *watcher) CloseWrite(conn net.Conn) error {
	if w.closed.Load() {
		return ErrWatcherClosed
	}
	if conn == nil || connPtr(conn) == nil {
		return ErrUnsupported
	}
	if c := w.reg.lookup(conn); c != nil {
		return w.postCloseWrite(c)
	}
	cw, ok := conn.(interface{ CloseWrite() error })
	if !ok {
		return ErrUnsupported
	}
	err := cw.CloseWrite()
	if err == nil || !errors.Is(err, net.ErrClosed) {
		return err
	}
	// Closed: freed, detached or closed by the caller, or delegated by a
	// concurrent submission since the lookup (registration closes the
	// caller's conn once its entry is made).
	if c := w.reg.lookup(conn); c != nil {
		return w.postCloseWrite(c)
	}
	return ErrConnClosed
}

// postCloseWrite queues a CloseWrite for the delegated conn c.
func (w *watcher) postCloseWrite(c *conn) error {
	if !c.stream {
		return ErrUnsupported
	}
	r := w.pool.get()
	r.kind, r.c = kCloseWrite, c
	if c.lp.l.Post(r) != nil {
		w.pool.put(r)
		return ErrWatcherClosed
	}
	return nil
}

// closedWrite takes r, the head of the writers' queue, off it once the
// writes before it are done: a CloseWrite shuts the sending side down (the
// first one; later ones do nothing), and a write behind one fails without
// writing. So a write's outcome follows the order of submission, and so
// does its completion.
func (c *conn) closedWrite(l *loop.Loop, r *request) {
	if r.kind == kWrite {
		c.done(l, &c.writers, r, opError(r.conn, "write", errWriteShut))
		return
	}
	c.writers.remove(r)
	c.w.pool.put(r)
	if !c.wrShut {
		c.wrShut = true
		c.shutdownWrite()
	}
}

// shutdownWrite shuts down the sending side. ENOTCONN (the peer reset
// the connection) and any other failure are left for the next read to
// report: a CloseWrite has no completion to carry them.
func (c *conn) shutdownWrite() {
	sock.Shutdown(c.fd.Sysfd(), sock.ShutWrite)
}
