package httpd_test

import (
	"github.com/galeio/gale/internal/testkit/backendtest"
	"net"
	"runtime"
	"testing"

	"github.com/galeio/gale/httpd"
)

// allocBudget is what a keep-alive GET costs in allocations (net/http's
// server: 13, BenchmarkHello). The memory profile finds 5, all forced by
// the *http.Request a handler must get: the request itself (filled on the
// stack, copied once by WithContext), its URL, a short header's values
// and its context together, the head's text, and the Header map with its
// first group. The server's framing, body, response, header writing, pool
// hand-off and connection state allocate nothing. Measure with:
//
//	go test -run XXX -bench Hello/gale -memprofile m.prof -memprofilerate 1 ./httpd
//	go tool pprof -sample_index=alloc_objects -top httpd.test m.prof
const allocBudget = 5

func TestAllocsPerRequest(t *testing.T) {
	backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	addr := start(t, &httpd.Server{}, helloHandler())
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	roundTrips(t, c, 100) // warm the pools
	const n = 2000
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	roundTrips(t, c, n)
	runtime.ReadMemStats(&after)
	per := float64(after.Mallocs-before.Mallocs) / n
	t.Logf("%.2f allocations per request (budget %d)", per, allocBudget)
	if per > allocBudget+0.5 {
		t.Fatalf("%.2f allocations per keep-alive request, want at most %d", per, allocBudget)
	}
}
