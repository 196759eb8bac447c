package httpd

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
	"golang.org/x/net/http/httpguts"
)

// A request's head is framed here, on the loop, as its bytes arrive: the
// loop keeps them unconsumed in the connection's input, and each call
// searches only the bytes it has not searched before for the blank line
// that ends the head. Once the head is whole, net/http's parser reads it.

// headSlack is what net/http's server reads beyond MaxHeaderBytes before
// it answers 431 (its read limit is MaxHeaderBytes plus a bufio.Reader's
// worth).
const headSlack = 4096

func (s *Server) maxHead() int {
	n := s.MaxHeaderBytes
	if n <= 0 {
		n = http.DefaultMaxHeaderBytes
	}
	return n + headSlack
}

// headEnd returns the length of the head at the front of b, through the
// blank line that ends it (a line ending "\n" or "\r\n", as net/http's
// textproto reader takes lines), or -1 if b holds no whole head. from is
// where the search may start: the bytes before it were searched.
func headEnd(b []byte, from int) int {
	if len(b) > 0 && b[0] == '\n' {
		return 1 // an empty request line: net/http refuses it
	}
	if len(b) > 1 && b[0] == '\r' && b[1] == '\n' {
		return 2
	}
	for i := from; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		switch {
		case i < len(b) && b[i] == '\n':
			return i + 1
		case i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n':
			return i + 2
		}
	}
	return -1
}

// readHead frames and parses the head at the front of in. It reports
// true once a request has been handed to a handler, and false when the
// head is not whole yet or was refused (with the action to take).
func (c *conn) readHead(in *engine.Inbound) (engine.Action, bool) {
	s := c.s
	b := in.Bytes()
	if !c.inHead && c.served {
		// Between requests net/http's server waits for 4 bytes (a Peek)
		// before it reads the next head: fewer, then the client's end, and
		// it closes without a word ("\n" after a request is no 400).
		if len(b) < 4 && !c.eof {
			return engine.None, false
		}
		if c.afterPOST {
			// It tolerates up to 4 CR or LF bytes after a POST's body
			// (RFC 9112 section 2.2, for old clients).
			n := 0
			for n < min(4, len(b)) && (b[n] == '\r' || b[n] == '\n') {
				n++
			}
			in.Discard(n)
			b = b[n:]
			c.afterPOST = false
		}
	}
	if !c.inHead {
		// The head's first bytes: as in net/http, the idle timeout ends
		// and the header timeout runs from here (from the connection's
		// start for its first request).
		c.inHead = true
		now := time.Now()
		c.headAt = now.UnixNano()
		s.setState(c, http.StateActive)
		if c.served {
			if d := s.headerTimeout(); d > 0 {
				c.ec.SetReadDeadline(now.Add(d))
			} else if s.idleTimeout() > 0 {
				c.ec.SetReadDeadline(time.Time{})
			}
		}
	}
	end := headEnd(b, int(c.scanned))
	if end < 0 || end > s.maxHead() {
		if len(b) > s.maxHead() {
			return c.refuse(in, errTooLarge), false
		}
		c.scanned = int32(max(0, len(b)-2))
		return engine.None, false
	}
	req, ctx, err := c.parseHead(b[:end])
	in.Discard(end)
	c.scanned, c.inHead = 0, false
	if err != nil {
		return c.refuse(in, err), false
	}
	c.served = true
	c.afterPOST = req.Method == "POST"
	if c.tls == nil && s.h2c() {
		if settings, ok := wantsH2c(req); ok {
			return c.upgradeH2c(req, settings, in), false
		}
	}
	return c.begin(req, ctx, in)
}

// headReader reads a framed head for http.ReadRequest.
type headReader struct {
	src bytes.Reader
	br  *bufio.Reader
}

var headReaders = sync.Pool{New: func() any {
	h := &headReader{}
	h.br = bufio.NewReaderSize(&h.src, 4096)
	return h
}}

// parseHead parses a whole head as net/http's server does: the common
// shape by parseSimple, whose request has its context already (returned
// too), any other by parseStd (nil context).
func (c *conn) parseHead(head []byte) (*http.Request, *reqCtx, error) {
	limit := c.s.maxHeaderValues()
	if req, ctx := parseSimple(head, limit, c); req != nil {
		return req, ctx, nil
	}
	req, err := parseStd(head, limit)
	return req, nil, err
}

// parseStd parses a whole head with net/http's parser, then the checks
// its server adds.
func parseStd(head []byte, maxValues int) (*http.Request, error) {
	h := headReaders.Get().(*headReader)
	h.src.Reset(head)
	h.br.Reset(&h.src)
	req, err := http.ReadRequest(h.br)
	h.src.Reset(nil)
	h.br.Reset(&h.src)
	headReaders.Put(h)
	if err != nil {
		if isUnsupportedTE(err) {
			return nil, errUnsupportedTE
		}
		return nil, err
	}
	return req, checkRequest(req, head, maxValues)
}

// maxHeaderValues is MaxHeaderValueCount or its default.
func (s *Server) maxHeaderValues() int {
	if s.MaxHeaderValueCount > 0 {
		return s.MaxHeaderValueCount
	}
	return DefaultMaxHeaderValueCount
}

// isUnsupportedTE reports whether err is net/http's unsupportedTEError,
// which its server answers 501: a Transfer-Encoding other than "chunked",
// or more than one Transfer-Encoding field ("too many transfer
// encodings"). The type is unexported, so it is known by its name.
func isUnsupportedTE(err error) bool {
	return reflect.TypeOf(err).String() == "*http.unsupportedTEError"
}

// checkRequest applies the rules net/http's server adds to its parser's,
// and Go 1.27's cap on the head's field lines (maxValues; each value is
// one, the Host field included). http.ReadRequest has moved the Host
// field to req.Host, so its presence and value are taken from the head.
func checkRequest(req *http.Request, head []byte, maxValues int) error {
	if req.ProtoMajor != 1 && !(req.ProtoMajor == 2 && req.ProtoMinor == 0 && req.Method == "PRI" && req.RequestURI == "*") {
		return statusError{http.StatusHTTPVersionNotSupported, "unsupported protocol version"}
	}
	host, haveHost := hostField(head)
	if req.ProtoAtLeast(1, 1) && !haveHost && !isH2Upgrade(req) && req.Method != "CONNECT" {
		return statusError{http.StatusBadRequest, "missing required Host header"}
	}
	if haveHost {
		v := req.Host
		if req.URL.Host != "" {
			v = string(host) // absolute form: the field is not req.Host
		}
		if !httpguts.ValidHostHeader(v) {
			return statusError{http.StatusBadRequest, "malformed Host header"}
		}
	}
	values := 0
	if haveHost {
		values++
	}
	for _, vv := range req.Header {
		values += len(vv)
	}
	if values > maxValues {
		return errTooLarge
	}
	for k, vv := range req.Header {
		if !httpguts.ValidHeaderFieldName(k) {
			return statusError{http.StatusBadRequest, "invalid header name"}
		}
		for _, v := range vv {
			if !httpguts.ValidHeaderFieldValue(v) {
				return statusError{http.StatusBadRequest, "invalid header value"}
			}
		}
	}
	return nil
}

// hostField finds the Host field in a head that http.ReadRequest
// accepted (so it has at most one), and returns its value, trimmed.
func hostField(head []byte) ([]byte, bool) {
	i := bytes.IndexByte(head, '\n')
	for i >= 0 && i+1 < len(head) {
		line := head[i+1:]
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		if len(line) >= 5 && line[4] == ':' && (line[0]|0x20) == 'h' && (line[1]|0x20) == 'o' && (line[2]|0x20) == 's' && (line[3]|0x20) == 't' {
			return bytes.Trim(line[5:], " \t\r"), true
		}
		k := bytes.IndexByte(head[i+1:], '\n')
		if k < 0 {
			break
		}
		i += k + 1
	}
	return nil, false
}

func isH2Upgrade(r *http.Request) bool {
	return r.Method == "PRI" && len(r.Header) == 0 && r.URL.Path == "*" && r.Proto == "HTTP/2.0"
}

// statusError answers a refused request with its status and text, as
// net/http's server does.
type statusError struct {
	code int
	text string
}

func (e statusError) Error() string { return http.StatusText(e.code) + ": " + e.text }

var (
	errTooLarge      = errors.New("httpd: request head too large")
	errUnsupportedTE = errors.New("httpd: unsupported transfer encoding")
)

// refuse answers a head that cannot be served, with the status and text
// net/http's server sends, and closes the connection after it.
func (c *conn) refuse(in *engine.Inbound, err error) engine.Action {
	c.quit.Store(true)
	const hdrs = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	var msg string
	status := http.StatusBadRequest
	switch e := err.(type) {
	case statusError:
		status = e.code
		st := fmt.Sprintf("%d %s: %s", e.code, http.StatusText(e.code), e.text)
		msg = "HTTP/1.1 " + st + hdrs + st
	default:
		switch err {
		case errTooLarge:
			status = http.StatusRequestHeaderFieldsTooLarge
			const st = "431 Request Header Fields Too Large"
			msg = "HTTP/1.1 " + st + hdrs + st
		case errUnsupportedTE:
			status = http.StatusNotImplemented
			msg = "HTTP/1.1 501 Not Implemented" + hdrs + "Unsupported transfer encoding"
		default:
			const st = "400 Bad Request"
			msg = "HTTP/1.1 " + st + hdrs + st
		}
	}
	c.s.refused.count(status)
	c.ec.Write([]byte(msg))
	c.linger(in)
	return engine.None
}
