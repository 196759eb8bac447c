package netconn_test

import (
	"net"
	"path/filepath"
	"testing"

	"golang.org/x/net/nettest"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// TestConn runs x/net/nettest's conformance suite for net.Conn over
// netconn: TCP and Unix, on every backend.
func TestConn(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		t.Run("tcp", func(t *testing.T) { nettest.TestConn(t, pipeMaker(t, "tcp", "127.0.0.1:0")) })
		t.Run("unix", func(t *testing.T) {
			backendtest.NeedNetwork(t, "unix") // before nettest's subtests, which cannot skip
			nettest.TestConn(t, pipeMaker(t, "unix", filepath.Join(backendtest.TempDir(t), "s")))
		})
	})
}

// pipeMaker returns a nettest.MakePipe giving two connected netconn conns:
// one dialed, one accepted.
func pipeMaker(t *testing.T, network, addr string) nettest.MakePipe {
	return func() (c1, c2 net.Conn, stop func(), err error) {
		return pipe(t, network, addr)
	}
}

// pipe connects two netconn conns through a listener it closes again.
func pipe(t testing.TB, network, addr string) (c1, c2 net.Conn, stop func(), err error) {
	ln, err := netconn.Listen(network, addr)
	if err != nil {
		backendtest.SkipMissing(t, err)
		return nil, nil, nil, err
	}
	defer ln.Close()
	type accepted struct {
		c   net.Conn
		err error
	}
	ch := make(chan accepted, 1)
	go func() {
		c, err := ln.Accept()
		ch <- accepted{c, err}
	}()
	c1, err = netconn.Dial(network, ln.Addr().String())
	if err != nil {
		return nil, nil, nil, err
	}
	a := <-ch
	if a.err != nil {
		c1.Close()
		return nil, nil, nil, a.err
	}
	return c1, a.c, func() { c1.Close(); a.c.Close() }, nil
}
