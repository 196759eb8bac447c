package metrics

import (
	"strconv"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/websocket"
)

// A Source is something whose counters are exposed: an engine (Engine),
// an HTTP server (HTTP) or a WebSocket Upgrader or Dialer (WebSocket),
// under a name that tells it from others of its kind. A Source reads its
// counters anew at each use, from any goroutine.
type Source interface {
	// kind is the source's key in the expvar object: "engine", "http" or
	// "websocket".
	kind() string
	// label is the name given to the constructor.
	label() string
	// snapshot reads the counters once: a Stats value, which expvar
	// writes as JSON and collect turns into samples.
	snapshot() any
	// collect adds the samples of snap, which snapshot returned.
	collect(fs *families, snap any)
}

// Engine is the Source of e's counters (Engine.Stats), per loop, under
// name (the label name="...").
func Engine(name string, e *engine.Engine) Source { return engineSource{name, e} }

// HTTP is the Source of s's counters (Server.Stats), under name: the
// gale_http_ metrics, and the gale_engine_ metrics of the loops that
// serve s's connections.
func HTTP(name string, s *httpd.Server) Source { return httpSource{name, s} }

// WebSocketStats is what WebSocket reads: a *websocket.Upgrader or a
// *websocket.Dialer.
type WebSocketStats interface {
	Stats() websocket.Stats
}

// WebSocket is the Source of the counters of the connections s made
// (Upgrader.Stats, Dialer.Stats), under name.
func WebSocket(name string, s WebSocketStats) Source { return wsSource{name, s} }

// checkNames panics if two of srcs share a name: their series would
// collide (an Engine and an HTTP source both write gale_engine_).
func checkNames(srcs []Source) {
	seen := make(map[string]bool, len(srcs))
	for _, s := range srcs {
		if seen[s.label()] {
			panic("metrics: two sources named " + strconv.Quote(s.label()))
		}
		seen[s.label()] = true
	}
}

// gather reads each source once and adds its samples.
func gather(srcs []Source) *families {
	fs := newFamilies()
	for _, s := range srcs {
		s.collect(fs, s.snapshot())
	}
	return fs
}
