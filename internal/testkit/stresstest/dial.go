package stresstest

import (
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DialMany opens n connections to addr, 16 dials at a time, each bounded
// by timeout, and fails t with the first dial that fails. The
// connections are closed when t ends. Call it from t's goroutine.
func DialMany(t testing.TB, addr net.Addr, n int, timeout time.Duration) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, n)
	t.Cleanup(func() {
		for _, c := range conns {
			if c != nil {
				c.Close()
			}
		}
	})
	var next atomic.Int64
	var first atomic.Pointer[error]
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && first.Load() == nil; i = int(next.Add(1) - 1) {
				c, err := net.DialTimeout(addr.Network(), addr.String(), timeout)
				if err != nil {
					err = fmt.Errorf("dial %d of %d: %w", i, n, err)
					first.CompareAndSwap(nil, &err)
					return
				}
				conns[i] = c
			}
		})
	}
	wg.Wait()
	if p := first.Load(); p != nil {
		t.Fatal(*p)
	}
	return conns
}
