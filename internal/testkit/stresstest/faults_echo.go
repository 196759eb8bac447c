package stresstest

import (
	"net"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/faulttest"
)

// faultsWait bounds every wait of the fault drivers on the server under
// test (a dial, a write, an echo, the end of a stream): far above what
// any step needs on a loaded machine; reached only on a bug.
const faultsWait = 10 * time.Second

// EchoClients dials n clients of the echo server at addr, each checking
// that its echo is its own stream (faulttest.Echo, the stream of seed+i
// for the i-th), and returns them. Their connections close at the end of
// t. A failed dial (bounded by 10 s) fails t. For the test's goroutine.
func EchoClients(t testing.TB, addr net.Addr, n int, seed uint64) []*faulttest.Echo {
	t.Helper()
	cs := make([]*faulttest.Echo, n)
	for i := range cs {
		c, err := net.DialTimeout(addr.Network(), addr.String(), faultsWait)
		if err != nil {
			t.Fatalf("Dial(%v) = %v", addr, err)
		}
		cs[i] = faulttest.NewEcho(t, c, seed+uint64(i))
	}
	return cs
}

// SendAll makes every client send the next n bytes of its stream, each on
// a goroutine of its own and bounded by 10 s, waits for the writes and
// returns each client's write error. No other goroutine may send on the
// clients meanwhile (an Echo's Send is for one goroutine at a time).
func SendAll(cs []*faulttest.Echo, n int) []error {
	errs := make([]error, len(cs))
	done := make(chan struct{})
	for i, c := range cs {
		go func() {
			errs[i] = c.Send(n, faultsWait)
			done <- struct{}{}
		}()
	}
	for range cs {
		<-done
	}
	return errs
}

// EchoRound checks that the server serves every client: it sends 1 KiB on
// each (SendAll) and waits, up to 10 s a client, until all they sent came
// back. A failed write or a missing echo fails t, saying when. For the
// test's goroutine, with no other sending on the clients.
func EchoRound(t testing.TB, cs []*faulttest.Echo, when string) {
	t.Helper()
	for i, err := range SendAll(cs, 1<<10) {
		if err != nil {
			t.Fatalf("%s: client %d: Send = %v", when, i, err)
		}
	}
	for i, c := range cs {
		if !c.Wait(faultsWait) {
			t.Fatalf("%s: client %d: %d of %d bytes echoed (reader: %v)", when, i, c.Got(), c.Sent(), c.Err())
		}
	}
}
