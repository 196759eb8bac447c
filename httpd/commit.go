package httpd

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// commit writes the response's head, with the body buffered so far when
// final (the handler returned, so the buffer is the whole body and its
// length the Content-Length). It decides the framing and whether the
// connection stays open with net/http's rules (chunkWriter.writeHeader).
func (w *response) commit(final bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.committed = true
	h, req := w.header, w.req
	isHEAD := req.Method == "HEAD"
	isCONNECT := connectTunnels && req.Method == "CONNECT"
	tunnel := isCONNECT && w.status >= 200 && w.status < 300
	trailers := false
	for k := range h {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			trailers = true
		}
	}
	for _, v := range h["Trailer"] {
		trailers = true
		for _, f := range strings.Split(v, ",") {
			// net/http's declareTrailer: fields a trailer may not carry
			// (RFC 9110 section 6.5.1), and invalid names, are dropped.
			if f = http.CanonicalHeaderKey(strings.TrimSpace(f)); httpguts.ValidTrailerHeader(f) {
				w.trailers = append(w.trailers, f)
			}
		}
	}
	te := field(h, "Transfer-Encoding")
	hasTE := te != ""
	var clen int64 = -1
	setCL := false
	if final && !trailers && !hasTE && bodyAllowed(w.status) && w.declared < 0 && (!isHEAD || w.written > 0) {
		clen, setCL = w.written, true
	} else if w.declared >= 0 {
		clen = w.declared
	}
	hasCL := clen >= 0
	ka := w.c.keepAlive()
	wants10KA := !req.ProtoAtLeast(1, 1) && hasToken(field(req.Header, "Connection"), "keep-alive")
	var connHdr string
	if wants10KA && ka && field(h, "Content-Length") != "" && field(h, "Connection") == "keep-alive" {
		w.closeAfter = false
	}
	if wants10KA && (isHEAD || hasCL || !bodyAllowed(w.status)) {
		if _, set := h["Connection"]; !set {
			connHdr = "keep-alive"
		}
	} else if !req.ProtoAtLeast(1, 1) || wantsClose(req) || isH2Upgrade(req) {
		w.closeAfter = true
	}
	if field(h, "Connection") == "close" || !ka {
		w.closeAfter = true
	}
	if w.ex.body.expecting() {
		w.closeAfter = true // the client may or may not send the body
	}
	if w.ex.body.failed(req.ContentLength) {
		w.closeAfter = true // the stream is broken past the body's end
	}
	if isCONNECT {
		w.closeAfter = true // a connection is not reused after CONNECT, even refused
	}
	if !w.closeAfter && w.bodyTooBig(final, req.ContentLength) {
		w.closeAfter = true
		delete(h, "Connection")
		connHdr = "close"
	}
	exclude := func(k string) bool { return strings.HasPrefix(k, http.TrailerPrefix) }
	var ctype string
	if bodyAllowed(w.status) {
		_, haveType := h["Content-Type"]
		if field(h, "Content-Encoding") == "" && !haveType && !hasTE && len(w.buf) > 0 {
			ctype = http.DetectContentType(w.buf)
		}
	} else if w.status == http.StatusNotModified {
		delete(h, "Content-Type")
		delete(h, "Content-Length")
		delete(h, "Transfer-Encoding")
	}
	if hasCL && hasTE && te != "identity" {
		w.c.s.logf("http: WriteHeader called with both Transfer-Encoding of %q and a Content-Length of %d", te, clen)
		delete(h, "Content-Length")
		hasCL, setCL = false, false
	}
	var teHdr string
	switch {
	case tunnel:
		// The tunnel is established: what follows is no longer HTTP.
		delete(h, "Transfer-Encoding")
		delete(h, "Content-Length")
		hasCL, setCL = false, false
	case isHEAD || !bodyAllowed(w.status) || w.status == http.StatusNoContent:
		delete(h, "Transfer-Encoding")
	case hasCL:
		delete(h, "Transfer-Encoding")
	case req.ProtoAtLeast(1, 1):
		if hasTE && te == "identity" {
			w.closeAfter = true
			delete(h, "Transfer-Encoding")
		} else {
			w.chunking = true
			teHdr = "chunked"
			if hasTE && te == "chunked" {
				delete(h, "Transfer-Encoding")
			}
		}
	default:
		w.closeAfter = true
		delete(h, "Transfer-Encoding")
	}
	if w.chunking {
		delete(h, "Content-Length")
		setCL = false
	}
	if w.closeAfter && (!ka || !hasToken(field(h, "Connection"), "close")) && !isSwitch(w.status, h) {
		delete(h, "Connection")
		if req.ProtoAtLeast(1, 1) && !tunnel {
			connHdr = "close"
		} else if connectTunnels {
			connHdr = "" // Go 1.27's net/http drops a 1.0 keep-alive here too
		}
	}
	b := appendStatusLine(w.head[:0], req.ProtoAtLeast(1, 1), w.status)
	b = w.appendHeader(b, h, exclude)
	if ctype != "" {
		b = appendField(b, "Content-Type", ctype)
	}
	if connHdr != "" {
		b = appendField(b, "Connection", connHdr)
	}
	if teHdr != "" {
		b = appendField(b, "Transfer-Encoding", teHdr)
	}
	if _, ok := h["Date"]; !ok {
		b = append(b, "Date: "...)
		b = append(b, date()...)
		b = append(b, "\r\n"...)
	}
	if setCL {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, clen, 10)
		b = append(b, "\r\n"...)
	}
	w.head = append(b, "\r\n"...)
	if w.noBody {
		w.buf = w.buf[:0]
	}
}

// appendHeader appends h's fields but those excluded, sorted by name as
// net/http writes them, with CR and LF in values turned to spaces and
// fields with invalid names left out.
func (w *response) appendHeader(b []byte, h http.Header, exclude func(string) bool) []byte {
	keys := w.keys[:0]
	for k := range h {
		if !exclude(k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		for _, v := range h[k] {
			b = appendField(b, k, v)
		}
	}
	w.keys = keys[:0]
	return b
}

func appendField(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, ": "...)
	v = strings.TrimSpace(v)
	if !strings.ContainsAny(v, "\r\n") {
		b = append(b, v...)
		return append(b, "\r\n"...)
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c == '\r' || c == '\n' {
			c = ' '
		}
		b = append(b, c)
	}
	return append(b, "\r\n"...)
}

func appendStatusLine(b []byte, is11 bool, code int) []byte {
	if is11 && code == http.StatusOK {
		return append(b, "HTTP/1.1 200 OK\r\n"...)
	}
	if is11 {
		b = append(b, "HTTP/1.1 "...)
	} else {
		b = append(b, "HTTP/1.0 "...)
	}
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, ' ')
	if text := http.StatusText(code); text != "" {
		b = append(b, text...)
	} else {
		b = append(b, "status code "...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	return append(b, "\r\n"...)
}

// bodyAllowed reports whether a response with status may have a body
// (RFC 9110 sections 6.4.1, 15.3.5 and 15.4.5).
func bodyAllowed(status int) bool {
	switch {
	case status >= 100 && status <= 199:
		return false
	case status == http.StatusNoContent, status == http.StatusNotModified:
		return false
	}
	return true
}

// wantsClose reports whether the client asked to close after this
// request: close in any of its Connection fields. http.ReadRequest sets
// r.Close from all of them, and removes the fields when it does.
func wantsClose(r *http.Request) bool {
	return r.Close || hasToken(field(r.Header, "Connection"), "close")
}

func isSwitch(status int, h http.Header) bool {
	return status == http.StatusSwitchingProtocols && hasToken(field(h, "Connection"), "upgrade")
}

// hasToken reports whether token appears in v, ignoring case, between
// token boundaries (space, tab or comma, or v's ends): net/http's rule
// for the Connection field, looser than a list's (so "foo close"
// closes too).
func hasToken(v, token string) bool {
	for i := 0; i+len(token) <= len(v); i++ {
		if i > 0 && !isTokenBoundary(v[i-1]) {
			continue
		}
		if end := i + len(token); end < len(v) && !isTokenBoundary(v[end]) {
			continue
		}
		if strings.EqualFold(v[i:i+len(token)], token) {
			return true
		}
	}
	return false
}

func isTokenBoundary(b byte) bool { return b == ' ' || b == ',' || b == '\t' }

// dateNow caches the Date field's value for the current second.
var dateNow atomic.Pointer[dateValue]

type dateValue struct {
	sec int64
	v   []byte
}

func date() []byte {
	now := time.Now()
	if d := dateNow.Load(); d != nil && d.sec == now.Unix() {
		return d.v
	}
	d := &dateValue{sec: now.Unix(), v: now.UTC().AppendFormat(nil, http.TimeFormat)}
	dateNow.Store(d)
	return d.v
}

// bodyTooBig reports whether the request's body has at least maxDiscard
// bytes unread as the response's head is written, so that the connection
// closes after the response rather than drop them, and the head says so
// (net/http's requestTooLarge). Before the handler returns, only a body of
// known length counts, and not under EnableFullDuplex: the handler may
// still read a chunked one.
func (w *response) bodyTooBig(final bool, length int64) bool {
	if w.ex.bodyDone.Load() || (!final && (length < 0 || w.fullDuplex)) {
		return false
	}
	return w.ex.body.unread(length) >= maxDiscard
}

// field is h.Get(key) for a key already in canonical form (a constant
// here): the first value, or "", without canonicalizing key again.
func field(h http.Header, key string) string {
	if v := h[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}
