package stresstest

import (
	"net"
	"os"
	"syscall"
	"testing"
)

// Backlog is blocking TCP client sockets made with system calls alone
// (socket(2), connect(2)), not package net. Made before the process's
// descriptor table fills, they connect once it is full: connect needs no
// descriptor, and the handshake completes in the listener's backlog,
// accepted or not. And a connection's client allocates nothing of the Go
// heap, so that a measurement of it sees the server's alone. A Backlog is
// for one goroutine.
type Backlog struct {
	fds []int // -1 once taken by Conn or closed
	to  net.Addr
	sa  *syscall.SockaddrInet4 // to, as connect(2) takes it
}

// NewBacklog makes n sockets, unconnected. Those neither taken by Conn
// nor closed by Close are closed at the end of t. A failed socket(2)
// fails t.
func NewBacklog(t testing.TB, n int) *Backlog {
	t.Helper()
	b := &Backlog{fds: make([]int, 0, n)}
	t.Cleanup(b.Close)
	for range n {
		fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("socket = %v", err)
		}
		b.fds = append(b.fds, fd)
	}
	return b
}

// Len returns the number of sockets.
func (b *Backlog) Len() int { return len(b.fds) }

// FD returns socket i's descriptor, for reads and writes with system
// calls; -1 once taken or closed.
func (b *Backlog) FD(i int) int { return b.fds[i] }

// Connect connects socket i to addr, a TCP address on IPv4 (127.0.0.1:
// the server under test). It returns once the handshake is done, whether
// or not the server has accepted; a failure fails t.
func (b *Backlog) Connect(t testing.TB, i int, addr net.Addr) {
	t.Helper()
	if addr != b.to { // made once: a connection's client allocates nothing
		ta, ok := addr.(*net.TCPAddr)
		if !ok || ta.IP.To4() == nil {
			t.Fatalf("connect to %v: want a TCP address on IPv4", addr)
		}
		b.to, b.sa = addr, &syscall.SockaddrInet4{Port: ta.Port}
		copy(b.sa.Addr[:], ta.IP.To4())
	}
	if err := syscall.Connect(b.fds[i], b.sa); err != nil {
		t.Fatalf("connect(%v) = %v", addr, err)
	}
}

// ConnectAll connects every socket to addr (Connect).
func (b *Backlog) ConnectAll(t testing.TB, addr net.Addr) {
	t.Helper()
	for i := range b.fds {
		b.Connect(t, i, addr)
	}
}

// Conn takes socket i over as a net.Conn, closed at the end of t. A
// failure fails t.
func (b *Backlog) Conn(t testing.TB, i int) net.Conn {
	t.Helper()
	f := os.NewFile(uintptr(b.fds[i]), "client")
	b.fds[i] = -1
	c, err := net.FileConn(f) // a duplicate: f is closed
	f.Close()
	if err != nil {
		t.Fatalf("FileConn = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Close closes the sockets not taken by Conn: the client lets its
// connections go. Idempotent.
func (b *Backlog) Close() {
	for i, fd := range b.fds {
		if fd >= 0 {
			syscall.Close(fd)
			b.fds[i] = -1
		}
	}
}
