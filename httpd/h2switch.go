package httpd

import (
	"encoding/base64"
	"net/http"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/h2frame"
)

// A connection speaks HTTP/2 from its start when TLS negotiated "h2",
// or, in the clear with UnencryptedHTTP2 on, when it begins with the
// preface (prior knowledge); or from a request that asks for it with
// "Upgrade: h2c" (RFC 7540 §3.2), which becomes stream 1.

// startH2 switches c to HTTP/2. The loop.
func (c *conn) startH2() *h2conn {
	h := newH2Conn(c)
	c.proto = h
	h.OnOpen(c.ec)
	return h
}

// h2c reports whether HTTP/2 in the clear is served.
func (s *Server) h2c() bool {
	_, _, ok := s.serves()
	return ok
}

// priorKnowledge switches a new cleartext connection that begins with
// HTTP/2's preface; it reports false when the input is no preface, and
// true, with nothing done, while the input is a preface's beginning. A
// server without HTTP/1 closes a connection that begins otherwise.
func (c *conn) priorKnowledge(in *engine.Inbound) (engine.Action, bool) {
	b := in.Bytes()
	n := min(len(b), len(h2Preface))
	if string(b[:n]) != h2Preface[:n] {
		if h1, _, _ := c.s.serves(); !h1 {
			c.quit.Store(true)
			return engine.Close, true
		}
		return engine.None, false
	}
	if n < len(h2Preface) {
		return engine.None, true
	}
	return c.startH2().OnData(c.ec, in), true
}

// wantsH2c reports whether req asks to upgrade to h2c, with a valid
// HTTP2-Settings field, and returns its settings' payload. A request
// with a body is served as HTTP/1.1 (an upgrade is the server's choice).
func wantsH2c(req *http.Request) ([]byte, bool) {
	if !hasToken(req.Header.Get("Upgrade"), "h2c") || !hasToken(req.Header.Get("Connection"), "HTTP2-Settings") ||
		!hasToken(req.Header.Get("Connection"), "Upgrade") || req.ContentLength != 0 || len(req.TransferEncoding) > 0 {
		return nil, false
	}
	vv := req.Header["Http2-Settings"]
	if len(vv) != 1 {
		return nil, false
	}
	p, err := base64.RawURLEncoding.DecodeString(vv[0])
	if err != nil || len(p)%6 != 0 {
		return nil, false
	}
	return p, true
}

// upgradeH2c answers req with 101 and serves it as HTTP/2's stream 1,
// its response the first on the new connection. The loop.
func (c *conn) upgradeH2c(req *http.Request, settings []byte, in *engine.Inbound) engine.Action {
	c.ec.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n"))
	c.ec.SetReadDeadline(time.Time{}) // HTTP/1's header timeout; HTTP/2's idle one starts when stream 1 ends
	h := c.startH2()
	f := h2frame.Frame{Header: h2frame.Header{Length: uint32(len(settings)), Type: h2frame.TypeSettings}, Payload: settings}
	if err := f.Settings(h.setting); err != nil {
		return h.fail(in, err)
	}
	for _, k := range []string{"Upgrade", "Connection", "Http2-Settings", "Keep-Alive", "Proxy-Connection", "Te", "Transfer-Encoding"} {
		delete(req.Header, k)
	}
	req.Proto, req.ProtoMajor, req.ProtoMinor = "HTTP/2.0", 2, 0
	req.RemoteAddr, req.TLS = c.raddr, c.tls
	req.Body = http.NoBody
	h.lastID = 1
	h.mu.Lock()
	st := h.newStream(1, req, -1, true)
	h.addStream(st)
	h.handlers++
	h.active = true
	h.mu.Unlock()
	if !c.s.pool.submit(st) {
		h.mu.Lock()
		h.handlers--
		st.handlerDone = true
		h.mu.Unlock()
		h.reset(st, h2frame.ErrCodeRefusedStream, errNoHandlers)
	}
	return h.OnData(c.ec, in)
}
