package engine_test

// Helpers of the fault tests (faults_*_test.go): clients that check
// their echo (internal/testkit/faulttest).

import (
	"net"
	"testing"

	"github.com/galeio/gale/backend"
	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/faulttest"
)

// etEchoClients dials n clients of a, each checking its echo.
func etEchoClients(t *testing.T, a net.Addr, n int, seed uint64) []*faulttest.Echo {
	t.Helper()
	cs := make([]*faulttest.Echo, n)
	for i := range cs {
		cs[i] = faulttest.NewEcho(t, etDial(t, a), seed+uint64(i))
	}
	return cs
}

// etSendAll makes every client send n bytes at once, each on its own
// goroutine, and waits for the writes. Write errors are returned per
// client.
func etSendAll(cs []*faulttest.Echo, n int) []error {
	errs := make([]error, len(cs))
	done := make(chan struct{})
	for i, c := range cs {
		go func() {
			errs[i] = c.Send(n, etWait)
			done <- struct{}{}
		}()
	}
	for range cs {
		<-done
	}
	return errs
}

// etBackend returns the backend e runs on.
func etBackend(e *engine.Engine) backend.Kind { return e.Stats().Total().Backend }

// etEchoRound sends 1 KiB on every client and waits for its echo.
func etEchoRound(t *testing.T, cs []*faulttest.Echo, when string) {
	t.Helper()
	for i, err := range etSendAll(cs, 1<<10) {
		if err != nil {
			t.Fatalf("%s: client %d: Send = %v", when, i, err)
		}
	}
	for i, c := range cs {
		if !c.Wait(etWait) {
			t.Fatalf("%s: client %d: %d of %d bytes echoed (reader: %v)", when, i, c.Got(), c.Sent(), c.Err())
		}
	}
}
