//go:build unix

package aio_test

import (
	"bytes"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/aio"
	"golang.org/x/sys/unix"
)

// TestDelegationClosesConn: the first request delegates the conn, which
// closes the caller's object; only its addresses stay useful.
func TestDelegationClosesConn(t *testing.T) { backendtest.Run(t, testDelegationClosesConn) }

func testDelegationClosesConn(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		laddr, raddr := c.LocalAddr().String(), c.RemoteAddr().String()
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		if err := w.Read("r", c, make([]byte, 8)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		if _, err := c.Write([]byte("x")); !isClosedErr(err) {
			t.Errorf("conn.Write after delegation = %v, want net.ErrClosed", err)
		}
		if _, err := c.Read(make([]byte, 1)); !isClosedErr(err) {
			t.Errorf("conn.Read after delegation = %v, want net.ErrClosed", err)
		}
		if err := c.SetDeadline(time.Now()); !isClosedErr(err) {
			t.Errorf("conn.SetDeadline after delegation = %v, want net.ErrClosed", err)
		}
		if c.LocalAddr().String() != laddr || c.RemoteAddr().String() != raddr {
			t.Errorf("addresses after delegation = %v, %v; want %s, %s", c.LocalAddr(), c.RemoteAddr(), laddr, raddr)
		}
		// The watcher's copy carries on.
		writePeer(t, peer, "hi")
		checkRead(t, waitResult(t, col), "r", c, "hi")
	})
}

// sockopt is a socket option read back with getsockopt.
type sockopt struct {
	name       string
	level, opt int
}

// TestDelegationKeepsOptions: options set before delegation are the
// socket's, and a detached conn still has them.
func TestDelegationKeepsOptions(t *testing.T) { backendtest.Run(t, testDelegationKeepsOptions) }

func testDelegationKeepsOptions(t *testing.T) {
	tests := []struct {
		name string
		pair pairFunc
		set  func(t *testing.T, c net.Conn)
		opts []sockopt
		want map[string]int // values checked before delegation, when known
	}{
		{"tcp", tcpPair, func(t *testing.T, c net.Conn) {
			tc := c.(*net.TCPConn)
			// The opposites of Go's defaults (TCP_NODELAY on, keep-alive on).
			if err := tc.SetNoDelay(false); err != nil {
				t.Fatal(err)
			}
			if err := tc.SetKeepAlive(false); err != nil {
				t.Fatal(err)
			}
			if err := tc.SetReadBuffer(24 << 10); err != nil {
				t.Fatal(err)
			}
			if err := tc.SetWriteBuffer(40 << 10); err != nil {
				t.Fatal(err)
			}
		}, []sockopt{
			{"TCP_NODELAY", unix.IPPROTO_TCP, unix.TCP_NODELAY},
			{"SO_KEEPALIVE", unix.SOL_SOCKET, unix.SO_KEEPALIVE},
			{"SO_RCVBUF", unix.SOL_SOCKET, unix.SO_RCVBUF},
			{"SO_SNDBUF", unix.SOL_SOCKET, unix.SO_SNDBUF},
		}, map[string]int{"TCP_NODELAY": 0, "SO_KEEPALIVE": 0}},
		{"unix", unixPair, func(t *testing.T, c net.Conn) {
			uc := c.(*net.UnixConn)
			if err := uc.SetReadBuffer(24 << 10); err != nil {
				t.Fatal(err)
			}
			if err := uc.SetWriteBuffer(40 << 10); err != nil {
				t.Fatal(err)
			}
		}, []sockopt{
			{"SO_RCVBUF", unix.SOL_SOCKET, unix.SO_RCVBUF},
			{"SO_SNDBUF", unix.SOL_SOCKET, unix.SO_SNDBUF},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, peer := tt.pair(t)
			tt.set(t, c)
			before := make(map[string]int)
			for _, o := range tt.opts {
				before[o.name] = sockoptInt(t, c, o.level, o.opt)
				if want, ok := tt.want[o.name]; ok && before[o.name] != want {
					t.Fatalf("%s before delegation = %d, want %d", o.name, before[o.name], want)
				}
			}
			ino := sockInode(t, c)
			w := newWatcher(t, aio.Config{})
			col := collect(t, w)
			delegate(t, w, col, c, peer)
			// While delegated, read them through the watcher's descriptor
			// (found by the socket's inode, where /proc exists).
			if fds, ok := openFDs(); ok {
				dups := socketFDs(fds, ino)
				if len(dups) != backendtest.SocketRefs() {
					t.Fatalf("fds %v refer to the delegated socket, want %d", dups, backendtest.SocketRefs())
				}
				for _, o := range tt.opts {
					got, err := unix.GetsockoptInt(dups[0], o.level, o.opt)
					if err != nil || got != before[o.name] {
						t.Errorf("%s of the watcher's descriptor = %d, %v; want %d", o.name, got, err, before[o.name])
					}
				}
			}
			nc := detach(t, w, c)
			for _, o := range tt.opts {
				if got := sockoptInt(t, nc, o.level, o.opt); got != before[o.name] {
					t.Errorf("%s after delegation and Detach = %d, want %d", o.name, got, before[o.name])
				}
			}
		})
	}
}

// detach detaches c from w and checks the conn it gets back, which is
// closed at cleanup.
func detach(t *testing.T, w *aio.Watcher, c net.Conn) net.Conn {
	t.Helper()
	nc, err := w.Detach(c)
	if err != nil || nc == nil {
		t.Fatalf("Detach = %v, %v; want a conn", nc, err)
	}
	t.Cleanup(func() { nc.Close() })
	if nc == c {
		t.Fatalf("Detach returned the delegated (closed) conn, want a new one")
	}
	switch c.(type) {
	case *net.TCPConn:
		if _, ok := nc.(*net.TCPConn); !ok {
			t.Errorf("Detach of a *net.TCPConn returned a %T", nc)
		}
	case *net.UnixConn:
		if _, ok := nc.(*net.UnixConn); !ok {
			t.Errorf("Detach of a *net.UnixConn returned a %T", nc)
		}
	}
	return nc
}

// TestDetach: a pending read (with a deadline) completes with ErrConnClosed, the watcher
// lets go of the conn, and the returned conn works both ways.
func TestDetach(t *testing.T) { backendtest.Run(t, testDetach) }

func testDetach(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		delegate(t, w, col, c, peer)
		if err := w.ReadTimeout("r", c, make([]byte, 8), time.Now().Add(time.Hour)); err != nil {
			t.Fatalf("Read = %v", err)
		}
		w.Poke()
		if s := w.Stats().Total(); s.Conns != 1 || s.PendingReads != 1 {
			t.Fatalf("before Detach: Stats().Total() = %+v, want 1 conn, 1 pending read", s)
		}
		nc := detach(t, w, c)
		if s := w.Stats().Total(); s.Conns != 0 || s.PendingReads != 0 {
			t.Errorf("after Detach: Stats().Total() = %+v, want no conn, nothing pending", s)
		}
		if n := w.Timers(); n != 0 {
			t.Errorf("Timers() after Detach = %d, want 0: the pending read's deadline is gone", n)
		}
		r := waitResult(t, col)
		if r.Error != aio.ErrConnClosed || r.Context != "r" || r.Conn != c || r.Size != 0 {
			t.Errorf("read pending at Detach = %v, want ctx r, size 0, ErrConnClosed", r)
		}
		roundTrip(t, nc, peer)
		if nc.LocalAddr().String() != c.LocalAddr().String() {
			t.Errorf("detached LocalAddr = %v, want %v", nc.LocalAddr(), c.LocalAddr())
		}
	})
}

// TestDetachUnread: bytes that arrived while delegated but were never read
// are read from the detached conn.
func TestDetachUnread(t *testing.T) { backendtest.Run(t, testDetachUnread) }

func testDetachUnread(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		delegate(t, w, col, c, peer)
		writePeer(t, peer, "unread")
		w.Poke()
		nc := detach(t, w, c)
		if got := readPeer(t, nc, 6); string(got) != "unread" {
			t.Errorf("detached conn read %q, want %q", got, "unread")
		}
		roundTrip(t, nc, peer)
	})
}

// TestDetachPendingWrite: a write cut short by Detach reports how much of
// it went out, so the caller can go on from there on the detached conn.
func TestDetachPendingWrite(t *testing.T) { backendtest.Run(t, testDetachPendingWrite) }

func testDetachPendingWrite(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		col := collect(t, w)
		wbuf := bytes.Repeat([]byte{'w'}, 16<<20)
		if err := w.Write("w", c, wbuf); err != nil {
			t.Fatalf("Write = %v", err)
		}
		w.Poke()
		if s := w.Stats().Total(); s.PendingWrites != 1 {
			t.Fatalf("Stats().Total() = %+v, want 1 pending write", s)
		}
		nc := detach(t, w, c)
		r := waitResult(t, col)
		if r.Error != aio.ErrConnClosed || r.Size < 0 || r.Size >= len(wbuf) {
			t.Fatalf("write pending at Detach = %v, want partial size, ErrConnClosed", r)
		}
		// The caller goes on where the write stopped, then closes. The
		// peer reads all while that is written, which may block.
		reading := make(chan []byte, 1)
		go func() {
			peer.SetReadDeadline(time.Now().Add(waitTimeout))
			b, _ := io.ReadAll(peer)
			reading <- b
		}()
		writePeer(t, nc, "tail")
		nc.Close()
		got := <-reading
		want := append(wbuf[:r.Size:r.Size], "tail"...)
		if !bytes.Equal(got, want) {
			t.Errorf("peer received %d bytes ending %q, want the %d bytes the write reported, then \"tail\"",
				len(got), got[max(0, len(got)-8):], r.Size)
		}
	})
}

// TestDetachNeverSeen: Detach of a conn the watcher never delegated
// returns it as it is.
func TestDetachNeverSeen(t *testing.T) { backendtest.Run(t, testDetachNeverSeen) }

func testDetachNeverSeen(t *testing.T) {
	forNetworks(t, func(t *testing.T, pair pairFunc) {
		c, peer := pair(t)
		w := newWatcher(t, aio.Config{})
		nc, err := w.Detach(c)
		if nc != c || err != nil {
			t.Fatalf("Detach(never seen) = %v, %v; want the conn itself, nil", nc, err)
		}
		roundTrip(t, c, peer)
	})
}
