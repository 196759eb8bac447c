package metrics

import (
	"maps"
	"slices"
	"strconv"

	"github.com/galeio/gale/httpd"
)

type httpSource struct {
	name string
	s    *httpd.Server
}

func (s httpSource) kind() string  { return "http" }
func (s httpSource) label() string { return s.name }
func (s httpSource) snapshot() any { return s.s.Stats() }

// collect adds the server's samples, then its loops'.
func (s httpSource) collect(fs *families, snap any) {
	st := snap.(httpd.Stats)
	n := s.name
	const reqs = "Requests handed to a handler on loop-served connections, by protocol."
	fs.counter("gale_http_requests_total", reqs, st.Requests.HTTP1, "name", n, "protocol", "http1")
	fs.counter("gale_http_requests_total", reqs, st.Requests.HTTP2, "name", n, "protocol", "http2")
	for _, status := range slices.Sorted(maps.Keys(st.Refused)) {
		fs.counter("gale_http_refused_requests_total", "Requests the server answered itself, before any handler, by status.",
			st.Refused[status], "name", n, "status", strconv.Itoa(status))
	}
	fs.gauge("gale_http_handlers", "Handlers running, as MaxHandlers counts them.", int64(st.Pool.Busy), "name", n)
	fs.gauge("gale_http_handlers_max", "Server.MaxHandlers; 0 for no bound.", int64(st.Pool.Max), "name", n)
	fs.gauge("gale_http_idle_handler_goroutines", "Goroutines kept for the next handlers.", int64(st.Pool.Idle), "name", n)
	fs.gauge("gale_http_connections", "Connections open, on loops and on net/http goroutines.", int64(st.Conns.Open), "name", n)
	fs.gauge("gale_http_upgraded_connections", "Connections open that switched protocol on their loop (Upgrade).", int64(st.Conns.Upgraded), "name", n)
	addEngine(fs, n, st.Engine)
}
