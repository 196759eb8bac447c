//go:build unix

package sock_test

import (
	"errors"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// tcpPair returns a connected loopback TCP pair, closed by t's cleanup.
func tcpPair(t *testing.T) (client *net.TCPConn, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	s, err := ln.Accept()
	if err != nil {
		c.Close()
		t.Fatalf("accept: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		s.Close()
	})
	return c.(*net.TCPConn), s
}

func dupConn(t *testing.T, c syscall.Conn) int {
	t.Helper()
	fd, err := sock.DupConn(c)
	if err != nil {
		t.Fatalf("DupConn: %v", err)
	}
	t.Cleanup(func() { sock.Close(fd) })
	return fd
}

// wantCloexecNonblock checks the descriptor flags DupConn promises.
func wantCloexecNonblock(t *testing.T, fd int) {
	t.Helper()
	fdFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatalf("F_GETFD: %v", err)
	}
	if fdFlags&unix.FD_CLOEXEC == 0 {
		t.Errorf("F_GETFD = %#x, want FD_CLOEXEC set", fdFlags)
	}
	flFlags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		t.Fatalf("F_GETFL: %v", err)
	}
	if flFlags&unix.O_NONBLOCK == 0 {
		t.Errorf("F_GETFL = %#x, want O_NONBLOCK set", flFlags)
	}
}

func sockaddrPort(t *testing.T, sa unix.Sockaddr) (net.IP, int) {
	t.Helper()
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return net.IP(sa.Addr[:]), sa.Port
	case *unix.SockaddrInet6:
		return net.IP(sa.Addr[:]), sa.Port
	}
	t.Fatalf("unexpected sockaddr %T", sa)
	return nil, 0
}

// TestDupConnTCP: the copy is close-on-exec and non-blocking, is the same
// socket (same local and peer addresses, data flows both ways) and leaves
// the original working.
func TestDupConnTCP(t *testing.T) {
	c, s := tcpPair(t)
	fd := dupConn(t, c)
	wantCloexecNonblock(t, fd)

	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	ip, port := sockaddrPort(t, sa)
	la := c.LocalAddr().(*net.TCPAddr)
	if !ip.Equal(la.IP) || port != la.Port {
		t.Fatalf("getsockname(dup) = %v:%d, want %v", ip, port, la)
	}
	pa, err := unix.Getpeername(fd)
	if err != nil {
		t.Fatal(err)
	}
	ip, port = sockaddrPort(t, pa)
	ra := c.RemoteAddr().(*net.TCPAddr)
	if !ip.Equal(ra.IP) || port != ra.Port {
		t.Fatalf("getpeername(dup) = %v:%d, want %v", ip, port, ra)
	}

	// Out through the copy, in through the peer.
	if n, errno := sock.Write(fd, []byte("via dup")); n != 7 || errno != 0 {
		t.Fatalf("Write(dup) = %d, %v; want 7, 0", n, errno)
	}
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 16)
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "via dup" {
		t.Fatalf("peer read %q, %v; want %q", buf[:n], err, "via dup")
	}
	// The original still works.
	c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("orig")); err != nil {
		t.Fatalf("original conn write after DupConn: %v", err)
	}
	if n, err := s.Read(buf); err != nil || string(buf[:n]) != "orig" {
		t.Fatalf("peer read %q, %v; want %q", buf[:n], err, "orig")
	}
	// And in through the copy.
	if _, err := s.Write([]byte("back")); err != nil {
		t.Fatal(err)
	}
	waitReadable(t, fd)
	if n, errno := sock.Read(fd, buf); errno != 0 || string(buf[:n]) != "back" {
		t.Fatalf("Read(dup) = %q, %v; want %q", buf[:n], errno, "back")
	}
}

// TestDupConnSharesOptions: an option set on the original before the
// hand-over is in force on the copy.
func TestDupConnSharesOptions(t *testing.T) {
	c, _ := tcpPair(t)
	if err := c.SetNoDelay(false); err != nil { // Go sets TCP_NODELAY by default
		t.Fatal(err)
	}
	fd := dupConn(t, c)
	v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY)
	if err != nil {
		t.Fatal(err)
	}
	if v != 0 {
		t.Fatalf("TCP_NODELAY on the copy = %d, want 0 as set on the original", v)
	}
}

// TestDupConnKinds: DupConn works for every socket conn type of package net.
func TestDupConnKinds(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		network string
		stream  bool
	}{
		{"tcp", true},
		{"unix", true},
		{"udp", false},
		{"unixgram", false},
	} {
		t.Run(tc.network, func(t *testing.T) {
			var c net.Conn
			var err error
			switch tc.network {
			case "tcp":
				c, _ = tcpPair(t)
			case "unix":
				ln, lerr := net.Listen("unix", filepath.Join(dir, "s"))
				if lerr != nil {
					t.Fatal(lerr)
				}
				defer ln.Close()
				c, err = net.Dial("unix", ln.Addr().String())
				if err == nil {
					s, aerr := ln.Accept()
					if aerr != nil {
						t.Fatal(aerr)
					}
					defer s.Close()
				}
			case "udp":
				c, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
			case "unixgram":
				c, err = net.ListenUnixgram("unixgram", &net.UnixAddr{Name: filepath.Join(dir, "g"), Net: "unixgram"})
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			fd := dupConn(t, c.(syscall.Conn))
			wantCloexecNonblock(t, fd)
			if got := sock.IsStream(fd); got != tc.stream {
				t.Fatalf("IsStream(%s) = %v, want %v", tc.network, got, tc.stream)
			}
		})
	}
}

// TestDupConnClosed: a closed conn fails with an error matching
// net.ErrClosed, and no descriptor.
func TestDupConnClosed(t *testing.T) {
	c, _ := tcpPair(t)
	c.Close()
	fd, err := sock.DupConn(c)
	if err == nil {
		sock.Close(fd)
		t.Fatal("DupConn of a closed conn succeeded")
	}
	if !errors.Is(err, net.ErrClosed) {
		t.Fatalf("DupConn of a closed conn = %v, want an error matching net.ErrClosed", err)
	}
	if fd != -1 {
		t.Fatalf("DupConn of a closed conn returned fd %d, want -1", fd)
	}
}

type brokenConn struct{ err error }

func (b brokenConn) SyscallConn() (syscall.RawConn, error) { return nil, b.err }

func TestDupConnSyscallConnError(t *testing.T) {
	want := errors.New("no raw conn")
	fd, err := sock.DupConn(brokenConn{want})
	if err != want || fd != -1 {
		t.Fatalf("DupConn(broken) = %d, %v; want -1, %v", fd, err, want)
	}
}

func TestDupBadFD(t *testing.T) {
	fd, err := sock.Dup(-1)
	if err == nil {
		sock.Close(fd)
		t.Fatal("Dup(-1) succeeded")
	}
	if !errors.Is(err, unix.EBADF) || fd != -1 {
		t.Fatalf("Dup(-1) = %d, %v; want -1, EBADF", fd, err)
	}
}

// TestIsStream covers socket types beyond those package net makes.
func TestIsStream(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    int
		stream bool
	}{
		{"SOCK_STREAM", unix.SOCK_STREAM, true},
		{"SOCK_DGRAM", unix.SOCK_DGRAM, false},
		{"SOCK_SEQPACKET", unix.SOCK_SEQPACKET, false},
	} {
		fds, err := unix.Socketpair(unix.AF_UNIX, tc.typ, 0)
		if err != nil {
			t.Logf("socketpair(%s): %v; skipped", tc.name, err)
			continue
		}
		got := sock.IsStream(fds[0])
		unix.Close(fds[0])
		unix.Close(fds[1])
		if got != tc.stream {
			t.Errorf("IsStream(%s) = %v, want %v", tc.name, got, tc.stream)
		}
	}
}

func TestCloseTwice(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[1])
	if err := sock.Close(fds[0]); err != nil {
		t.Fatalf("Close = %v", err)
	}
	if err := sock.Close(fds[0]); err != unix.EBADF {
		t.Fatalf("second Close = %v, want EBADF", err)
	}
}
