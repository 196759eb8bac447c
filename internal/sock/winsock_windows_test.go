package sock

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestWinsockDupConn checks a duplicated connection on its own: the
// caller's conn closed, a read with nothing there says EAGAIN, the peer's
// bytes are counted by FIONREAD and read, a write reaches the peer, and
// closing the duplicate ends the peer's stream.
func TestWinsockDupConn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peerc := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		peerc <- c
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var peer net.Conn
	select {
	case peer = <-peerc:
	case <-time.After(10 * time.Second):
		t.Fatal("no accept in 10 s")
	}
	if peer == nil {
		t.Fatal("accept failed")
	}
	defer peer.Close()
	s, err := dupSocket(c.(syscall.Conn))
	if err != nil {
		t.Fatalf("dupSocket = %v", err)
	}
	c.Close()

	buf := make([]byte, 16)
	if n, e := sockRead(s, buf); e != syscall.EAGAIN {
		t.Fatalf("read with nothing there = %d, %v; want EAGAIN", n, e)
	}
	peer.Write([]byte("abc"))
	if ok, err := sockPoll(s, true, 10000); !ok || err != nil {
		t.Fatalf("poll for input = %v, %v; want readable", ok, err)
	}
	if n, ok := sockUnread(s); !ok || n != 3 {
		t.Errorf("FIONREAD = %d, %v; want 3", n, ok)
	}
	if n, e := sockRead(s, buf); e != 0 || string(buf[:n]) != "abc" {
		t.Fatalf("read = %q, %v; want abc", buf[:n], e)
	}
	if n, e := sockWrite(s, []byte("xyz")); e != 0 || n != 3 {
		t.Fatalf("write = %d, %v", n, e)
	}
	windows.Closesocket(s)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	got, err := io.ReadAll(peer)
	if string(got) != "xyz" || err != nil {
		t.Fatalf("the peer read %q, %v; want xyz and the end", got, err)
	}
}

// TestWinsockDupListener checks a duplicated listening socket: it
// accepts, without waiting, after the caller's listener closed.
func TestWinsockDupListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	s, err := dupSocket(ln.(syscall.Conn))
	if err != nil {
		t.Fatalf("dupSocket = %v", err)
	}
	defer windows.Closesocket(s)
	ln.Close()
	if _, e := sockAccept(s); e != syscall.EAGAIN {
		t.Fatalf("accept with no one waiting = %v; want EAGAIN", e)
	}
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatalf("dial after the caller's listener closed = %v", err)
	}
	defer c.Close()
	if ok, err := sockPoll(s, true, 10000); !ok || err != nil {
		t.Fatalf("poll for a connection = %v, %v", ok, err)
	}
	ns, e := sockAccept(s)
	if e != 0 {
		t.Fatalf("accept = %v", e)
	}
	defer windows.Closesocket(ns)
	if ok, _ := sockPoll(ns, false, 10000); !ok {
		t.Fatal("the accepted socket is not writable")
	}
	if _, e := sockWrite(ns, []byte("hi")); e != 0 {
		t.Fatalf("write on the accepted socket = %v", e)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b := make([]byte, 2)
	if _, err := io.ReadFull(c, b); err != nil || string(b) != "hi" {
		t.Fatalf("the client read %q, %v", b, err)
	}
}

// TestWinsockWritev sends three buffers, one of them empty, with one
// Writev: the peer reads them in order.
func TestWinsockWritev(t *testing.T) {
	c, peer := connPair(t)
	parts := [][]byte{[]byte("one "), nil, []byte("two")}
	var iov []Iovec
	for _, p := range parts {
		v := Iovec{Len: uint64(len(p))}
		if len(p) > 0 {
			v.Base = &p[0]
		}
		iov = append(iov, v)
	}
	if n, e := Writev(int(c.s), iov); n != 7 || e != 0 {
		t.Fatalf("Writev = %d, %v; want 7, 0", n, e)
	}
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 7)
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "one two" {
		t.Fatalf("peer read %q, %v; want %q", buf, err, "one two")
	}
}

// TestWrapDatagram: Wrap refuses a datagram socket, which the net
// backend does not serve on Windows, with an error matching
// errors.ErrUnsupported.
func TestWrapDatagram(t *testing.T) {
	s, err := windows.Socket(windows.AF_INET, windows.SOCK_DGRAM, windows.IPPROTO_UDP)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.Closesocket(s)
	if v, err := Wrap(int(s)); v != nil || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Wrap(a UDP socket) = %v, %v; want nil, errors.ErrUnsupported", v, err)
	}
}

// TestUnacked: a connection with nothing in flight has nothing unacked,
// where the system says (SIO_TCP_INFO; Wine 8 does not).
func TestUnacked(t *testing.T) {
	c, _ := connPair(t)
	n, ok := Unacked(int(c.s))
	if !ok {
		t.Skip("no WSAIoctl(SIO_TCP_INFO) here (Wine 8 lacks it)")
	}
	if n != 0 {
		t.Errorf("Unacked = %d on an idle connection, want 0", n)
	}
}

// connPair returns a winConn over a duplicate of a loopback connection,
// and its peer, both closed when t ends.
func connPair(t *testing.T) (*winConn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, peer := hubPair(t, ln)
	t.Cleanup(func() {
		c.Close()
		peer.Close()
	})
	return c, peer
}
