//go:build linux

package poller_test

import (
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// removeCase is one kind of operation for TestURingRemoveUnsubmitted.
type removeCase struct {
	name  string
	prov  poller.Provider
	zc    bool // sends are zero-copy
	parks bool // the operation waits in the kernel (a receive with nothing to read)
	// start adds a socket under tagA and starts the operation on it. The
	// check it returns runs after Remove and a Wait, and fails t if any
	// of the operation reached the kernel.
	start func(t *testing.T, be poller.Backend) (check func())
}

var removeCases = []removeCase{
	{name: "recv", parks: true, start: startRecv},
	{name: "multishot recv", prov: spaceProvider{}, parks: true, start: startRecvProvided},
	{name: "one-shot recv", prov: copyProvider{}, parks: true, start: startRecvProvided},
	{name: "accept", parks: true, start: startAccept},
	{name: "recvfrom poll", parks: true, start: startRecvFrom},
	{name: "send", start: startSend},
	{name: "zero-copy send", zc: true, start: startSend},
}

// TestURingRemoveUnsubmitted: Remove turns every entry of the tag that
// the kernel has not consumed (prepared, published but refused, or in
// the backlog) into a no-op, so the descriptor the caller closes next is
// named by no entry still to be submitted, and Remove makes no system
// call; an operation already in the kernel is cancelled, also without
// one. Nothing of the operation happens, no orphan stays, and descriptor
// 0 stays open (a no-op's result is 0: it is no accepted descriptor).
func TestURingRemoveUnsubmitted(t *testing.T) {
	for _, c := range removeCases {
		for _, where := range []string{"queued", "refused", "backlog", "in flight"} {
			t.Run(c.name+"/"+where, func(t *testing.T) {
				if where == "in flight" && !c.parks {
					t.Skip("the operation completes at once in the kernel")
				}
				testRemoveUnsubmitted(t, c, where)
			})
		}
	}
}

func testRemoveUnsubmitted(t *testing.T, c removeCase, where string) {
	checkFDs(t)
	_, fd0Err := unix.FcntlInt(0, unix.F_GETFD, 0) // whether descriptor 0 is open
	be := openSmallURing(t, c.prov)
	if c.zc && !be.(poller.ZeroCopier).SetZeroCopy(1) {
		t.Skip("this kernel has no IORING_OP_SEND_ZC")
	}
	spy := spyEnter(t)
	fill := 0
	if where == "backlog" {
		fill = smallRing - 1 // with the wake-up's read, the ring is full
		fillRing(t, be, fill)
	}
	check := c.start(t, be)
	switch where {
	case "refused":
		spy.refuse = unix.EBUSY
		wantNothing(t, be)
		spy.refuse = 0
	case "in flight":
		wantNothing(t, be)
	}
	calls := spy.calls
	if err := be.Remove(tagA); err != nil {
		t.Fatal(err)
	}
	if n := spy.calls - calls; n != 0 {
		t.Errorf("Remove made %d io_uring_enter calls, want none", n)
	}
	wantNothing(t, be)
	check()
	waitOutstanding(t, be, fill)
	if _, err := unix.FcntlInt(0, unix.F_GETFD, 0); fd0Err == nil && err != nil {
		t.Errorf("descriptor 0 was closed: %v", err)
	}
}

// wantNothing runs a Wait(0), which must deliver nothing.
func wantNothing(t *testing.T, be poller.Backend) {
	t.Helper()
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
}

// fillRing starts n receives that wait, on sockets of their own.
func fillRing(t *testing.T, be poller.Backend, n int) {
	t.Helper()
	for i := range n {
		tag := poller.MakeTag(uint32(100+i), 1)
		if err := be.Add(socketpair(t)[0], tag, true); err != nil {
			t.Fatal(err)
		}
		be.Recv(tag, make([]byte, 8))
	}
}

// waitOutstanding waits until the backend has ops operations in flight
// and no orphan.
func waitOutstanding(t *testing.T, be poller.Backend, ops int) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		n, orphans := poller.Outstanding(be)
		if n == ops && orphans == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d operations in flight and %d orphans after %v, want %d and none", n, orphans, waitLimit, ops)
		}
		wantNothing(t, be)
	}
}

func add(t *testing.T, be poller.Backend, fd int, stream bool) {
	t.Helper()
	if err := be.Add(fd, tagA, stream); err != nil {
		t.Fatal(err)
	}
}

// startRecv receives into a buffer, and startRecvProvided into the
// provider's; the data sent after Remove must stay in the socket, and the
// buffer untouched.
func startRecv(t *testing.T, be poller.Backend) func() { return recvInto(t, be, make([]byte, 16)) }

func startRecvProvided(t *testing.T, be poller.Backend) func() { return recvInto(t, be, nil) }

func recvInto(t *testing.T, be poller.Backend, buf []byte) func() {
	p := socketpair(t)
	add(t, be, p[0], true)
	be.Recv(tagA, buf)
	return func() {
		unix.Write(p[1], []byte("data"))
		poll0(t, be)
		wantUnread(t, p[0], "data")
		if buf != nil && string(buf) != string(make([]byte, 16)) {
			t.Errorf("the removed receive's buffer holds %q, want it untouched", buf)
		}
	}
}

// wantUnread reads fd without waiting and fails t unless it holds want.
func wantUnread(t *testing.T, fd int, want string) {
	t.Helper()
	got := make([]byte, 64)
	n, _, err := unix.Recvfrom(fd, got, unix.MSG_DONTWAIT)
	if string(got[:max(n, 0)]) != want {
		t.Errorf("read after Remove = %q, %v, want %q still in the socket", got[:max(n, 0)], err, want)
	}
}

// startAccept accepts on a listener; the connection made after Remove
// must stay queued for the next accept.
func startAccept(t *testing.T, be poller.Backend) func() {
	lfd, addr := listener(t)
	add(t, be, lfd, true)
	be.Accept(tagA)
	return func() {
		c, err := net.Dial("tcp", tcpAddr(addr))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		poll0(t, be)
		nfd, _, err := unix.Accept4(lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			t.Errorf("accept after Remove = %v, want the connection made after it", err)
			return
		}
		unix.Close(nfd)
	}
}

// startRecvFrom waits for a datagram (a poll, then the call); the
// datagram sent after Remove must stay in the socket.
func startRecvFrom(t *testing.T, be poller.Backend) func() {
	a := rawSocket(t, unix.SOCK_DGRAM)
	aAddr := bound(t, a)
	b := rawSocket(t, unix.SOCK_DGRAM)
	add(t, be, a, false)
	be.RecvFrom(tagA, make([]byte, 16))
	return func() {
		if err := unix.Sendto(b, []byte("data"), 0, aAddr); err != nil {
			t.Fatal(err)
		}
		poll0(t, be)
		wantUnread(t, a, "data")
	}
}

// startSend sends on a dialed TCP socket (zero-copy where the backend is
// set so); after Remove the peer must read only what is written
// directly, and the connection must not have been reset.
func startSend(t *testing.T, be poller.Backend) func() {
	fd, peer := streamPair(t, "tcp")
	add(t, be, fd, true)
	be.Send(tagA, [][]byte{[]byte("stale")})
	return func() {
		if _, err := unix.Write(fd, []byte("ok")); err != nil {
			t.Fatalf("write after Remove: %v", err)
		}
		if got := peerReadToEOF(t, fd, peer); string(got) != "ok" {
			t.Errorf("peer read %q, want %q: nothing of the removed send", got, "ok")
		}
	}
}
