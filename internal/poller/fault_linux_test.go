package poller_test

import (
	"net"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/unix"
)

// The fault hook (sock.SetFault) as each backend applies it: an injected
// failure takes the place of the operation, so nothing is read, written
// or accepted, and the completion path sees the errno.

// failOnce makes the next call of op fail with errno, once; the hook is
// removed at cleanup.
func failOnce(t *testing.T, op sock.FaultOp, errno syscall.Errno) *atomic.Int32 {
	var left, hits atomic.Int32
	left.Store(1)
	restore := sock.SetFault(func(o sock.FaultOp, fd int) syscall.Errno {
		if o == op && left.Add(-1) >= 0 {
			hits.Add(1)
			return errno
		}
		return 0
	})
	t.Cleanup(restore)
	return &hits
}

// TestFaultRecv: an injected ENOMEM completes a receive with it and
// consumes nothing; an injected EINTR is retried and never seen.
func TestFaultRecv(t *testing.T) { backendtest.Run(t, testFaultRecv) }

func testFaultRecv(t *testing.T) {
	skipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		writeAll(t, peer, []byte("kept"))
		waitReadable(t, fd)
		hits := failOnce(t, sock.FaultRead, unix.ENOMEM)
		be.Recv(tagA, make([]byte, 64))
		if r := waitOne(t, be); r.Op != poller.OpRecv || r.Err != unix.ENOMEM || r.N != 0 {
			t.Fatalf("receive with ENOMEM injected = %v, want ENOMEM, N 0", r)
		}
		if hits.Load() != 1 {
			t.Fatalf("%d failures injected, want 1", hits.Load())
		}
		hits = failOnce(t, sock.FaultRead, unix.EINTR)
		be.Recv(tagA, make([]byte, 64))
		wantRecv(t, waitOne(t, be), tagA, "kept")
		if hits.Load() != 1 {
			t.Fatalf("%d failures injected, want 1", hits.Load())
		}
	})
}

// TestFaultSend: an injected ENOBUFS completes a send with it, having
// written nothing; an injected EINTR is retried.
func TestFaultSend(t *testing.T) { backendtest.Run(t, testFaultSend) }

func testFaultSend(t *testing.T) {
	skipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	forKinds(t, func(t *testing.T, kind string) {
		fd, peer := streamPair(t, kind)
		be := open(t, nil)
		if err := be.Add(fd, tagA, true); err != nil {
			t.Fatal(err)
		}
		failOnce(t, sock.FaultWrite, unix.ENOBUFS)
		be.Send(tagA, [][]byte{[]byte("lost")})
		if r := waitOne(t, be); r.Op != poller.OpSend || r.Err != unix.ENOBUFS || r.N != 0 {
			t.Fatalf("send with ENOBUFS injected = %v, want ENOBUFS, N 0", r)
		}
		failOnce(t, sock.FaultWrite, unix.EINTR)
		be.Send(tagA, [][]byte{[]byte("se"), []byte("nt")})
		if r := waitOne(t, be); r.Op != poller.OpSend || r.Err != 0 || r.N != 4 {
			t.Fatalf("send with EINTR injected = %v, want N 4", r)
		}
		if got := readFull(t, peer, 4); string(got) != "sent" {
			t.Fatalf("peer read %q, want %q (nothing of the failed send)", got, "sent")
		}
	})
}

// TestFaultAccept: an injected EMFILE completes an accept with it and
// leaves the connection queued for the next accept.
func TestFaultAccept(t *testing.T) { backendtest.Run(t, testFaultAccept) }

func testFaultAccept(t *testing.T) {
	skipOnNet(t, "package net makes the system calls: no fault hook of gale's to inject into")
	checkFDs(t)
	lfd, addr := listener(t)
	be := open(t, nil)
	if err := be.Add(lfd, tagA, true); err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", tcpAddr(addr))
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer c.Close()
	failOnce(t, sock.FaultAccept, unix.EMFILE)
	be.Accept(tagA)
	if r := waitOne(t, be); r.Op != poller.OpAccept || r.Err != unix.EMFILE {
		t.Fatalf("accept with EMFILE injected = %v, want EMFILE", r)
	}
	be.Accept(tagA)
	r := waitOne(t, be)
	if r.Op != poller.OpAccept || r.Err != 0 {
		t.Fatalf("accept after the failure = %v, want the queued connection", r)
	}
	defer unix.Close(r.N)
	sa, err := unix.Getpeername(r.N)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sa.(*unix.SockaddrInet4).Port, c.LocalAddr().(*net.TCPAddr).Port; got != want {
		t.Errorf("accepted peer port %d, want %d", got, want)
	}
}
