//go:build !unix && !windows

package sock_test

import (
	"errors"
	"net"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/sock"
)

// TestTable checks the descriptor table that stands in for Unix
// descriptors: DupConn enters a conn, Dup shares its entry, the object
// closes with the last descriptor, FileConn hands it out, and an unknown
// descriptor is EBADF.
func TestTable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skipf("no TCP listener here: %v", err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			c.Read(make([]byte, 1))
		}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fd, err := sock.DupConn(c.(*net.TCPConn))
	if err != nil {
		t.Fatalf("DupConn = %v", err)
	}
	sock.Release(c)
	if a, err := sock.Getsockname(fd); err != nil || a.String() != c.LocalAddr().String() {
		t.Errorf("Getsockname = %v, %v; want %v", a, err, c.LocalAddr())
	}
	if !sock.IsStream(fd) {
		t.Error("IsStream of a TCP conn = false")
	}
	fd2, err := sock.Dup(fd)
	if err != nil {
		t.Fatalf("Dup = %v", err)
	}
	if err := sock.Close(fd); err != nil {
		t.Fatalf("Close of the first descriptor = %v", err)
	}
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatalf("Write after closing one of two descriptors = %v, want the conn open", err)
	}
	if err := sock.Close(fd2); err != nil {
		t.Fatalf("Close of the last descriptor = %v", err)
	}
	if _, err := c.Write([]byte("x")); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("Write after the last Close = %v, want net.ErrClosed", err)
	}
	if err := sock.Close(fd2); !errors.Is(err, syscall.EBADF) {
		t.Errorf("Close of a closed descriptor = %v, want EBADF", err)
	}
	if _, err := sock.FileConn(12345); !errors.Is(err, syscall.EBADF) {
		t.Errorf("FileConn of an unknown descriptor = %v, want EBADF", err)
	}
}
