package metrics_test

import (
	"bufio"
	"expvar"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/metrics"
	"github.com/galeio/gale/websocket"
)

// An engine's metrics, as Prometheus reads them.
func ExampleHandler() {
	e, err := engine.New(echo{}, engine.Options{Loops: 1})
	if err != nil {
		log.Fatal(err)
	}
	if err := e.Start(); err != nil {
		log.Fatal(err)
	}
	defer e.Stop()

	h := metrics.Handler(metrics.Engine("echo", e))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "gale_engine_connections") {
			fmt.Println(sc.Text())
		}
	}
	// Output:
	// # HELP gale_engine_connections Connections open on the loop.
	// # TYPE gale_engine_connections gauge
	// gale_engine_connections{name="echo",loop="0"} 0
}

// An HTTP server and its WebSocket endpoint on one /metrics page.
func ExampleHTTP() {
	up := &websocket.Upgrader{}
	mux := http.NewServeMux()
	mux.HandleFunc("/ws", func(w http.ResponseWriter, r *http.Request) { up.Upgrade(w, r, nil) })
	srv := &httpd.Server{Addr: "127.0.0.1:8080", Handler: mux}
	mux.Handle("/metrics", metrics.Handler(metrics.HTTP("api", srv), metrics.WebSocket("ws", up)))
	_ = srv.ListenAndServe // serve as usual
}

// The same counters as JSON in expvar's /debug/vars.
func ExamplePublish() {
	up := &websocket.Upgrader{}
	metrics.Publish("gale_example", metrics.WebSocket("chat", up))
	fmt.Println(expvar.Get("gale_example"))
	// Output:
	// {"websocket":{"chat":{"Open":0,"MessagesIn":0,"BytesIn":0,"MessagesOut":0,"BytesOut":0,"Closes":{}}}}
}
