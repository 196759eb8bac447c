package poller_test

import (
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/windows"
)

// Helpers of the Windows tests (main_test.go's are Unix ones).

// waitLimit bounds every wait of these tests; reaching it is a failure.
const waitLimit = 10 * time.Second

var (
	tagA = poller.MakeTag(1, 1)
	tagB = poller.MakeTag(2, 1)
)

// open returns a backend closed by t's cleanup.
func open(t *testing.T, p poller.Provider) poller.Backend {
	t.Helper()
	be, err := poller.Open(p)
	if err != nil {
		t.Fatalf("poller.Open: %v", err)
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
	From  net.Addr
}

func (r result) String() string {
	return fmt.Sprintf("{tag %#x op %d N %d err %v buf %.40q id %d}", uint64(r.Tag), r.Op, r.N, r.Err, r.Buf, r.BufID)
}

func record(dst *[]result) func(*poller.Completion) {
	return func(c *poller.Completion) {
		*dst = append(*dst, result{Tag: c.Tag, Op: c.Op, N: c.N, Err: c.Err, Buf: append([]byte(nil), c.Buf...),
			BufID: c.BufID, Peer: c.Peer, From: c.From})
	}
}

// waitN runs Wait until it has delivered at least n completions.
func waitN(t *testing.T, be poller.Backend, n int) []result {
	t.Helper()
	var rs []result
	deadline := time.Now().Add(waitLimit)
	for len(rs) < n {
		if time.Now().After(deadline) {
			t.Fatalf("got completions %v within %v, want %d", rs, waitLimit, n)
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

// waitFor runs one Wait of at most d and returns what it delivered.
func waitFor(t *testing.T, be poller.Backend, d time.Duration) []result {
	t.Helper()
	var rs []result
	if err := be.Wait(d, record(&rs)); err != nil {
		t.Fatalf("Wait: %v", err)
	}
	return rs
}

// origins are where the tests' sockets come from: made by Winsock
// (sock.ListenTCP and accept), which the IOCP backend's port takes, or
// by package net (DupConn), which the Go runtime's port has, so that the
// IOCP backend serves them through its net backend.
var origins = []string{"own", "net"}

// forOrigins runs f per origin.
func forOrigins(t *testing.T, f func(t *testing.T, origin string)) {
	for _, o := range origins {
		t.Run(o, func(t *testing.T) { f(t, o) })
	}
}

// listen returns a listening socket of origin on 127.0.0.1 and its
// address, closed by t's cleanup.
func listen(t *testing.T, origin string) (int, string) {
	t.Helper()
	if origin == "own" {
		fd, a, err := sock.ListenTCP("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("ListenTCP: %v", err)
		}
		t.Cleanup(func() { sock.Close(fd) })
		return fd, a.String()
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	fd, err := sock.DupConn(ln.(syscall.Conn))
	if err != nil {
		t.Fatalf("DupConn: %v", err)
	}
	t.Cleanup(func() {
		sock.Close(fd)
		ln.Close()
	})
	return fd, ln.Addr().String()
}

// pair returns a connected non-blocking socket of origin for the backend
// and its peer, both closed by t's cleanup.
func pair(t *testing.T, origin string) (int, net.Conn) {
	t.Helper()
	if origin == "net" {
		return netPair(t)
	}
	lfd, a := listen(t, "own")
	peer, err := net.Dial("tcp", a)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { peer.Close() })
	if err := sock.Poll(lfd, sock.PollIn, int(waitLimit/time.Millisecond)); err != nil {
		t.Fatalf("poll: %v", err)
	}
	fd, _, _, err := sock.AcceptPeer(lfd, nil)
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	t.Cleanup(func() { sock.Close(fd) })
	return fd, peer
}

// netPair is pair's "net": the backend gets a duplicate of a dialed
// package net connection.
func netPair(t *testing.T) (int, net.Conn) {
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
	peer, err := ln.Accept()
	if err != nil {
		t.Fatalf("accept: %v", err)
	}
	fd, err := sock.DupConn(c.(syscall.Conn))
	c.Close()
	if err != nil {
		t.Fatalf("DupConn: %v", err)
	}
	t.Cleanup(func() {
		sock.Close(fd)
		peer.Close()
	})
	return fd, peer
}

// add adds fd under tag to be, failing t on an error.
func add(t *testing.T, be poller.Backend, fd int, tag poller.Tag, stream bool) {
	t.Helper()
	if err := be.Add(fd, tag, stream); err != nil {
		t.Fatalf("Add: %v", err)
	}
}

// writeAll writes p to peer, bounded.
func writeAll(t *testing.T, peer net.Conn, p []byte) {
	t.Helper()
	peer.SetWriteDeadline(time.Now().Add(waitLimit))
	if _, err := peer.Write(p); err != nil {
		t.Fatalf("peer write: %v", err)
	}
}

// pattern returns n bytes that differ from their neighbours' offsets.
func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*7 + i>>8 + i>>16)
	}
	return p
}

// readFD reads from non-blocking socket fd until n bytes came or the
// socket stays empty for quiet.
func readFD(t *testing.T, fd, n int, quiet time.Duration) []byte {
	t.Helper()
	var got []byte
	buf := make([]byte, 64<<10)
	last := time.Now()
	for len(got) < n && time.Since(last) < quiet {
		k, en := sock.Read(fd, buf)
		switch {
		case k > 0:
			got, last = append(got, buf[:k]...), time.Now()
		case en == syscall.EAGAIN:
			time.Sleep(time.Millisecond)
		default:
			return got
		}
	}
	return got
}

// spaceProvider lends one 64 KiB buffer, id 7, to every nil-buffer
// receive.
type spaceProvider struct{ buf []byte }

func newSpace() *spaceProvider { return &spaceProvider{buf: make([]byte, 64<<10)} }

func (p *spaceProvider) Provide() ([]byte, int) { return p.buf, 7 }
func (p *spaceProvider) Commit(id, n int)       {}

// noSpace has no space to lend.
type noSpace struct{}

func (noSpace) Provide() ([]byte, int) { return nil, 0 }
func (noSpace) Commit(int, int)        {}

// handles returns the process's open handle count (GetProcessHandleCount).
func handles(t *testing.T) int {
	t.Helper()
	var n uint32
	proc := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetProcessHandleCount")
	if r, _, err := proc.Call(uintptr(windows.CurrentProcess()), uintptr(unsafe.Pointer(&n))); r == 0 {
		t.Skipf("GetProcessHandleCount: %v", err)
	}
	return int(n)
}

// onIOCP reports whether the test runs on the IOCP backend.
func onIOCP() bool { return !backendtest.OnNet() }
