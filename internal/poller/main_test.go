//go:build linux

package poller_test

import (
	"fmt"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"io"
	"net"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"golang.org/x/sys/unix"
)

// TestMain fails the run if the tests leak goroutines or descriptors.
func TestMain(m *testing.M) { leaktest.Main(m) }

// countFDs returns the number of open descriptors, or -1 where
// /proc/self/fd does not exist.
func countFDs() int {
	fds, ok := leaktest.OpenFDs()
	if !ok {
		return -1
	}
	return len(fds)
}

// checkFDs makes t fail if it ends with more descriptors open than it
// started with. Call it first, so that its cleanup runs last.
func checkFDs(t *testing.T) {
	t.Helper()
	before := countFDs()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for {
			after := countFDs()
			if after <= before {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("%d descriptors open after the test, want %d", after, before)
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	})
}

// waitLimit bounds every wait of these tests; reaching it is a failure.
const waitLimit = 10 * time.Second

// open returns a backend closed by t's cleanup.
func open(t *testing.T, p poller.Provider) poller.Backend {
	t.Helper()
	be, err := poller.Open(p)
	if err != nil {
		t.Fatalf("poller.Open: %v", err)
	}
	if zc, ok := be.(poller.ZeroCopier); ok && zeroCopyMin > 0 {
		zc.SetZeroCopy(zeroCopyMin)
	}
	t.Cleanup(func() {
		if err := be.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return be
}

// result is a copy of a Completion that outlives the callback.
type result struct {
	Tag   poller.Tag
	Op    poller.Op
	N     int
	Err   syscall.Errno
	Buf   []byte
	BufID int
	Peer  netip.AddrPort
	From  unix.Sockaddr
	bufAt *byte // &Buf[0] of the original, if any
}

func (r result) String() string {
	return fmt.Sprintf("{tag %#x op %d N %d err %v buf %q id %d}", uint64(r.Tag), r.Op, r.N, r.Err, r.Buf, r.BufID)
}

func record(dst *[]result) func(*poller.Completion) {
	return func(c *poller.Completion) {
		r := result{Tag: c.Tag, Op: c.Op, N: c.N, Err: c.Err, Buf: append([]byte(nil), c.Buf...), BufID: c.BufID, Peer: c.Peer, From: c.From}
		if cap(c.Buf) > 0 {
			r.bufAt = &c.Buf[:1][0]
		}
		*dst = append(*dst, r)
	}
}

// poll0 runs one Wait with timeout 0 and returns its completions.
func poll0(t *testing.T, be poller.Backend) []result {
	t.Helper()
	var rs []result
	if onNet() {
		return settle(t, be)
	}
	if err := be.Wait(0, record(&rs)); err != nil {
		t.Fatalf("Wait(0): %v", err)
	}
	return rs
}

// onNet reports whether the tests run on the net backend, whose
// operations complete on worker goroutines: none completes at its
// submission, so what the other backends deliver with Wait(0), it
// delivers a moment later.
func onNet() bool {
	k, _ := poller.Choose(poller.Auto)
	return k == poller.Net
}

// netSettle is how long the net backend's workers get to post what is
// ready before settle takes the silence as "nothing more".
const netSettle = 50 * time.Millisecond

// settle is poll0 on the net backend: it waits until a Wait of
// netSettle delivers nothing new.
func settle(t *testing.T, be poller.Backend) []result {
	t.Helper()
	var rs []result
	for {
		n := len(rs)
		if err := be.Wait(netSettle, record(&rs)); err != nil {
			t.Fatalf("Wait: %v", err)
		}
		if len(rs) == n {
			return rs
		}
	}
}

// skipOnNet skips a test of what the net backend does not have: system
// calls of gale's own to inject faults into, descriptors of its own,
// allocation-free operations.
func skipOnNet(t *testing.T, why string) {
	t.Helper()
	if onNet() {
		t.Skip("net backend: " + why)
	}
}

// waitN runs Wait until it has delivered at least n completions, failing
// after waitLimit.
func waitN(t *testing.T, be poller.Backend, n int) []result {
	t.Helper()
	return waitNWithin(t, be, n, waitLimit)
}

func waitNWithin(t *testing.T, be poller.Backend, n int, limit time.Duration) []result {
	t.Helper()
	var rs []result
	deadline := time.Now().Add(limit)
	for len(rs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got %d completions %v within %v, want %d", len(rs), rs, limit, n)
		}
		if err := be.Wait(50*time.Millisecond, record(&rs)); err != nil {
			t.Fatalf("Wait: %v", err)
		}
	}
	return rs
}

// waitOne waits for exactly one completion.
func waitOne(t *testing.T, be poller.Backend) result {
	t.Helper()
	rs := waitN(t, be, 1)
	if len(rs) != 1 {
		t.Fatalf("got completions %v, want one", rs)
	}
	return rs[0]
}

// kinds are the stream socket types every stream test runs on.
var kinds = []string{"unix", "tcp"}

// streamPair returns a non-blocking, close-on-exec stream socket for the
// backend and its peer as a net.Conn. Both are closed by t's cleanup.
func streamPair(t *testing.T, kind string) (fd int, peer net.Conn) {
	t.Helper()
	switch kind {
	case "unix":
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("socketpair: %v", err)
		}
		f := os.NewFile(uintptr(fds[1]), "peer")
		peer, err = net.FileConn(f)
		f.Close()
		if err != nil {
			unix.Close(fds[0])
			t.Fatalf("FileConn: %v", err)
		}
		fd = fds[0]
	case "tcp":
		return tcpStreamPair(t, false)
	default:
		t.Fatalf("unknown kind %q", kind)
	}
	t.Cleanup(func() {
		unix.Close(fd)
		peer.Close()
	})
	return fd, peer
}

// tcpStreamPair is streamPair's "tcp": the backend gets the dialed socket,
// or the accepted one if accepted is set.
func tcpStreamPair(t *testing.T, accepted bool) (fd int, peer net.Conn) {
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
	a, err := ln.Accept()
	if err != nil {
		c.Close()
		t.Fatalf("accept: %v", err)
	}
	if accepted {
		c, a = a, c
	}
	peer = a
	fd, err = sock.DupConn(c.(*net.TCPConn))
	c.Close()
	if err != nil {
		peer.Close()
		t.Fatalf("DupConn: %v", err)
	}
	t.Cleanup(func() {
		unix.Close(fd)
		peer.Close()
	})
	return fd, peer
}

// shrinkBuffers makes the kernel buffers between fd and peer small, so a
// send of a few MiB cannot fit without the peer reading.
func shrinkBuffers(t *testing.T, fd int, peer net.Conn) {
	t.Helper()
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 64<<10); err != nil {
		t.Fatalf("SO_SNDBUF: %v", err)
	}
	withPeerFD(t, peer, func(pfd int) {
		if err := unix.SetsockoptInt(pfd, unix.SOL_SOCKET, unix.SO_RCVBUF, 64<<10); err != nil {
			t.Errorf("SO_RCVBUF: %v", err)
		}
	})
}

// withPeerFD runs f with the peer's descriptor.
func withPeerFD(t *testing.T, peer net.Conn, f func(fd int)) {
	t.Helper()
	rc, err := peer.(syscall.Conn).SyscallConn()
	if err != nil {
		t.Fatalf("SyscallConn: %v", err)
	}
	if err := rc.Control(func(fd uintptr) { f(int(fd)) }); err != nil {
		t.Fatalf("Control: %v", err)
	}
}

// peerRecvNow reads what the peer has queued without blocking.
func peerRecvNow(t *testing.T, peer net.Conn, p []byte) (int, error) {
	t.Helper()
	var n int
	var err error
	withPeerFD(t, peer, func(fd int) {
		n, _, err = unix.Recvfrom(fd, p, unix.MSG_DONTWAIT)
	})
	return n, err
}

// waitReadable blocks, bounded, until fd has data or an error pending.
func waitReadable(t *testing.T, fd int) {
	t.Helper()
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(pfd, int(waitLimit/time.Millisecond))
		if err == unix.EINTR {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("poll(%d) = %d, %v: not readable within %v", fd, n, err, waitLimit)
		}
		return
	}
}

func writeAll(t *testing.T, peer net.Conn, p []byte) {
	t.Helper()
	peer.SetWriteDeadline(time.Now().Add(waitLimit))
	if _, err := peer.Write(p); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

func readFull(t *testing.T, peer net.Conn, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	peer.SetReadDeadline(time.Now().Add(waitLimit))
	if _, err := io.ReadFull(peer, p); err != nil {
		t.Fatalf("peer read of %d bytes: %v", n, err)
	}
	return p
}

// pattern returns n bytes that differ from their neighbours' offsets, so
// reordering or loss shows.
func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i>>8 + i>>16)
	}
	return p
}
