package sock

import (
	"context"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// TestDialTCP: DialTCP connects a socket of its own to a listener, with
// the addresses both ends see, and a completion port of gale's takes it;
// a port nobody listens on is refused with ECONNREFUSED.
func TestDialTCP(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fd, la, ra, err := DialTCP(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("DialTCP = %v", err)
	}
	defer Close(fd)
	peer, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer peer.Close()
	if ra.String() != ln.Addr().String() || la.String() != peer.RemoteAddr().String() {
		t.Errorf("DialTCP's addresses %v -> %v, want %v -> %v", la, ra, peer.RemoteAddr(), ln.Addr())
	}
	if n, e := Write(fd, []byte("hi")); n != 2 || e != 0 {
		t.Fatalf("Write = %d, %v", n, e)
	}
	buf := make([]byte, 2)
	peer.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadFull(peer, buf); err != nil || string(buf) != "hi" {
		t.Fatalf("peer read %q, %v", buf, err)
	}
	port, err := windows.CreateIoCompletionPort(windows.InvalidHandle, 0, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(port)
	if _, err := windows.CreateIoCompletionPort(windows.Handle(fd), port, 0, 0); err != nil {
		t.Errorf("a port of gale's does not take DialTCP's socket: %v", err)
	}

	gone := ln.Addr().String()
	ln.Close()
	if _, _, _, err := DialTCP(ctx, "tcp", gone); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("DialTCP to a closed port = %v, want ECONNREFUSED", err)
	}
}
