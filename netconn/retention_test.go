package netconn_test

import (
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// TestClosedConnCollected: once closed, a conn is garbage, whatever
// deadline it had: its loop, which runs on for the other conns, keeps no
// reference to it. A server that sets a read deadline per request (net/http's
// ReadTimeout, IdleTimeout) would otherwise keep every conn it closed for
// as long as the deadline had to run.
func TestClosedConnCollected(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, network := range streamNetworks {
			t.Run(network, func(t *testing.T) {
				// keeper holds the loops' group open, as other conns would.
				keeper, err := netconn.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer keeper.Close()
				for _, tc := range []struct {
					name string
					use  func(t *testing.T, a, b *netconn.Conn)
				}{
					{"idle", func(t *testing.T, a, b *netconn.Conn) {}},
					{"read", func(t *testing.T, a, b *netconn.Conn) { exchange(t, a, b) }},
					{"read-deadline-passed", func(t *testing.T, a, b *netconn.Conn) {
						a.SetReadDeadline(time.Now().Add(settle))
						a.Read(make([]byte, 1))
					}},
					{"read-deadline-pending", func(t *testing.T, a, b *netconn.Conn) {
						a.SetReadDeadline(time.Now().Add(time.Hour))
						exchange(t, a, b)
					}},
					{"write-deadline-pending", func(t *testing.T, a, b *netconn.Conn) {
						a.SetWriteDeadline(time.Now().Add(time.Hour))
						ch := blockWrite(a)
						if err := <-drain(b, blockSize); err != nil {
							t.Error(err)
						}
						await(t, "Write", ch, hang)
					}},
				} {
					t.Run(tc.name, func(t *testing.T) {
						wp := closedConn(t, network, tc.use)
						for i := 0; i < 20 && wp.Value() != nil; i++ {
							runtime.GC()
							time.Sleep(10 * time.Millisecond)
						}
						if wp.Value() != nil {
							t.Errorf("a closed conn is still reachable after 20 collections")
						}
					})
				}
			})
		}
	})
}

// exchange has a park in Read until b writes.
func exchange(t *testing.T, a, b *netconn.Conn) {
	ch := goRead(a, make([]byte, 16))
	time.Sleep(settle)
	b.Write([]byte("x"))
	if r := await(t, "Read", ch, hang); r.n != 1 || r.err != nil {
		t.Errorf("Read = %d, %v; want 1, nil", r.n, r.err)
	}
}

// closedConn makes a pair, has use act on it, closes both and returns a
// weak pointer to the dialed conn, which nothing of the test holds.
func closedConn(t *testing.T, network string, use func(t *testing.T, a, b *netconn.Conn)) weak.Pointer[netconn.Conn] {
	backendtest.NeedNetwork(t, network)
	addr := "127.0.0.1:0"
	if network == "unix" {
		addr = filepath.Join(backendtest.TempDir(t), "s")
	}
	c1, c2, _, err := pipe(t, network, addr)
	if err != nil {
		t.Fatal(err)
	}
	a, b := c1.(*netconn.Conn), c2.(*netconn.Conn)
	use(t, a, b)
	a.Close()
	b.Close()
	return weak.Make(a)
}
