// Package metrics exposes the counters of gale's engines, HTTP servers
// and WebSocket endpoints to monitoring, with no dependency beyond the
// standard library: as Prometheus text (Handler) and as expvar JSON
// (Publish, Var).
//
// # Entry points
//
// A Source names what is watched: Engine for an *engine.Engine, HTTP for
// an *httpd.Server (its loops included), WebSocket for a
// *websocket.Upgrader or *websocket.Dialer. Each has a name, unique
// among the sources given together, which becomes the label name="...":
//
//	http.Handle("/metrics", metrics.Handler(
//		metrics.HTTP("api", srv),
//		metrics.WebSocket("chat", upgrader),
//	))
//	metrics.Publish("gale", metrics.HTTP("api", srv)) // in /debug/vars
//
// # Metrics
//
// Counters end in _total; bytes are in _bytes. The engine's are per loop
// (labels name and loop):
//
//	gale_engine_connections                 gauge    connections open
//	gale_engine_received_bytes_total        counter  bytes read
//	gale_engine_sent_bytes_total            counter  bytes written
//	gale_engine_queued_bytes                gauge    output queued, not yet written
//	gale_engine_paused_connections          gauge    connections backpressure stopped reading
//	gale_engine_timers                      gauge    connection timers scheduled
//	gale_engine_tls_handshakes              gauge    TLS handshakes in progress
//	gale_engine_accept_errors_total         counter  failed accepts
//	gale_engine_accepted_connections_total  counter  connections arrived (accepted, adopted)
//	gale_engine_refused_connections_total{cap}  counter  refused as they arrived: max_conns,
//	                                                 max_conns_per_ip (Options.MaxConns, MaxConnsPerIP)
//	gale_engine_limit_closes_total{limit}   counter  closes by a limit: input_buffer_full,
//	                                                 write_buffer_full, idle_timeout, handshake_timeout,
//	                                                 proxy_header
//	gale_engine_deadlines_total{kind}       counter  deadlines passed: read, write
//	gale_engine_errors_total{kind}          counter  closes by a failure: reset, read, write,
//	                                                 tls_handshake, other
//
// An HTTP server's (label name), beside the engine's of its loops:
//
//	gale_http_requests_total{protocol}          counter  requests handed to a handler: http1, http2
//	gale_http_refused_requests_total{status}    counter  requests answered before any handler
//	gale_http_handlers                          gauge    handlers running
//	gale_http_handlers_max                      gauge    Server.MaxHandlers (0: no bound)
//	gale_http_idle_handler_goroutines           gauge    goroutines kept for the next handlers
//	gale_http_connections                       gauge    connections open
//	gale_http_upgraded_connections              gauge    of which switched protocol (Upgrade)
//
// A WebSocket Upgrader's or Dialer's (label name):
//
//	gale_websocket_connections                  gauge    connections open
//	gale_websocket_received_messages_total      counter  messages handed to OnMessage
//	gale_websocket_received_bytes_total         counter  their bytes, decompressed
//	gale_websocket_sent_messages_total          counter  messages taken to send
//	gale_websocket_sent_bytes_total             counter  their bytes, before compression
//	gale_websocket_closes_total{code}           counter  closes by status (1006: no close frame)
//
// The figures are those of engine.Stats, httpd.Stats and
// websocket.Stats, whose fields document them further. A listener has no
// counters of its own: the loops' cover its connections.
//
// # Concurrency
//
// Handler and Var are safe for concurrent use. Each scrape reads every
// source once; each counter is read atomically, a source's set as a
// whole is not (a connection may show in bytes before it shows in
// connections).
//
// # Cost
//
// The counters are always on. Each is kept where it is counted, with one
// atomic add per event (a deadline, a close, a handshake, a request, a
// WebSocket message), never per byte: the byte counters are the loops'
// own, added once per read or write. docs/bench/metrics.md has the
// measured cost.
//
// # Limitations
//
//   - Only the text format 0.0.4 is written: no OpenMetrics, no
//     protobuf, no compression, no timestamps, and no histograms
//     (latencies are not measured).
//   - A Source's name must be unique among the sources given together:
//     Handler and Var panic otherwise.
//   - httpd counts the requests of loop-served connections only, and
//     does not tell idle connections from active ones.
//   - The package-level websocket.Dial uses a Dialer of its own each
//     time, which no Source can reach: use a Dialer to count clients.
//   - Counters start at zero with their engine, server or Upgrader; a
//     restart resets them, as Prometheus expects of counters.
package metrics
