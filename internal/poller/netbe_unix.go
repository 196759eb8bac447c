//go:build unix

package poller

import (
	"net"
	"os"
	"syscall"
	"time"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// canWrap reports whether package net can wrap descriptors here: it can
// on every Unix system.
func canWrap() error { return nil }

// wrapFD gives package net a duplicate of fd, as the kind of socket it
// is: a listener for a listening stream socket, a connection for another
// stream, a datagram socket otherwise. fd stays the caller's.
func wrapFD(fd int, stream bool) (netWrap, syscall.Errno) {
	listening := false
	if stream {
		v, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN)
		listening = err == nil && v != 0
	}
	d, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return netWrap{}, netErrno(err)
	}
	f := os.NewFile(uintptr(d), "gale")
	defer f.Close() // package net made its own duplicate
	var w netWrap
	switch {
	case listening:
		w.ln, err = net.FileListener(f)
		w.opts = snapshotOpts(fd) // what accepted sockets inherit
	case stream:
		opts := snapshotOpts(fd)
		w.c, err = net.FileConn(f)
		opts.restore(fd)
	default:
		w.pc, err = net.FilePacketConn(f)
	}
	return w, netErrno(err)
}

// connFD returns a non-blocking, close-on-exec duplicate of c's
// descriptor, with the options opts (its listener's), and closes c.
func connFD(c net.Conn, opts optSnapshot) (int, error) {
	defer c.Close()
	sc, ok := c.(syscall.Conn)
	if !ok {
		return -1, syscall.ENOTSUP
	}
	fd, err := sock.DupConn(sc)
	if err != nil {
		return -1, err
	}
	opts.restore(fd)
	return fd, nil
}

func closeFD(fd int) { unix.Close(fd) }

// toSockaddr returns a as the Sockaddr the layers above decode.
func toSockaddr(a net.Addr) Sockaddr {
	switch a := a.(type) {
	case *net.UnixAddr:
		return &unix.SockaddrUnix{Name: a.Name}
	case *net.TCPAddr:
		return ipSockaddr(a.IP, a.Port, a.Zone)
	case *net.UDPAddr:
		return ipSockaddr(a.IP, a.Port, a.Zone)
	}
	return nil
}

func ipSockaddr(ip net.IP, port int, zone string) Sockaddr {
	if ip4 := ip.To4(); ip4 != nil && len(ip) == net.IPv4len {
		sa := &unix.SockaddrInet4{Port: port}
		copy(sa.Addr[:], ip4)
		return sa
	}
	sa := &unix.SockaddrInet6{Port: port}
	copy(sa.Addr[:], ip.To16())
	if zone != "" {
		if ifi, err := net.InterfaceByName(zone); err == nil {
			sa.ZoneId = uint32(ifi.Index)
		}
	}
	return sa
}

// lastSend makes a cancelled send's last non-blocking attempt at the
// bytes its worker did not write: send space already there still
// counts. A send that finishes so completes with no error.
func (b *netBackend) lastSend(e *netEntry, r *netResult) {
	e.w.setWriteDeadline(time.Time{})
	e.wDL = false
	rc := e.w.rawConn()
	if rc == nil {
		return
	}
	rc.Write(func(fd uintptr) bool {
		skip := r.n
		for _, p := range r.op.bufs {
			if skip >= len(p) {
				skip -= len(p)
				continue
			}
			p, skip = p[skip:], 0
			n, err := unix.Write(int(fd), p)
			if n > 0 {
				r.n += n
			}
			if err != nil || n < len(p) {
				return true
			}
		}
		r.err = 0
		return true
	})
}

// lastAttempt makes a cancelled receive's last non-blocking attempt, on
// the loop goroutine once its worker has returned: data or a connection
// already there still counts. It fills r when it finds some.
func (b *netBackend) lastAttempt(e *netEntry, r *netResult) {
	e.w.setReadDeadline(time.Time{})
	e.rDL = false
	rc := e.w.rawConn()
	if rc == nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		b.tryOnce(int(fd), r)
		return true // one attempt, never a wait
	})
}

// tryOnce is lastAttempt's system call.
func (b *netBackend) tryOnce(fd int, r *netResult) {
	switch r.op.op {
	case OpRecv:
		if r.op.own && r.op.buf == nil { // cancelled while waiting for data
			r.op.buf = *scratchPool.Get().(*[]byte)
		}
		if n, err := unix.Read(fd, r.op.buf); err == nil {
			r.n, r.err = n, 0
		}
	case OpRecvFrom:
		if n, sa, err := unix.Recvfrom(fd, r.op.buf, 0); err == nil {
			r.n, r.err, r.sa = n, 0, sa
		}
	case OpAccept:
		var rsa unix.RawSockaddrAny
		if nfd, peer, sa, err := sock.AcceptPeer(fd, &rsa); err == nil {
			r.fd, r.err, r.peer, r.sa = nfd, 0, peer, sa
		}
	}
}

// readableNow reports whether fd has data, an end of file or an error to
// read now: poll(2) without a wait, which consumes nothing (a peek would
// take a pending error, and the read after it would see only the end of
// file).
func readableNow(fd uintptr) bool {
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, 0)
		if err == unix.EINTR {
			continue
		}
		return err != nil || n > 0
	}
}
