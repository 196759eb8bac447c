package benchrun

import (
	"fmt"
	"strings"
)

// Case is one scenario at one size: what a row of the report measures.
type Case struct {
	// Scenario is stream, pingpong, conns or idle, one of the TLS
	// scenarios: tls-stream, tls-pingpong, tls-handshake, tls-idle, one
	// of the HTTP ones: http-hello, http-64k, http-upload, http-idle, or
	// one of the HTTP/2 ones: h2-hello, h2-idle.
	Scenario string `json:"scenario"`
	Conns    int    `json:"conns"` // connections (concurrent clients, for tls-handshake)
	Size     int    `json:"size"`  // bytes per message (write, for stream; body per request, for HTTP)
	// Streams is h2-hello's concurrent streams per connection (h2load
	// -m); 0 in every other case.
	Streams int `json:"streams,omitempty"`
}

const (
	streamChunk   = 64 << 10 // stream's write size
	connsSize     = 1 << 10  // conns' message size
	handshakeSize = 64       // tls-handshake's echo per connection
)

// tlsPrefix starts the names of the TLS scenarios, which run only
// against TLS servers, as the others run only against plain ones.
const tlsPrefix = "tls-"

// TLS reports whether c is a TLS case: its server speaks TLS and its
// clients are crypto/tls's.
func (c Case) TLS() bool { return strings.HasPrefix(c.Scenario, tlsPrefix) }

// base is the scenario without its tls-, http- or h2- prefix: the plain
// scenario a TLS one repeats over TLS, or handshake; idle for http-idle
// and h2-idle, which measure what idle does.
func (c Case) base() string {
	s := strings.TrimPrefix(c.Scenario, tlsPrefix)
	return strings.TrimPrefix(strings.TrimPrefix(s, httpPrefix), h2Prefix)
}

// Reference is the server every ratio of the case is taken against:
// std net's echo, over crypto/tls for a TLS case; net/http's server for
// an HTTP case, and its HTTP/2 server for an HTTP/2 one.
func (c Case) Reference() string {
	switch c.kind() {
	case kindTLS:
		return "std-tls"
	case kindHTTP:
		return "std-http"
	case kindH2:
		return "std-h2"
	}
	return "stdnet"
}

// Key names the case in file names and JSON: stream, pingpong-50x4,
// conns-8192, idle-10000, tls-pingpong-50x1024, tls-handshake-16,
// http-hello-1000, h2-hello-50x10 (connections × streams).
func (c Case) Key() string {
	switch c.base() {
	case "stream":
		return c.Scenario
	case "pingpong":
		return fmt.Sprintf("%s-%dx%d", c.Scenario, c.Conns, c.Size)
	}
	if c.Streams > 0 {
		return fmt.Sprintf("%s-%dx%d", c.Scenario, c.Conns, c.Streams)
	}
	return fmt.Sprintf("%s-%d", c.Scenario, c.Conns)
}

// Title describes the case for people.
func (c Case) Title() string {
	switch c.kind() {
	case kindHTTP:
		return c.httpTitle()
	case kindH2:
		return c.h2Title()
	}
	conn := "conn"
	if c.TLS() {
		conn = "TLS conn"
	}
	conns := conn + "s"
	switch c.base() {
	case "stream":
		return fmt.Sprintf("%s: 1 %s, 64 KiB writes echoed", c.Scenario, conn)
	case "pingpong":
		return fmt.Sprintf("%s: %s %s × %s, closed loop", c.Scenario, count(c.Conns), conns, size(c.Size))
	case "conns":
		return fmt.Sprintf("conns: %s conns each echo 1 KiB per round", count(c.Conns))
	case "handshake":
		return fmt.Sprintf("%s: %s clients, each a new conn per full handshake and %s echo", c.Scenario, count(c.Conns), size(c.Size))
	}
	return fmt.Sprintf("%s: %s idle %s", c.Scenario, count(c.Conns), conns)
}

// Unit is the unit of the case's headline figure.
func (c Case) Unit() string {
	switch c.kind() {
	case kindHTTP:
		return c.httpUnit()
	case kindH2:
		return c.h2Unit()
	}
	switch c.base() {
	case "stream":
		return "MB/s"
	case "pingpong":
		return "msg/s"
	case "conns":
		return "ms/round"
	case "handshake":
		return "handshakes/s"
	}
	return "B/conn"
}

// LowerIsBetter reports whether smaller headline figures are better.
func (c Case) LowerIsBetter() bool { return c.base() == "conns" || c.base() == "idle" }

// count writes n with thousands separators: 19,000.
func count(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d B", n)
}
