package netconn_test

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// copySize is what io.Copy moves each way in TestCopy: 1 GiB, or 64 MiB
// under -race (where 1 GiB takes minutes; CI runs the 1 GiB copy without
// it, in its own step).
var copySize = func() int64 {
	if raceEnabled {
		return 64 << 20
	}
	return 1 << 30
}()

// copyLimit bounds each case of TestCopy; the slowest, under -race on a
// shared 2-core machine, takes well under it.
const copyLimit = 3 * time.Minute

// halfCloser is a stream conn whose sending side closes alone: *Conn,
// *net.TCPConn.
type halfCloser interface {
	net.Conn
	CloseWrite() error
}

// TestCopy has io.Copy move copySize bytes each way at once over one TCP
// connection, and checks both streams byte for byte: between two netconn
// conns, and between a netconn conn and a package net one, each side
// dialing.
func TestCopy(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			listen func(network, addr string) (net.Listener, error)
			dial   func(network, addr string) (net.Conn, error)
		}{
			{"netconn-netconn", netconn.Listen, netconn.Dial},
			{"netconn-std", net.Listen, netconn.Dial},
			{"std-netconn", netconn.Listen, net.Dial},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a, b := tcpPair(t, tc.listen, tc.dial)
				start := time.Now()
				deadline := start.Add(copyLimit)
				a.SetDeadline(deadline)
				b.SetDeadline(deadline)
				errs := make(chan error, 4)
				go func() { errs <- sendStream(a, 1, copySize) }()
				go func() { errs <- sendStream(b, 2, copySize) }()
				go func() { errs <- recvStream(b, 1, copySize) }()
				go func() { errs <- recvStream(a, 2, copySize) }()
				for range 4 {
					if err := <-errs; err != nil {
						t.Error(err)
						a.Close() // unblock the others
						b.Close()
					}
				}
				d := time.Since(start)
				t.Logf("%d MiB each way in %v (%.0f MB/s each way)", copySize>>20, d.Round(time.Millisecond),
					float64(copySize)/d.Seconds()/1e6)
			})
		}
	})
}

// tcpPair connects a dialed conn (a) to an accepted one (b) on loopback;
// both are closed when t ends.
func tcpPair(t *testing.T, listen func(network, addr string) (net.Listener, error),
	dial func(network, addr string) (net.Conn, error)) (a, b halfCloser) {
	t.Helper()
	ln, err := listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	ca, err := dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ca.Close() })
	cb := <-accepted
	if cb == nil {
		t.FailNow()
	}
	t.Cleanup(func() { cb.Close() })
	return ca.(halfCloser), cb.(halfCloser)
}

// sendStream copies n bytes of stream seed into c, then closes c's
// sending side.
func sendStream(c halfCloser, seed uint64, n int64) error {
	k, err := io.Copy(c, newPattern(seed, n))
	if err != nil {
		return fmt.Errorf("send stream %d: io.Copy = %d, %v", seed, k, err)
	}
	if err := c.CloseWrite(); err != nil {
		return fmt.Errorf("send stream %d: CloseWrite: %v", seed, err)
	}
	return nil
}

// recvStream reads c to its end and checks it is n bytes of stream seed.
func recvStream(c net.Conn, seed uint64, n int64) error {
	chk := newChecker(seed)
	if k, err := io.Copy(chk, c); err != nil {
		return fmt.Errorf("receive stream %d: io.Copy = %d, %v", seed, k, err)
	}
	return chk.check(n)
}
