package aio_test

import (
	"fmt"
	"net"
	"sync"
	"testing"

	"github.com/galeio/gale/aio"
)

// stErrs keeps the first errors reported by background goroutines.
type stErrs struct {
	mu   sync.Mutex
	errs []error
	n    int
}

func (e *stErrs) add(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if len(e.errs) < 5 {
		e.errs = append(e.errs, err)
	}
}

func (e *stErrs) check(t testing.TB, who string) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.n > 0 {
		t.Errorf("%s: %d errors, want 0; first: %v", who, e.n, e.errs)
	}
}

// stServe listens on a loopback address and serves what connects through
// w until the end of the test, on two goroutines of its own: one accepts
// and delegates each connection to w with start (its first Read; the
// connection is closed if that fails), the other hands each of w's
// completions to serve. What they fail with goes to errs. The cleanup
// closes the listener and w and waits for both goroutines.
func stServe(t testing.TB, w *aio.Watcher, errs *stErrs, start func(c net.Conn) error, serve func(r aio.OpResult) error) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("Listen = %v, want nil", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if err := start(c); err != nil {
				errs.add(fmt.Errorf("Read = %v", err))
				c.Close()
			}
		}
	})
	wg.Go(func() {
		for {
			res, err := w.WaitIO()
			if err != nil {
				return
			}
			for _, r := range res {
				if err := serve(r); err != nil {
					errs.add(err)
				}
			}
		}
	})
	t.Cleanup(func() {
		ln.Close()
		w.Close()
		wg.Wait()
	})
	return ln
}
