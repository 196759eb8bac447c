//go:build unix

package aio_test

// Half-closed connections, each way. A watcher has no CloseWrite of its
// own: shutdown(2) belongs to the socket, not to a descriptor, so the
// caller shuts down the sending side through a descriptor of its own.

import (
	"bytes"
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// TestPeerHalfClose checks a peer that sends a request and shuts down its
// sending side: the watcher reads the request, then io.EOF (again for a
// read submitted after), and the connection still writes: a 1 MiB reply
// reaches the peer whole, then Free gives it end of file.
func TestPeerHalfClose(t *testing.T) { backendtest.Run(t, testPeerHalfClose) }

func testPeerHalfClose(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		writePeer(t, peer, "request")
		if err := peer.(interface{ CloseWrite() error }).CloseWrite(); err != nil {
			t.Fatalf("CloseWrite = %v", err)
		}
		if err := w.ReadFull("request", c, make([]byte, 7), time.Time{}); err != nil {
			t.Fatalf("ReadFull = %v", err)
		}
		if r := waitResult(t, col); r.Error != nil || string(r.Data) != "request" {
			t.Fatalf("read of the request = %v, want %q", r, "request")
		}
		for i := range 2 {
			if err := w.Read(i, c, nil); err != nil {
				t.Fatalf("Read = %v", err)
			}
			if r := waitResult(t, col); r.Error != io.EOF || r.Size != 0 {
				t.Fatalf("read %d after the peer's CloseWrite = %v, want io.EOF", i, r)
			}
		}
		reply := stPattern(5, 1<<20)
		got := drainAll(peer)
		if err := w.Write("reply", c, reply); err != nil {
			t.Fatalf("Write = %v", err)
		}
		if r := waitResult(t, col); r.Error != nil || r.Size != len(reply) {
			t.Fatalf("reply after the peer's CloseWrite = %v, want %d bytes written", r, len(reply))
		}
		if err := w.Free(c); err != nil {
			t.Fatalf("Free = %v", err)
		}
		if b := <-got; !bytes.Equal(b, reply) {
			t.Fatalf("peer read %d bytes before EOF, want the %d of the reply", len(b), len(reply))
		}
	})
}

// TestLocalHalfClose checks a connection whose sending side the caller
// shut down (shutdown(2), SHUT_WR) while delegated: the peer reads what
// the watcher wrote before and then end of file; the watcher still reads
// what the peer sends; a write after the shutdown fails with a
// *net.OpError of "write" matching EPIPE.
func TestLocalHalfClose(t *testing.T) { backendtest.Run(t, testLocalHalfClose) }

func testLocalHalfClose(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		own := fsOwnFD(t, c) // the caller's descriptor of the socket
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		before := stPattern(6, 256<<10)
		got := drainAll(peer)
		if err := w.Write("before", c, before); err != nil {
			t.Fatalf("Write = %v", err)
		}
		if r := waitResult(t, col); r.Error != nil || r.Size != len(before) {
			t.Fatalf("write = %v, want %d bytes", r, len(before))
		}
		if err := unix.Shutdown(own, unix.SHUT_WR); err != nil {
			t.Fatalf("shutdown(SHUT_WR) = %v", err)
		}
		if b := <-got; !bytes.Equal(b, before) {
			t.Fatalf("peer read %d bytes before EOF, want the %d written before the shutdown", len(b), len(before))
		}
		writePeer(t, peer, "still reading?")
		if err := w.ReadFull("after", c, make([]byte, 14), time.Time{}); err != nil {
			t.Fatalf("ReadFull = %v", err)
		}
		if r := waitResult(t, col); r.Error != nil || string(r.Data) != "still reading?" {
			t.Fatalf("read after the shutdown = %v, want %q", r, "still reading?")
		}
		if err := w.Write("late", c, []byte("late")); err != nil {
			t.Fatalf("Write = %v", err)
		}
		r := waitResult(t, col)
		var oe *net.OpError
		if !errors.As(r.Error, &oe) || oe.Op != "write" || !errors.Is(r.Error, syscall.EPIPE) || r.Size != 0 {
			t.Fatalf("write after the shutdown = %v, want a write's EPIPE", r)
		}
	})
}

// drainAll reads peer to end of file on a goroutine and sends what it
// read.
func drainAll(peer net.Conn) <-chan []byte {
	ch := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(peer)
		ch <- b
	}()
	return ch
}

// fsOwnFD returns a descriptor of c's socket that the caller keeps
// (closed at cleanup): a close-on-exec duplicate made before delegation.
func fsOwnFD(t *testing.T, c net.Conn) int {
	t.Helper()
	rc, err := c.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn = %v", err)
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) {
		fd, dupErr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil || dupErr != nil {
		t.Fatalf("dup = %v, %v", err, dupErr)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}
