package main

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/galeio/gale/httpd"
)

// metricsHandler serves the instance's counters in Prometheus' text
// format (version 0.0.4): the room's, and those of httpd.Server.Stats.
func metricsHandler(srv *httpd.Server, r *room) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		st := srv.Stats()
		tot := st.Engine.Total()
		m := metricWriter{w}
		m.gauge("chat_members", "Open WebSocket connections of the chat.", uint64(r.size()))
		m.counter("chat_published_total", "Messages added to the Redis Stream.", r.stat.published.Load())
		m.counter("chat_publish_failed_total", "Messages Redis refused (their clients resend them).", r.stat.failed.Load())
		m.counter("chat_rejected_total", "Messages that found the Redis queue full (their clients resend them).", r.stat.rejected.Load())
		m.counter("chat_delivered_total", "Messages sent to clients, one per client.", r.stat.delivered.Load())
		m.counter("chat_replayed_total", "Of chat_delivered_total, those sent from the history on a reconnection.", r.stat.replayed.Load())
		m.counter("chat_hellos_total", "Clients that said hello.", r.stat.hellos.Load())
		m.counter("chat_resumes_total", "Hellos that named a last message: reconnections.", r.stat.resumes.Load())
		m.gauge("httpd_conns", "Open connections on the loops.", uint64(tot.Conns))
		m.counter("httpd_bytes_in_total", "Bytes read on the loops.", tot.BytesIn)
		m.counter("httpd_bytes_out_total", "Bytes written on the loops.", tot.BytesOut)
		m.gauge("httpd_queued_bytes", "Output queued on the loops.", uint64(max(st.Engine.Queued, 0)))
		m.counter("httpd_accept_errors_total", "Failed accepts.", tot.AcceptErrors)
		m.gauge("httpd_handlers", "HTTP handlers running.", uint64(st.Handlers))
		codes := make([]int, 0, len(st.Refused))
		for c := range st.Refused {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		m.help("httpd_refused_total", "counter", "Requests httpd answered itself, by status.")
		for _, c := range codes {
			fmt.Fprintf(w, "httpd_refused_total{code=\"%d\"} %d\n", c, st.Refused[c])
		}
	})
}

type metricWriter struct{ w http.ResponseWriter }

func (m metricWriter) help(name, typ, help string) {
	fmt.Fprintf(m.w, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, typ)
}

func (m metricWriter) counter(name, help string, v uint64) {
	m.help(name, "counter", help)
	fmt.Fprintf(m.w, "%s %d\n", name, v)
}

func (m metricWriter) gauge(name, help string, v uint64) {
	m.help(name, "gauge", help)
	fmt.Fprintf(m.w, "%s %d\n", name, v)
}
