package poller

import (
	"net"
	"syscall"

	"github.com/galeio/gale/internal/sock"
)

// canWrap reports that the net backend can take sockets here.
func canWrap() error { return nil }

// wrapFD gives the backend a view of socket fd, as a listener or a
// connection; fd stays the caller's (the view's Close leaves it open).
func wrapFD(fd int, stream bool) (netWrap, syscall.Errno) {
	v, err := sock.Wrap(fd)
	if err != nil {
		return netWrap{}, netErrno(err)
	}
	var w netWrap
	switch v := v.(type) {
	case net.Listener:
		w.ln = v
	case net.Conn:
		w.c = v
	}
	return w, 0
}

// optSnapshot has nothing to keep here.
type optSnapshot struct{}

// connFD returns the socket of an accepted connection, the caller's
// from now on, and closes c: the socket a view's Accept made itself, or
// else a duplicate.
func connFD(c net.Conn, _ optSnapshot) (int, error) {
	if fd, ok := sock.TakeConn(c); ok {
		return fd, nil
	}
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, syscall.ENOTSOCK
	}
	return sock.DupConn(sc)
}

func closeFD(fd int) { sock.Close(fd) }

func toSockaddr(a net.Addr) Sockaddr { return a }

func (b *netBackend) lastAttempt(e *netEntry, r *netResult) {}

func (b *netBackend) lastSend(e *netEntry, r *netResult) {}

// readableNow asks the socket without waiting.
func readableNow(fd uintptr) bool { return sock.Readable(int(fd)) }
