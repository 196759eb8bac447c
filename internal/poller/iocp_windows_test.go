package poller_test

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/sock"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"golang.org/x/sys/windows"
)

// The contract on Windows, per backend (IOCP and net) and per origin of
// the socket (one the IOCP port takes, or one package net made, which
// the IOCP backend serves through its net backend).

// TestWinPortTakes: the IOCP port serves the sockets gale made (Winsock
// listeners and what they accept) and hands those package net made,
// which the Go runtime's port already has, to its net backend.
// Under Wine 8, as on Windows, associating a duplicate of a package net
// socket fails with ERROR_INVALID_PARAMETER: a duplicate shares its
// original's port.
func TestWinPortTakes(t *testing.T) {
	if err := poller.Available(poller.IOCP); err != nil {
		t.Skip(err)
	}
	t.Setenv(poller.EnvBackend, "iocp")
	be := open(t, nil)
	own, _ := pair(t, "own")
	dup, _ := pair(t, "net")
	add(t, be, own, tagA, true)
	add(t, be, dup, tagB, true)
	if !poller.Native(be, tagA) {
		t.Error("a socket gale made is not served by the port")
	}
	if poller.Native(be, tagB) {
		t.Error("a duplicate of a package net socket is served by the port, want by the net backend")
	}
}

func TestWinRecv(t *testing.T) { backendtest.Run(t, func(t *testing.T) { forOrigins(t, testWinRecv) }) }

func testWinRecv(t *testing.T, origin string) {
	fd, peer := pair(t, origin)
	space := newSpace()
	be := open(t, space)
	add(t, be, fd, tagA, true)

	buf := make([]byte, 16)
	be.Recv(tagA, buf)
	if rs := waitFor(t, be, 20*time.Millisecond); len(rs) != 0 {
		t.Fatalf("completions %v before any data", rs)
	}
	writeAll(t, peer, []byte("hello"))
	if r := waitOne(t, be); r.Op != poller.OpRecv || r.Err != 0 || string(r.Buf) != "hello" || r.BufID != -1 {
		t.Fatalf("Recv(buf) = %v, want hello", r)
	}
	writeAll(t, peer, []byte("world"))
	be.Recv(tagA, nil)
	if r := waitOne(t, be); r.Err != 0 || string(r.Buf) != "world" || r.BufID != 7 {
		t.Fatalf("Recv(nil) = %v, want world in space 7", r)
	}
	peer.Close()
	be.Recv(tagA, nil)
	if r := waitOne(t, be); r.Err != 0 || r.N != 0 {
		t.Fatalf("Recv(nil) after the peer closed = %v, want the end (N 0, no error)", r)
	}
}

// TestWinRecvNoSpace: a nil-buffer receive whose Provider has no space
// ends with NoSpace, and the data stays in the socket.
func TestWinRecvNoSpace(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		if backendtest.OnNet() {
			t.Skip("net backend: it reads into scratch and keeps what finds no space")
		}
		fd, peer := pair(t, "own")
		be := open(t, noSpace{})
		add(t, be, fd, tagA, true)
		writeAll(t, peer, []byte("kept"))
		be.Recv(tagA, nil)
		if r := waitOne(t, be); r.Err != poller.NoSpace {
			t.Fatalf("Recv(nil) with no space = %v, want NoSpace", r)
		}
		if got := readFD(t, fd, 4, time.Second); string(got) != "kept" {
			t.Fatalf("the socket holds %q, want kept", got)
		}
	})
}

func TestWinSend(t *testing.T) { backendtest.Run(t, func(t *testing.T) { forOrigins(t, testWinSend) }) }

func testWinSend(t *testing.T, origin string) {
	for _, c := range []struct {
		name       string
		size, bufs int
	}{{"small", 5, 1}, {"many buffers", 40 << 10, 40}, {"4MiB", 4 << 20, 3}} {
		t.Run(c.name, func(t *testing.T) {
			fd, peer := pair(t, origin)
			be := open(t, nil)
			add(t, be, fd, tagA, true)
			sent := pattern(c.size)
			var bufs [][]byte
			for i := range c.bufs {
				bufs = append(bufs, sent[i*c.size/c.bufs:(i+1)*c.size/c.bufs])
			}
			got := make(chan []byte, 1)
			go func() {
				peer.SetReadDeadline(time.Now().Add(waitLimit))
				b := make([]byte, c.size)
				n, _ := ioReadFull(peer, b)
				got <- b[:n]
			}()
			be.Send(tagA, bufs)
			if r := waitOne(t, be); r.Op != poller.OpSend || r.Err != 0 || r.N != c.size {
				t.Fatalf("Send = %v, want N %d", r, c.size)
			}
			if b := <-got; !bytes.Equal(b, sent) {
				t.Fatalf("the peer read %d bytes, not the %d sent in order", len(b), c.size)
			}
		})
	}
}

func ioReadFull(c net.Conn, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		k, err := c.Read(b[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// TestWinSendEmpty: a send of no bytes completes at once.
func TestWinSendEmpty(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		fd, _ := pair(t, "own")
		be := open(t, nil)
		add(t, be, fd, tagA, true)
		be.Send(tagA, [][]byte{nil, {}})
		if r := waitOne(t, be); r.Op != poller.OpSend || r.Err != 0 || r.N != 0 {
			t.Fatalf("empty Send = %v, want N 0", r)
		}
	})
}

func TestWinAccept(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) { forOrigins(t, testWinAccept) })
}

func testWinAccept(t *testing.T, origin string) {
	lfd, a := listen(t, origin)
	be := open(t, newSpace())
	add(t, be, lfd, tagA, true)
	be.Accept(tagA)
	c, err := net.Dial("tcp", a)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := waitOne(t, be)
	if r.Op != poller.OpAccept || r.Err != 0 || r.N < 0 {
		t.Fatalf("Accept = %v, want a socket", r)
	}
	defer sock.Close(r.N)
	// Unmap: the net backend reports the peer package net's way, as an
	// IPv4 address in 16 bytes (sock's tcpAddr), where AcceptEx gives
	// AF_INET's.
	want := c.LocalAddr().(*net.TCPAddr).AddrPort()
	peer := netip.AddrPortFrom(r.Peer.Addr().Unmap(), r.Peer.Port())
	if peer != want && (r.From == nil || r.From.String() != want.String()) {
		t.Errorf("Accept's peer = %v / %v, want %v", r.Peer, r.From, want)
	}
	// The accepted socket is one to serve: a receive on it works.
	add(t, be, r.N, tagB, true)
	c.Write([]byte("hi"))
	be.Recv(tagB, nil)
	if r := waitOne(t, be); r.Tag != tagB || string(r.Buf) != "hi" {
		t.Fatalf("Recv on the accepted socket = %v, want hi", r)
	}
	if onIOCP() && !poller.Native(be, tagB) {
		t.Error("the accepted socket is not served by the port")
	}
}

// TestWinCancelRecv: a receive with nothing to receive ends with
// ECANCELED once cancelled, into a buffer or the Provider's.
func TestWinCancelRecv(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		forOrigins(t, func(t *testing.T, origin string) {
			fd, peer := pair(t, origin)
			be := open(t, newSpace())
			add(t, be, fd, tagA, true)
			for _, buf := range [][]byte{make([]byte, 8), nil} {
				be.Recv(tagA, buf)
				waitFor(t, be, 10*time.Millisecond)
				be.Cancel(tagA, poller.OpRecv)
				if r := waitOne(t, be); r.Op != poller.OpRecv || r.Err != syscall.ECANCELED || r.N != 0 {
					t.Fatalf("cancelled Recv(%d-byte buffer) = %v, want ECANCELED", len(buf), r)
				}
			}
			// The socket still serves.
			writeAll(t, peer, []byte("after"))
			be.Recv(tagA, nil)
			if r := waitOne(t, be); string(r.Buf) != "after" {
				t.Fatalf("Recv after the cancels = %v, want after", r)
			}
		})
	})
}

// TestWinCancelHandover: a receive submitted and cancelled at once, with
// data waiting, brings data or ECANCELED, and what it did not bring
// stays in the socket: no byte is lost when the owner removes the tag.
func TestWinCancelHandover(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		forOrigins(t, func(t *testing.T, origin string) {
			fd, peer := pair(t, origin)
			be := open(t, newSpace())
			add(t, be, fd, tagA, true)
			sent := pattern(200 << 10)
			go peer.Write(sent)
			time.Sleep(50 * time.Millisecond)
			be.Recv(tagA, nil)
			be.Cancel(tagA, poller.OpRecv)
			r := waitOne(t, be)
			if r.Op != poller.OpRecv || (r.Err != 0 && r.Err != syscall.ECANCELED) {
				t.Fatalf("the cancelled receive = %v, want data or ECANCELED", r)
			}
			if err := be.Remove(tagA); err != nil {
				t.Fatal(err)
			}
			got := append(r.Buf, readFD(t, fd, len(sent)-len(r.Buf), time.Second)...)
			if !bytes.Equal(got, sent) {
				t.Fatalf("the receive brought %d bytes and the socket %d more, want the %d sent in order", len(r.Buf), len(got)-len(r.Buf), len(sent))
			}
		})
	})
}

// TestWinCancelSend: a send the peer does not read ends with ECANCELED
// and the bytes it moved, which are exactly what the peer then reads.
func TestWinCancelSend(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		forOrigins(t, func(t *testing.T, origin string) {
			fd, peer := pair(t, origin)
			be := open(t, nil)
			add(t, be, fd, tagA, true)
			sent := pattern(32 << 20)
			be.Send(tagA, [][]byte{sent})
			if rs := waitFor(t, be, 200*time.Millisecond); len(rs) != 0 {
				t.Skipf("a %d-byte send completed with the peer not reading (%v): the socket took it all", len(sent), rs)
			}
			be.Cancel(tagA, poller.OpSend)
			r := waitOne(t, be)
			if r.Op != poller.OpSend || r.Err != syscall.ECANCELED || r.N >= len(sent) {
				t.Fatalf("cancelled Send = %v, want ECANCELED with fewer than %d bytes", r, len(sent))
			}
			be.Remove(tagA)
			sock.Shutdown(fd, sock.ShutWrite)
			peer.SetReadDeadline(time.Now().Add(waitLimit))
			b := make([]byte, len(sent))
			n, _ := ioReadFull(peer, b)
			if n != r.N || !bytes.Equal(b[:n], sent[:n]) {
				t.Fatalf("the peer read %d bytes, want the %d the cancelled send reported, in order", n, r.N)
			}
		})
	})
}

// TestWinRemoveInFlight: a receive in flight when its tag is removed
// never completes, and the backend serves on.
func TestWinRemoveInFlight(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		forOrigins(t, func(t *testing.T, origin string) {
			fd, peer := pair(t, origin)
			be := open(t, newSpace())
			add(t, be, fd, tagA, true)
			be.Recv(tagA, make([]byte, 8))
			be.Remove(tagA)
			writeAll(t, peer, []byte("late"))
			if rs := waitFor(t, be, 100*time.Millisecond); len(rs) != 0 {
				t.Fatalf("completions %v after Remove", rs)
			}
			fd2, peer2 := pair(t, origin)
			add(t, be, fd2, poller.MakeTag(1, 2), true) // tagA's slot, a new generation
			writeAll(t, peer2, []byte("new"))
			be.Recv(poller.MakeTag(1, 2), nil)
			if r := waitOne(t, be); r.Tag != poller.MakeTag(1, 2) || string(r.Buf) != "new" {
				t.Fatalf("Recv under the slot's new tag = %v, want new", r)
			}
		})
	})
}

// TestWinWake: Wake from another goroutine ends a Wait that would block
// for ever, and a Wake before Wait makes it return at once.
func TestWinWake(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		be := open(t, nil)
		be.Wake()
		start := time.Now()
		waitFor(t, be, waitLimit)
		if d := time.Since(start); d > waitLimit/2 {
			t.Fatalf("Wait after Wake took %v", d)
		}
		go func() {
			time.Sleep(20 * time.Millisecond)
			be.Wake()
		}()
		waitFor(t, be, -1)
	})
}

// TestWinWaitTimeout: a Wait with nothing to deliver returns after about
// its timeout.
func TestWinWaitTimeout(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		be := open(t, nil)
		start := time.Now()
		if rs := waitFor(t, be, 30*time.Millisecond); len(rs) != 0 {
			t.Fatalf("completions %v with nothing submitted", rs)
		}
		if d := time.Since(start); d < 25*time.Millisecond || d > 5*time.Second {
			t.Fatalf("Wait(30ms) returned after %v", d)
		}
	})
}

// TestWinCloseReleasesAccepts: Close closes the sockets of accepts that
// completed and were never delivered, and those made for accepts in
// flight.
func TestWinCloseReleasesAccepts(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		lfd, a := listen(t, "own")
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		lfd2, _ := listen(t, "own")
		time.Sleep(20 * time.Millisecond)
		before := handles(t)
		be, err := poller.Open(nil)
		if err != nil {
			t.Fatal(err)
		}
		add(t, be, lfd, tagA, true)
		add(t, be, lfd2, tagB, true)
		be.Accept(tagA) // the connection is queued: accepted, not delivered
		be.Accept(tagB) // nothing to accept: in flight
		time.Sleep(20 * time.Millisecond)
		be.Remove(tagA)
		be.Close()
		deadline := time.Now().Add(waitLimit)
		for handles(t) > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if after := handles(t); after > before {
			t.Errorf("%d handles open after Close, %d before: an accept's socket leaked", after, before)
		}
	})
}

// TestWinRecvFrom: a datagram socket made with Winsock receives with its
// source and sends.
func TestWinRecvFrom(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		if backendtest.OnNet() {
			t.Skip("net backend: sock's Windows view of a socket (winConn) has no datagram calls yet")
		}
		s, err := windows.WSASocket(windows.AF_INET, windows.SOCK_DGRAM, windows.IPPROTO_UDP, nil, 0, windows.WSA_FLAG_OVERLAPPED)
		if err != nil {
			t.Fatal(err)
		}
		defer windows.Closesocket(s)
		if err := windows.Bind(s, &windows.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		sa, _ := windows.Getsockname(s)
		port := sa.(*windows.SockaddrInet4).Port
		// The peer is a Winsock socket too: package net's UDP sockets
		// need WSAIoctl(SIO_UDP_CONNRESET), which Wine 8 lacks.
		peer, err := windows.Socket(windows.AF_INET, windows.SOCK_DGRAM, windows.IPPROTO_UDP)
		if err != nil {
			t.Fatal(err)
		}
		defer windows.Closesocket(peer)
		if err := windows.Bind(peer, &windows.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		psa, _ := windows.Getsockname(peer)
		be := open(t, nil)
		add(t, be, int(s), tagA, false)
		buf := make([]byte, 64)
		be.RecvFrom(tagA, buf)
		if err := windows.Sendto(peer, []byte("datagram"), 0, &windows.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: port}); err != nil {
			t.Fatal(err)
		}
		r := waitOne(t, be)
		if r.Op != poller.OpRecvFrom || r.Err != 0 || string(r.Buf) != "datagram" {
			t.Fatalf("RecvFrom = %v, want datagram", r)
		}
		want := fmt.Sprintf("127.0.0.1:%d", psa.(*windows.SockaddrInet4).Port)
		if r.From == nil || r.From.String() != want {
			t.Errorf("RecvFrom's source = %v, want %v", r.From, want)
		}
	})
}

// TestWinAcceptReset: a connection its peer reset before it was accepted
// ends an accept with a socket (accept(2)'s way, and the net backend's)
// or with ECONNABORTED (AcceptEx's: the connection is gone), never
// another error, and the next connection is accepted.
func TestWinAcceptReset(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		lfd, a := listen(t, "own")
		be := open(t, newSpace())
		add(t, be, lfd, tagA, true)
		c, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("x"))
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
		time.Sleep(50 * time.Millisecond)
		be.Accept(tagA)
		r := waitOne(t, be)
		switch {
		case r.Err == 0:
			sock.Close(r.N)
		case r.Err != syscall.ECONNABORTED:
			t.Fatalf("Accept of a reset connection = %v, want a socket or ECONNABORTED", r)
		}
		c2, err := net.Dial("tcp", a)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		be.Accept(tagA)
		if r := waitOne(t, be); r.Err != 0 {
			t.Fatalf("Accept after the reset one = %v, want a socket", r)
		} else {
			sock.Close(r.N)
		}
	})
}
