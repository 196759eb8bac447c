//go:build linux

package poller_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"testing"

	"github.com/galeio/gale/internal/poller"
	"golang.org/x/sys/unix"
)

// rawSocket returns a non-blocking, close-on-exec IPv4 socket closed by
// t's cleanup.
func rawSocket(t *testing.T, typ int) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

var loopback4 = [4]byte{127, 0, 0, 1}

// bound binds fd to an ephemeral loopback port and returns its address.
func bound(t *testing.T, fd int) *unix.SockaddrInet4 {
	t.Helper()
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: loopback4}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return sa.(*unix.SockaddrInet4)
}

func listener(t *testing.T) (fd int, addr *unix.SockaddrInet4) {
	t.Helper()
	fd = rawSocket(t, unix.SOCK_STREAM)
	addr = bound(t, fd)
	if err := unix.Listen(fd, 16); err != nil {
		t.Fatalf("listen: %v", err)
	}
	return fd, addr
}

func tcpAddr(sa *unix.SockaddrInet4) string {
	return (&net.TCPAddr{IP: net.IP(sa.Addr[:]), Port: sa.Port}).String()
}

// TestAccept: an accept parks until a client connects, then completes with
// the new descriptor (non-blocking, close-on-exec) and the peer address.
func TestAccept(t *testing.T) { backendtest.Run(t, testAccept) }

func testAccept(t *testing.T) {
	checkFDs(t)
	lfd, addr := listener(t)
	be := open(t, nil)
	if err := be.Add(lfd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Accept(tagA)
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	var clients []net.Conn
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	dial := func() *net.TCPAddr {
		c, err := net.Dial("tcp", tcpAddr(addr))
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		clients = append(clients, c)
		return c.LocalAddr().(*net.TCPAddr)
	}
	wantAccept := func(r result, from *net.TCPAddr) {
		t.Helper()
		if r.Tag != tagA || r.Op != poller.OpAccept || r.Err != 0 || r.N < 0 {
			t.Fatalf("completion = %v, want an accepted descriptor", r)
		}
		nfd := r.N
		defer unix.Close(nfd)
		fdFlags, _ := unix.FcntlInt(uintptr(nfd), unix.F_GETFD, 0)
		flFlags, _ := unix.FcntlInt(uintptr(nfd), unix.F_GETFL, 0)
		if fdFlags&unix.FD_CLOEXEC == 0 || flFlags&unix.O_NONBLOCK == 0 {
			t.Errorf("accepted descriptor flags F_GETFD %#x F_GETFL %#x, want close-on-exec and non-blocking", fdFlags, flFlags)
		}
		peer, err := unix.Getpeername(nfd)
		if err != nil {
			t.Fatal(err)
		}
		if p := peer.(*unix.SockaddrInet4); p.Port != from.Port {
			t.Errorf("accepted peer port %d, want %d", p.Port, from.Port)
		}
		// The completion carries the peer: in Peer, or in From for a
		// backend that does not fill Peer.
		want := from.AddrPort()
		switch f := r.From.(type) {
		case nil:
			if r.Peer != want {
				t.Errorf("accepted Peer = %v, want %v", r.Peer, want)
			}
		case *unix.SockaddrInet4:
			if r.Peer.IsValid() || f.Port != from.Port || f.Addr != want.Addr().As4() {
				t.Errorf("accepted Peer, From = %v, %#v, want From %v only", r.Peer, f, want)
			}
		default:
			t.Errorf("accepted From = %#v, want nil or %v", r.From, want)
		}
	}

	from := dial()
	rs := waitN(t, be, 1)
	if len(rs) != 1 {
		t.Fatalf("completions %v, want one", rs)
	}
	wantAccept(rs[0], from)

	// Two connections queued: two accepts take them in turn.
	from1, from2 := dial(), dial()
	for _, from := range []*net.TCPAddr{from1, from2} {
		be.Accept(tagA)
		wantAccept(waitOne(t, be), from)
	}

	// A parked accept can be cancelled.
	be.Accept(tagA)
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	be.Cancel(tagA, poller.OpAccept)
	r := waitOne(t, be)
	if r.Op != poller.OpAccept || r.Err != unix.ECANCELED {
		t.Fatalf("cancelled accept = %v, want ECANCELED", r)
	}
}

// TestRecvFrom: datagrams with their source addresses, including an
// empty one.
func TestRecvFrom(t *testing.T) { backendtest.Run(t, testRecvFrom) }

func testRecvFrom(t *testing.T) {
	checkFDs(t)
	a := rawSocket(t, unix.SOCK_DGRAM)
	aAddr := bound(t, a)
	b := rawSocket(t, unix.SOCK_DGRAM)
	bAddr := bound(t, b)
	be := open(t, nil)
	if err := be.Add(a, tagA, false); err != nil {
		t.Fatal(err)
	}

	be.RecvFrom(tagA, make([]byte, 64))
	if rs := poll0(t, be); len(rs) != 0 {
		t.Fatalf("Wait(0) delivered %v, want nothing", rs)
	}
	for i, msg := range []string{"hi", "", "after"} {
		if i > 0 {
			be.RecvFrom(tagA, make([]byte, 64))
		}
		if err := unix.Sendto(b, []byte(msg), 0, aAddr); err != nil {
			t.Fatal(err)
		}
		rs := waitN(t, be, 1)
		r := rs[0]
		if len(rs) != 1 || r.Tag != tagA || r.Op != poller.OpRecvFrom || r.Err != 0 || r.N != len(msg) || string(r.Buf) != msg {
			t.Fatalf("completions %v, want one RecvFrom of %q", rs, msg)
		}
		// The source address comes with the datagram.
		if f, ok := r.From.(*unix.SockaddrInet4); !ok || f.Port != bAddr.Port || f.Addr != bAddr.Addr {
			t.Fatalf("From = %#v, want %v:%d", r.From, bAddr.Addr, bAddr.Port)
		}
	}

	// A parked RecvFrom can be cancelled.
	be.RecvFrom(tagA, make([]byte, 64))
	be.Cancel(tagA, poller.OpRecvFrom)
	r := waitOne(t, be)
	if r.Op != poller.OpRecvFrom || r.Err != unix.ECANCELED || r.N != 0 {
		t.Fatalf("cancelled RecvFrom = %v, want ECANCELED, N 0", r)
	}
}

// TestSideConflicts: one operation per side may be in flight; a receive
// and a send side operation may run together.
func TestSideConflicts(t *testing.T) { backendtest.Run(t, testSideConflicts) }

func testSideConflicts(t *testing.T) {
	checkFDs(t)
	fd, _ := streamPair(t, "unix")
	be := open(t, nil)
	if err := be.Add(fd, tagA, true); err != nil {
		t.Fatal(err)
	}
	be.Recv(tagA, make([]byte, 8))
	for name, f := range map[string]func(){
		"Accept with a Recv in flight":   func() { be.Accept(tagA) },
		"RecvFrom with a Recv in flight": func() { be.RecvFrom(tagA, make([]byte, 8)) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s did not panic", name)
				}
			}()
			f()
		}()
	}
	be.Send(tagA, [][]byte{[]byte("x")}) // the send side is free
	r := waitOne(t, be)
	if r.Op != poller.OpSend || r.Err != 0 || r.N != 1 {
		t.Fatalf("send beside a parked receive = %v, want N 1", r)
	}
}
