//go:build !unix && !windows

package poller

import (
	"net"
	"syscall"

	"github.com/galeio/gale/internal/sock"
)

// canWrap reports that the net backend can take descriptors here: they
// are internal/sock's table of package net's objects.
func canWrap() error { return nil }

// wrapFD returns the object descriptor fd stands for, borrowed: fd stays
// the caller's, and so does the object (netWrap.close).
func wrapFD(fd int, stream bool) (netWrap, syscall.Errno) {
	v, ok := sock.Object(fd)
	if !ok {
		return netWrap{}, syscall.EBADF
	}
	w := netWrap{borrowed: true}
	switch v := v.(type) {
	case net.Listener:
		w.ln = v
	case net.PacketConn:
		w.pc = v
	case net.Conn:
		w.c = v
	default:
		return netWrap{}, syscall.ENOTSOCK
	}
	return w, 0
}

// optSnapshot has nothing to keep here: an accepted connection is
// package net's, with its defaults.
type optSnapshot struct{}

// connFD enters an accepted connection in the table.
func connFD(c net.Conn, _ optSnapshot) (int, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		c.Close()
		return -1, syscall.ENOTSOCK
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		c.Close()
		return -1, err
	}
	sock.Release(c)
	return fd, nil
}

func closeFD(fd int) { sock.Close(fd) }

func toSockaddr(a net.Addr) Sockaddr { return a }

func (b *netBackend) lastAttempt(e *netEntry, r *netResult) {}

func (b *netBackend) lastSend(e *netEntry, r *netResult) {}

// readableNow has no way to look here: the wait itself finds out (on
// Windows, package net's zero-byte receive completes at once when data
// is there).
func readableNow(uintptr) bool { return false }
