package metrics_test

import (
	"net/http/httptest"
	"testing"

	"github.com/galeio/gale/metrics"
)

// BenchmarkScrape measures one scrape of a one-loop engine: what a
// Prometheus poll costs the process.
func BenchmarkScrape(b *testing.B) {
	e, _ := startEchoTB(b)
	h := metrics.Handler(metrics.Engine("echo", e))
	req := httptest.NewRequest("GET", "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
}
