package netconn_test

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// packetNetworks are the datagram networks every packet test runs on.
var packetNetworks = []string{"udp", "unixgram"}

// eachPacket runs f per backend and datagram network with two bound
// netconn packet conns, closed when f's test ends.
func eachPacket(t *testing.T, f func(t *testing.T, p, q net.PacketConn)) {
	backendtest.Run(t, func(t *testing.T) {
		for _, network := range packetNetworks {
			t.Run(network, func(t *testing.T) {
				backendtest.NeedNetwork(t, network)
				dir := backendtest.TempDir(t)
				listen := func(name string) net.PacketConn {
					addr := "127.0.0.1:0"
					if network == "unixgram" {
						addr = filepath.Join(dir, name)
					}
					pc, err := netconn.ListenPacket(network, addr)
					if err != nil {
						backendtest.SkipMissing(t, err)
						t.Fatal(err)
					}
					t.Cleanup(func() { pc.Close() })
					return pc
				}
				f(t, listen("p"), listen("q"))
			})
		}
	})
}

// readResult is the outcome of a ReadFrom run in the background.
type readResult struct {
	n    int
	from net.Addr
	err  error
}

func goReadFrom(pc net.PacketConn, p []byte) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		n, from, err := pc.ReadFrom(p)
		ch <- readResult{n, from, err}
	}()
	return ch
}

func awaitReadFrom(t *testing.T, ch <-chan readResult) readResult {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(hang):
		t.Fatalf("ReadFrom did not return within %v", hang)
		return readResult{}
	}
}

// TestPacketRoundTrip: a datagram goes one way and a reply comes back to
// the address ReadFrom reported.
func TestPacketRoundTrip(t *testing.T) {
	eachPacket(t, func(t *testing.T, p, q net.PacketConn) {
		p.SetReadDeadline(time.Now().Add(hang))
		q.SetReadDeadline(time.Now().Add(hang))
		if n, err := p.WriteTo([]byte("ping"), q.LocalAddr()); n != 4 || err != nil {
			t.Fatalf("WriteTo = %d, %v; want 4, nil", n, err)
		}
		buf := make([]byte, 64)
		n, from, err := q.ReadFrom(buf)
		if string(buf[:n]) != "ping" || err != nil {
			t.Fatalf("ReadFrom = %q, %v; want %q", buf[:n], err, "ping")
		}
		if from == nil || from.String() != p.LocalAddr().String() {
			t.Errorf("ReadFrom's source = %v, want %v", from, p.LocalAddr())
		}
		if _, err := q.WriteTo([]byte("pong"), from); err != nil {
			t.Fatalf("WriteTo the source: %v", err)
		}
		// This time ReadFrom parks first, and the loop receives.
		ch := goReadFrom(p, buf)
		r := awaitReadFrom(t, ch)
		if string(buf[:r.n]) != "pong" || r.err != nil {
			t.Errorf("ReadFrom = %q, %v; want %q", buf[:r.n], r.err, "pong")
		}
	})
}

// datagramSizes are the sizes TestPacketBoundaries sends: an empty one,
// small ones, a full Ethernet frame's UDP payload and one past it, and
// two large ones, near the 64 KiB of UDP's and the loops' read buffers.
var datagramSizes = []int{0, 1, 100, 1472, 1500, 8000, 60000}

// TestPacketBoundaries: each datagram is one ReadFrom, whole, whether it
// was queued before ReadFrom or came while it was parked; a datagram
// longer than the buffer is cut, and the next one is intact.
func TestPacketBoundaries(t *testing.T) {
	eachPacket(t, func(t *testing.T, p, q net.PacketConn) {
		q.SetReadDeadline(time.Now().Add(hang))
		msg := func(i, size int) []byte {
			b := make([]byte, size)
			fillPattern(b, uint64(i), 0)
			return b
		}
		buf := make([]byte, 65536)
		check := func(how string, i, size int, n int, err error) {
			t.Helper()
			if err != nil || n != size || !bytes.Equal(buf[:n], msg(i, size)) {
				t.Errorf("%s: datagram %d of %d bytes: ReadFrom = %d, %v (equal %v)",
					how, i, size, n, err, bytes.Equal(buf[:n], msg(i, size)))
			}
		}
		t.Run("queued", func(t *testing.T) {
			for i, size := range datagramSizes {
				if _, err := p.WriteTo(msg(i, size), q.LocalAddr()); err != nil {
					t.Fatalf("WriteTo %d bytes: %v", size, err)
				}
			}
			for i, size := range datagramSizes {
				n, _, err := q.ReadFrom(buf)
				check("queued", i, size, n, err)
			}
		})
		t.Run("parked", func(t *testing.T) {
			for i, size := range datagramSizes {
				ch := goReadFrom(q, buf)
				time.Sleep(settle / 5)
				if _, err := p.WriteTo(msg(i, size), q.LocalAddr()); err != nil {
					t.Fatalf("WriteTo %d bytes: %v", size, err)
				}
				r := awaitReadFrom(t, ch)
				check("parked", i, size, r.n, r.err)
			}
		})
		t.Run("truncated", func(t *testing.T) {
			for _, parked := range []bool{false, true} {
				small := make([]byte, 100)
				var ch <-chan readResult
				if parked {
					ch = goReadFrom(q, small)
					time.Sleep(settle / 5)
				}
				p.WriteTo(msg(1, 2000), q.LocalAddr())
				p.WriteTo(msg(2, 300), q.LocalAddr())
				var r readResult
				if parked {
					r = awaitReadFrom(t, ch)
				} else {
					r.n, r.from, r.err = q.ReadFrom(small)
				}
				if r.err != nil || r.n != len(small) || !bytes.Equal(small, msg(1, 2000)[:100]) {
					t.Errorf("parked %v: ReadFrom of a 2000-byte datagram into 100 bytes = %d, %v; want 100, nil, its head",
						parked, r.n, r.err)
				}
				n, _, err := q.ReadFrom(buf)
				check("after a truncated one", 2, 300, n, err)
			}
		})
	})
}

// TestPacketDeadline: ReadFrom fails with a timeout after the read
// deadline, set before or while it waits, and works again once the
// deadline is cleared.
func TestPacketDeadline(t *testing.T) {
	eachPacket(t, func(t *testing.T, p, q net.PacketConn) {
		buf := make([]byte, 64)
		q.SetReadDeadline(time.Now().Add(-time.Second))
		n, _, err := q.ReadFrom(buf)
		wantTimeout(t, "ReadFrom after the deadline", n, err)

		q.SetReadDeadline(time.Now().Add(settle))
		r := awaitReadFrom(t, goReadFrom(q, buf))
		wantTimeout(t, "ReadFrom past its deadline", r.n, r.err)

		q.SetReadDeadline(time.Now().Add(time.Hour))
		ch := goReadFrom(q, buf)
		time.Sleep(settle)
		q.SetReadDeadline(time.Now().Add(settle))
		r = awaitReadFrom(t, ch)
		wantTimeout(t, "ReadFrom with a shortened deadline", r.n, r.err)

		for try := 1; ; try++ {
			first := time.Now().Add(firstDeadline)
			q.SetReadDeadline(first)
			ch = goReadFrom(q, buf)
			time.Sleep(settle)
			q.SetReadDeadline(time.Time{})
			if time.Now().Before(first) {
				break
			}
			q.SetReadDeadline(time.Now().Add(-time.Second))
			awaitReadFrom(t, ch)
			tooLate(t, try)
		}
		select {
		case r := <-ch:
			t.Fatalf("ReadFrom with a cleared deadline returned: %d, %v", r.n, r.err)
		case <-time.After(400 * time.Millisecond):
		}
		p.WriteTo([]byte("late"), q.LocalAddr())
		r = awaitReadFrom(t, ch)
		if string(buf[:r.n]) != "late" || r.err != nil {
			t.Errorf("ReadFrom after clearing = %q, %v; want %q", buf[:r.n], r.err, "late")
		}

		p.SetWriteDeadline(time.Now().Add(-time.Second))
		n, err = p.WriteTo([]byte("x"), q.LocalAddr())
		wantTimeout(t, "WriteTo after the deadline", n, err)
	})
}

// TestPacketClose: Close ends a parked ReadFrom with net.ErrClosed, and
// every later call fails so.
func TestPacketClose(t *testing.T) {
	eachPacket(t, func(t *testing.T, p, q net.PacketConn) {
		ch := goReadFrom(q, make([]byte, 64))
		time.Sleep(settle)
		if err := q.Close(); err != nil {
			t.Fatalf("Close = %v", err)
		}
		r := awaitReadFrom(t, ch)
		wantClosed(t, "ReadFrom under Close", r.n, r.err)
		n, _, err := q.ReadFrom(make([]byte, 64))
		wantClosed(t, "ReadFrom after Close", n, err)
		n, err = q.WriteTo([]byte("x"), p.LocalAddr())
		wantClosed(t, "WriteTo after Close", n, err)
		if err := q.SetReadDeadline(time.Now()); !errors.Is(err, net.ErrClosed) {
			t.Errorf("SetReadDeadline after Close = %v, want net.ErrClosed", err)
		}
		if err := q.Close(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("second Close = %v, want net.ErrClosed", err)
		}
	})
}

// TestPacketDial: Dial("udp") gives a connected conn whose Read and Write
// exchange datagrams with its peer, a netconn or a package net one.
func TestPacketDial(t *testing.T) {
	backendtest.NeedNetwork(t, "udp")
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			listen func(network, addr string) (net.PacketConn, error)
		}{
			{"netconn-peer", netconn.ListenPacket},
			{"std-peer", net.ListenPacket},
		} {
			t.Run(tc.name, func(t *testing.T) {
				srv, err := tc.listen("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				c, err := netconn.Dial("udp", srv.LocalAddr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, ok := c.(*netconn.PacketConn); !ok {
					t.Errorf("Dial(udp) gave a %T, want *netconn.PacketConn", c)
				}
				if got, want := c.RemoteAddr().String(), srv.LocalAddr().String(); got != want {
					t.Errorf("RemoteAddr() = %s, want %s", got, want)
				}
				c.SetDeadline(time.Now().Add(hang))
				srv.SetDeadline(time.Now().Add(hang))
				for i, size := range []int{5, 1000, 0, 9000} {
					out := make([]byte, size)
					fillPattern(out, uint64(i), 0)
					if n, err := c.Write(out); n != size || err != nil {
						t.Fatalf("Write(%d bytes) = %d, %v", size, n, err)
					}
					buf := make([]byte, 65536)
					n, from, err := srv.ReadFrom(buf)
					if err != nil || !bytes.Equal(buf[:n], out) {
						t.Fatalf("peer ReadFrom = %d, %v; want the %d bytes written", n, err, size)
					}
					if from.String() != c.LocalAddr().String() {
						t.Errorf("peer ReadFrom's source = %v, want %v", from, c.LocalAddr())
					}
					// The reply: once queued before Read, once while it is parked.
					if i%2 == 1 {
						srv.WriteTo(out, from)
						n, err = c.Read(buf)
					} else {
						ch := goRead(c, buf)
						time.Sleep(settle / 5)
						srv.WriteTo(out, from)
						r := await(t, "Read", ch, hang)
						n, err = r.n, r.err
					}
					if err != nil || !bytes.Equal(buf[:n], out) {
						t.Fatalf("Read of the reply = %d, %v; want the %d bytes sent", n, err, size)
					}
				}
			})
		}
	})
}

// TestPacketDialRefused: a dialed UDP conn whose peer has no socket
// learns it from ICMP, as package net's does: the Read parked at that
// moment, or the next one, fails with ECONNREFUSED instead of waiting.
func TestPacketDialRefused(t *testing.T) {
	backendtest.NeedNetwork(t, "udp")
	backendtest.Run(t, func(t *testing.T) {
		for _, parked := range []bool{false, true} {
			t.Run(fmt.Sprintf("parked=%v", parked), func(t *testing.T) {
				gone, err := net.ListenPacket("udp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := gone.LocalAddr().String()
				gone.Close() // nobody listens there now
				c, err := netconn.Dial("udp", addr)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(hang))
				var ch <-chan result
				if parked {
					ch = goRead(c, make([]byte, 64))
					time.Sleep(settle)
				}
				if _, err := c.Write([]byte("anyone?")); err != nil {
					t.Fatalf("Write = %v", err)
				}
				var r result
				if parked {
					r = await(t, "Read", ch, 2*hang)
				} else {
					time.Sleep(settle) // the ICMP error arrives
					r.n, r.err = c.Read(make([]byte, 64))
				}
				if !errors.Is(r.err, syscall.ECONNREFUSED) {
					t.Errorf("Read = %d, %v; want ECONNREFUSED", r.n, r.err)
				}
			})
		}
	})
}
