package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/galeio/gale/engine"
)

// body is every successful response's.
const body = "Hello, TLS!\n"

// server is the engine's handler. It keeps nothing per connection: a
// request head waits in the Inbound until it is whole, and requests
// with a body are refused, so there is none to skip.
type server struct{ engine.BaseHandler }

// OnData answers the whole requests received, in one Write. The engine
// decrypted them, and Write encrypts the responses.
func (s *server) OnData(c *engine.Conn, in *engine.Inbound) engine.Action {
	b, _ := in.Peek(in.Len())
	n, out, quit := answer(b, nil, time.Now())
	in.Discard(n)
	if len(out) > 0 {
		if _, err := c.Write(out); err != nil {
			return engine.Close
		}
	}
	if quit {
		return engine.Close // once the responses are written
	}
	return engine.None
}

// answer appends to out the responses to the whole requests at the start
// of b, and returns how many bytes of b they took, and quit if the
// connection must close after the responses: a request asked for it, or
// was refused.
func answer(b, out []byte, now time.Time) (n int, _ []byte, quit bool) {
	date := now.UTC().AppendFormat([]byte("Date: "), http.TimeFormat)
	for {
		h, k, err := parseHead(b[n:])
		switch {
		case err != nil:
			return n, appendResponse(out, date, int(err.(statusError)), false, true), true
		case k == 0:
			return n, out, false // the rest of the head is still to come
		case h.body:
			return n, appendResponse(out, date, statusNotImplemented, false, true), true
		}
		n += k
		out = appendResponse(out, date, statusOK, string(h.method) == "HEAD", !h.keepAlive)
		if !h.keepAlive {
			return n, out, true
		}
	}
}

// appendResponse appends a response with status code: body for 200, the
// status text for others; without the body for HEAD (RFC 9110 §9.3.2).
// close adds "Connection: close" (RFC 9112 §9.6).
func appendResponse(out, date []byte, code int, head, close bool) []byte {
	text := statusText(code)
	content := body
	if code != statusOK {
		content = text + "\n"
	}
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, ' ')
	out = append(out, text...)
	out = append(out, "\r\n"...)
	out = append(out, date...)
	out = append(out, "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "...)
	out = strconv.AppendInt(out, int64(len(content)), 10)
	if close {
		out = append(out, "\r\nConnection: close"...)
	}
	out = append(out, "\r\n\r\n"...)
	if !head {
		out = append(out, content...)
	}
	return out
}
