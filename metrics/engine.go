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
	fs.counters("gale_engine_refused_connections_total",
		"Connections refused as they arrived, by cap (Options.MaxConns, MaxConnsPerIP).", "cap", lb,
		byLabel{"max_conns", l.Refused.MaxConns}, byLabel{"max_conns_per_ip", l.Refused.MaxConnsPerIP})
	fs.counters("gale_engine_limit_closes_total", "Connections closed by a limit, by limit.", "limit", lb,
		byLabel{"input_buffer_full", l.Limits.InputBufferFull},
		byLabel{"write_buffer_full", l.Limits.WriteBufferFull},
		byLabel{"idle_timeout", l.Limits.IdleTimeout},
		byLabel{"handshake_timeout", l.Limits.HandshakeTimeout},
		byLabel{"proxy_header", l.Limits.ProxyHeader})
	fs.counters("gale_engine_deadlines_total", "Read and write deadlines that passed (OnDeadline).", "kind", lb,
		byLabel{"read", l.Deadlines.Read}, byLabel{"write", l.Deadlines.Write})
	fs.counters("gale_engine_errors_total", "Connections closed by a failure, by kind.", "kind", lb,
		byLabel{"reset", l.Errors.Reset},
		byLabel{"read", l.Errors.Read},
		byLabel{"write", l.Errors.Write},
		byLabel{"tls_handshake", l.Errors.TLSHandshake},
		byLabel{"other", l.Errors.Other})
}

// byLabel is one sample of a counter split by a label: its value, and
// the count.
type byLabel struct {
	value string
	n     uint64
}

// counters adds one sample of counter name per vs, each with lb and the
// label key set to its value.
func (fs *families) counters(name, help, key string, lb []string, vs ...byLabel) {
	for _, v := range vs {
		fs.counter(name, help, v.n, append(lb[:len(lb):len(lb)], key, v.value)...)
	}
}
