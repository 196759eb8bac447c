package engine_test

import (
	"crypto/tls"
	"io"
	"sync"
	"testing"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// TestPoolTLS: on a TLS listener, a pooled connection's callbacks get
// the decrypted input in order, and what they write from the worker is
// encrypted on its way out: lines echo whole over TLS on a pool of 2,
// and OnClose comes after every OnData.
func TestPoolTLS(t *testing.T) { backendtest.Run(t, testPoolTLS) }

func testPoolTLS(t *testing.T) {
	h := newPTHandler()
	e, _, _ := ptStart(t, h, engine.PoolOptions{MaxWorkers: 2, MaxQueued: 1 << 10}, engine.Options{})
	pki := tlstest.Get()
	a, err := e.ListenTLS("tcp", "127.0.0.1:0", pki.ServerConfig())
	if err != nil {
		t.Fatal(err)
	}
	const conns, lines = 4, 500
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for range conns {
		wg.Go(func() {
			c, err := tls.Dial("tcp", a.String(), pki.ClientConfig())
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			if err := ptLines(t, c, lines); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for range conns {
		s := etRecv(t, h.closed, "OnClose")
		if s.bad != "" || s.lines != lines {
			t.Errorf("connection: rule broken %q, lines %d; want none, %d", s.bad, s.lines, lines)
		}
		// tls.Conn.Close sends close_notify: the end of the stream.
		if err := etRecv(t, h.errs, "OnClose error"); err != nil && err != io.EOF {
			t.Errorf("OnClose(%v), want io.EOF or nil", err)
		}
	}
}
