package main

import (
	"fmt"
	"net/http"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/metrics"
	"github.com/galeio/gale/websocket"
)

// metricsHandler serves the instance's counters in Prometheus' text
// format (version 0.0.4): gale's, from package metrics (the server's
// loops and requests as gale_engine_* and gale_http_*, the WebSocket
// connections as gale_websocket_*; labels name="http" and name="ws": a
// name is unique among the sources of one handler), then the
// room's, chat_*.
func metricsHandler(srv *httpd.Server, up *websocket.Upgrader, r *room) http.Handler {
	gale := metrics.Handler(metrics.HTTP("http", srv), metrics.WebSocket("ws", up))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		gale.ServeHTTP(w, req) // it sets no Content-Length: more may follow
		m := metricWriter{w}
		m.gauge("chat_members", "Open WebSocket connections of the chat.", uint64(r.size()))
		m.counter("chat_published_total", "Messages added to the Redis Stream.", r.stat.published.Load())
		m.counter("chat_publish_failed_total", "Messages Redis refused (their clients resend them).", r.stat.failed.Load())
		m.counter("chat_rejected_total", "Messages that found the queue to Redis full (their clients resend them).", r.stat.rejected.Load())
		m.counter("chat_delivered_total", "Messages sent to clients, one per client.", r.stat.delivered.Load())
		m.counter("chat_replayed_total", "Of chat_delivered_total, those sent from the history on a reconnection.", r.stat.replayed.Load())
		m.counter("chat_hellos_total", "Clients that said hello.", r.stat.hellos.Load())
		m.counter("chat_resumes_total", "Hellos that named a last message: reconnections.", r.stat.resumes.Load())
	})
}

type metricWriter struct{ w http.ResponseWriter }

func (m metricWriter) metric(name, typ, help string, v uint64) {
	fmt.Fprintf(m.w, "# HELP %s %s\n# TYPE %s %s\n%s %d\n", name, help, name, typ, name, v)
}

func (m metricWriter) counter(name, help string, v uint64) { m.metric(name, "counter", help, v) }

func (m metricWriter) gauge(name, help string, v uint64) { m.metric(name, "gauge", help, v) }
