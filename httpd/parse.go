package httpd

import (
	"bytes"
	"net/http"
	"net/textproto"
	"net/url"

	"golang.org/x/net/http/httpguts"
)

// The common request head is parsed here, on the loop, straight into the
// *http.Request a handler gets: one pass over the bytes, then one string
// for all of the head's text, one header map, and one allocation for the
// URL, a short header's values and the request's context; the request is
// filled on the stack and copied once, by WithContext. Anything out of
// the common shape (an escaped or absolute target, obs-fold, a bare LF, a
// Transfer-Encoding, bytes above 0x7E, a head net/http would refuse) is
// left to http.ReadRequest, so errors and rare forms keep net/http's
// exact behaviour; FuzzParseSimple holds the two parsers to the same
// result wherever this one answers.

// maxSimpleFields is the most field lines parseSimple takes; a head with
// more goes to http.ReadRequest.
const maxSimpleFields = 32

// simpleHead is what parseSimple's scan finds: offsets into the head.
type simpleHead struct {
	method, target, query int // ends of the method and path; query's start, or -1
	targetEnd             int
	minor                 int // HTTP/1.minor
	n                     int // field lines
	host                  int // index of the Host line, or -1
	contentLength         int64
	fields                [maxSimpleFields]simpleField
}

// simpleField is one field line: the name's and value's bounds, and
// whether the name is in canonical form.
type simpleField struct {
	k0, k1, v0, v1 int32
	canonical      bool
}

// simpleParts are a parsed request's URL, the values of a short header
// and the request's context, allocated together.
type simpleParts struct {
	url  url.URL
	vals [4]string
	ctx  reqCtx
}

// parseSimple parses head (a whole head, through its blank line) as
// http.ReadRequest and the server's checks would, when it is of the
// common shape and valid, and returns nil otherwise. The request has its
// context, a new one of c's (returned too). maxValues is checkRequest's.
func parseSimple(head []byte, maxValues int, c *conn) (*http.Request, *reqCtx) {
	var h simpleHead
	if !h.scan(head) || h.n > maxValues || h.minor == 1 && h.host < 0 {
		return nil, nil
	}
	return h.build(string(head), c)
}

// scan reads head's request line and field lines into h, and reports
// whether they are of the shape build takes.
func (h *simpleHead) scan(b []byte) bool {
	h.method = bytes.IndexByte(b, ' ')
	if h.method <= 0 || !isTokenBytes(b[:h.method]) {
		return false
	}
	i, ok := h.scanTarget(b, h.method+1)
	if !ok || len(b) < i+10 || string(b[i:i+7]) != "HTTP/1." || b[i+8] != '\r' || b[i+9] != '\n' {
		return false
	}
	switch b[i+7] {
	case '0':
		h.minor = 0
	case '1':
		h.minor = 1
	default:
		return false
	}
	switch string(b[:h.method]) {
	case "CONNECT", "PRI":
		return false // their own forms, net/http's
	}
	h.host = -1
	return h.scanFields(b, i+10)
}

// scanTarget reads an origin-form target of bytes that need no escaping
// from b[i:], through the space after it, and returns where the version
// starts.
func (h *simpleHead) scanTarget(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '/' {
		return 0, false
	}
	h.query = -1
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == ' ':
			h.target, h.targetEnd = i, i
			if h.query >= 0 {
				h.target = h.query - 1
			}
			return i + 1, true
		case h.query < 0 && c == '?':
			h.query = i + 1
		case h.query < 0 && !pathBytes.has(c), h.query >= 0 && (c < 0x21 || c > 0x7e):
			return 0, false
		}
	}
	return 0, false
}

// scanFields reads the field lines from b[i:] to the blank line that
// ends them, which must end b.
func (h *simpleHead) scanFields(b []byte, i int) bool {
	for {
		if len(b)-i == 2 && b[i] == '\r' && b[i+1] == '\n' {
			return true
		}
		if h.n == maxSimpleFields {
			return false
		}
		f := &h.fields[h.n]
		k, canonical, ok := scanName(b, i)
		if !ok {
			return false
		}
		v0, v1, next, ok := scanValue(b, k+1)
		if !ok {
			return false
		}
		*f = simpleField{int32(i), int32(k), int32(v0), int32(v1), canonical}
		if !h.special(b[i:k], b[v0:v1]) {
			return false
		}
		h.n++
		i = next
	}
}

// scanName reads a field name, a token, from b[i:] up to its colon, and
// returns the colon's index and whether the name is canonical.
func scanName(b []byte, i int) (int, bool, bool) {
	canonical, upper := true, true
	for j := i; j < len(b); j++ {
		c := b[j]
		if c == ':' {
			return j, canonical, j > i
		}
		if !tokenBytes.has(c) {
			return 0, false, false
		}
		if upper && 'a' <= c && c <= 'z' || !upper && 'A' <= c && c <= 'Z' {
			canonical = false
		}
		upper = c == '-'
	}
	return 0, false, false
}

// scanValue reads a field value from b[i:] through its CRLF, and returns
// its bounds without the spaces and tabs around it, and where the next
// line starts.
func scanValue(b []byte, i int) (v0, v1, next int, ok bool) {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t') {
		i++
	}
	v0 = i
	for ; i < len(b); i++ {
		c := b[i]
		if c == '\r' {
			break
		}
		if c != '\t' && (c < 0x20 || c > 0x7e) {
			return 0, 0, 0, false
		}
	}
	if i+1 >= len(b) || b[i+1] != '\n' {
		return 0, 0, 0, false
	}
	v1 = i
	for v1 > v0 && (b[v1-1] == ' ' || b[v1-1] == '\t') {
		v1--
	}
	// A next line that starts with a space or tab continues this one
	// (obs-fold): scanName refuses it.
	return v0, v1, i + 2, true
}

// special notes the fields the parser gives meaning to, and reports
// false for those it leaves to net/http's.
func (h *simpleHead) special(k, v []byte) bool {
	switch len(k) {
	case 4:
		if asciiEqualFold(k, "host") {
			if h.host >= 0 {
				return false
			}
			h.host = h.n
		}
	case 6:
		return !asciiEqualFold(k, "pragma")
	case 7:
		return !asciiEqualFold(k, "trailer")
	case 14:
		if asciiEqualFold(k, "content-length") {
			return h.contentLengthField(v)
		}
	case 17:
		return !asciiEqualFold(k, "transfer-encoding")
	}
	return true
}

// contentLengthField takes one Content-Length of up to 18 digits.
func (h *simpleHead) contentLengthField(v []byte) bool {
	if h.contentLength != 0 || len(v) == 0 || len(v) > 18 {
		return false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int64(c-'0')
	}
	h.contentLength = n + 1 // 0: not seen; the length is one less
	return true
}

// build makes the request from s, the head's text, with a new context
// of c's, or returns nil if its Host field is not valid. The request is
// filled in on the stack and copied once, by WithContext.
func (h *simpleHead) build(s string, c *conn) (*http.Request, *reqCtx) {
	var r http.Request
	if h.host >= 0 {
		f := h.fields[h.host]
		if r.Host = s[f.v0:f.v1]; !httpguts.ValidHostHeader(r.Host) {
			return nil, nil
		}
	}
	p := &simpleParts{ctx: reqCtx{parent: c.ctx, c: c}}
	r.Method = method(s[:h.method])
	r.RequestURI = s[h.method+1 : h.targetEnd]
	p.url.Path = s[h.method+1 : h.target]
	if h.query >= 0 {
		p.url.RawQuery = s[h.query:h.targetEnd]
		p.url.ForceQuery = h.query == h.targetEnd
	}
	r.URL = &p.url
	r.Proto, r.ProtoMajor, r.ProtoMinor = "HTTP/1.1", 1, h.minor
	if h.minor == 0 {
		r.Proto = "HTTP/1.0"
	}
	r.Header = h.header(s, p.vals[:0])
	r.ContentLength = max(h.contentLength-1, 0)
	r.Body = http.NoBody
	conn := r.Header["Connection"]
	r.Close = httpguts.HeaderValuesContainsToken(conn, "close") ||
		h.minor == 0 && !httpguts.HeaderValuesContainsToken(conn, "keep-alive")
	return r.WithContext(&p.ctx), &p.ctx
}

// header makes the request's Header, all but Host, its values cut from
// one slice as textproto cuts them: strs if it has room.
func (h *simpleHead) header(s string, strs []string) http.Header {
	n := h.n
	if h.host >= 0 {
		n--
	}
	m := make(http.Header, n)
	if cap(strs) < n {
		strs = make([]string, n)
	}
	strs = strs[:n]
	for i := range h.n {
		if i == h.host {
			continue
		}
		f := h.fields[i]
		k := s[f.k0:f.k1]
		if !f.canonical {
			k = textproto.CanonicalMIMEHeaderKey(k)
		}
		v := s[f.v0:f.v1]
		if vv := m[k]; vv != nil {
			m[k] = append(vv, v)
			continue
		}
		m[k], strs = strs[:1:1], strs[1:]
		m[k][0] = v
	}
	return m
}

// method returns the common methods as constants, so that their strings
// do not hold the head's.
func method(m string) string {
	switch m {
	case "GET":
		return "GET"
	case "HEAD":
		return "HEAD"
	case "POST":
		return "POST"
	case "PUT":
		return "PUT"
	case "DELETE":
		return "DELETE"
	case "OPTIONS":
		return "OPTIONS"
	case "PATCH":
		return "PATCH"
	}
	return m
}

// asciiEqualFold reports whether b is lower, ASCII letters of either
// case.
func asciiEqualFold(b []byte, lower string) bool {
	for i, c := range b {
		if c|0x20 != lower[i] {
			return false
		}
	}
	return true
}
