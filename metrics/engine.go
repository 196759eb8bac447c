package metrics

import (
	"strconv"

	"github.com/galeio/gale/engine"
)

type engineSource struct {
	name string
	e    *engine.Engine
}

func (s engineSource) kind() string  { return "engine" }
func (s engineSource) label() string { return s.name }
func (s engineSource) snapshot() any { return s.e.Stats() }
func (s engineSource) collect(fs *families, snap any) {
	addEngine(fs, s.name, snap.(engine.Stats))
}

// addEngine adds the gale_engine_ samples of st, one per loop, labelled
// name and loop.
func addEngine(fs *families, name string, st engine.Stats) {
	for i, l := range st.Loops {
		addLoop(fs, l, "name", name, "loop", strconv.Itoa(i))
	}
}

// addLoop adds one loop's samples with the labels lb.
func addLoop(fs *families, l engine.LoopStats, lb ...string) {
	fs.gauge("gale_engine_connections", "Connections open on the loop.", int64(l.Conns), lb...)
	fs.counter("gale_engine_received_bytes_total", "Bytes read from the loop's connections.", l.BytesIn, lb...)
	fs.counter("gale_engine_sent_bytes_total", "Bytes written to the loop's connections.", l.BytesOut, lb...)
	fs.gauge("gale_engine_queued_bytes", "Output queued on the loop's connections, not yet written.", l.Queued, lb...)
	fs.gauge("gale_engine_paused_connections", "Connections whose reading backpressure stopped.", int64(l.Paused), lb...)
	fs.gauge("gale_engine_timers", "Connection timers scheduled (deadlines, idle timeouts).", int64(l.Timers), lb...)
	fs.gauge("gale_engine_tls_handshakes", "TLS handshakes in progress.", int64(l.Handshakes), lb...)
	fs.counter("gale_engine_accept_errors_total", "Accepts that failed.", l.AcceptErrors, lb...)
	fs.counter("gale_engine_accepted_connections_total", "Connections that arrived (accepted or adopted), refused ones included.", l.Accepted, lb...)
	const refused = "Connections refused as they arrived, by cap (Options.MaxConns, MaxConnsPerIP)."
	fs.counter("gale_engine_refused_connections_total", refused, l.Refused.MaxConns, append(lb, "cap", "max_conns")...)
	fs.counter("gale_engine_refused_connections_total", refused, l.Refused.MaxConnsPerIP, append(lb, "cap", "max_conns_per_ip")...)
	const limits = "Connections closed by a limit, by limit."
	for _, c := range []struct {
		limit string
		n     uint64
	}{
		{"input_buffer_full", l.Limits.InputBufferFull},
		{"write_buffer_full", l.Limits.WriteBufferFull},
		{"idle_timeout", l.Limits.IdleTimeout},
		{"handshake_timeout", l.Limits.HandshakeTimeout},
		{"proxy_header", l.Limits.ProxyHeader},
	} {
		fs.counter("gale_engine_limit_closes_total", limits, c.n, append(lb, "limit", c.limit)...)
	}
	const deadlines = "Read and write deadlines that passed (OnDeadline)."
	fs.counter("gale_engine_deadlines_total", deadlines, l.Deadlines.Read, append(lb, "kind", "read")...)
	fs.counter("gale_engine_deadlines_total", deadlines, l.Deadlines.Write, append(lb, "kind", "write")...)
	const errs = "Connections closed by a failure, by kind."
	for _, c := range []struct {
		kind string
		n    uint64
	}{
		{"reset", l.Errors.Reset},
		{"read", l.Errors.Read},
		{"write", l.Errors.Write},
		{"tls_handshake", l.Errors.TLSHandshake},
		{"other", l.Errors.Other},
	} {
		fs.counter("gale_engine_errors_total", errs, c.n, append(lb, "kind", c.kind)...)
	}
}
