package httpd

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http/httpguts"
	"golang.org/x/net/http2/hpack"
)

// writeHeaders encodes a header block for st (with :status unless status
// is 0, as for trailers) and sends it in a HEADERS frame and as many
// CONTINUATIONs as the client's frame size asks, with END_STREAM when
// end. Blocks are encoded and written under encMu, in the order of the
// encoder's state. The handler's goroutine (the loop for refusals).
func (h *h2conn) writeHeaders(st *h2stream, status int, fields http.Header, end bool) error {
	return h.writeHead(st, status, fields, end, nil)
}

// writeHead is writeHeaders with data, when not nil, sent after the
// block in the same write as one DATA frame with END_STREAM (its window
// taken already): a whole response in one system call.
func (h *h2conn) writeHead(st *h2stream, status int, fields http.Header, end bool, data []byte) error {
	h.mu.Lock()
	err := st.err
	maxFrame := int(h.peerFrame)
	h.mu.Unlock()
	if err != nil {
		return err
	}
	h.encMu.Lock()
	defer h.encMu.Unlock()
	bp, op := h2Bufs.Get().(*[]byte), h2Bufs.Get().(*[]byte)
	h.sink.b = (*bp)[:0]
	if status != 0 {
		h.enc.WriteField(hpack.HeaderField{Name: ":status", Value: statusText(status)})
	}
	for k, vv := range fields {
		h.encodeField(k, vv)
	}
	block := h.sink.b
	h.sink.b = nil
	n := min(len(block), maxFrame)
	out := h2frame.AppendHeaders((*op)[:0], st.id, end, n == len(block), block[:n])
	for rest := block[n:]; len(rest) > 0; rest = rest[n:] {
		n = min(len(rest), maxFrame)
		out = h2frame.AppendContinuation(out, st.id, n == len(rest), rest[:n])
	}
	if data != nil {
		out = h2frame.AppendData(out, st.id, true, data)
	}
	_, err = h.ec.Write(out) // copied if it is not sent at once
	h.wrote.Store(true)
	putH2Buf(bp, block)
	putH2Buf(op, out)
	if err != nil {
		return errH2Closed
	}
	return nil
}

// encodeField encodes one response field, lower-cased, unless HTTP/2
// forbids it (the connection's fields, §8.2.2) or it is a trailer
// announced by name, or invalid.
func (h *h2conn) encodeField(k string, vv []string) {
	if strings.HasPrefix(k, http.TrailerPrefix) || !httpguts.ValidHeaderFieldName(k) {
		return
	}
	name := lowerName(k)
	switch name {
	case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return
	}
	// A length is not indexed: it changes with every response, and would
	// only churn the dynamic table, which every idle connection keeps
	// (Date, which changes once a second, is worth its entry).
	volatile := name == "content-length"
	for _, v := range vv {
		if !httpguts.ValidHeaderFieldValue(v) || name == "te" && v != "trailers" {
			continue
		}
		h.enc.WriteField(hpack.HeaderField{Name: name, Value: v, Sensitive: volatile})
	}
}

// h2Bufs lend header blocks and their frames a buffer for one write, so
// that an idle connection keeps none.
var h2Bufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

func putH2Buf(p *[]byte, b []byte) {
	if cap(b) <= 16<<10 {
		*p = b[:0]
		h2Bufs.Put(p)
	}
}

// encSink is what the connection's encoder writes to: the buffer lent for
// the block being encoded (under encMu).
type encSink struct{ b []byte }

func (s *encSink) Write(p []byte) (int, error) {
	s.b = append(s.b, p...)
	return len(p), nil
}

// lowerNames are the lower-case forms of common canonical names, so
// that the usual response needs no allocation to lower its names.
var lowerNames = func() map[string]string {
	m := make(map[string]string)
	for _, k := range []string{"Accept-Ranges", "Age", "Cache-Control", "Content-Disposition", "Content-Encoding",
		"Content-Language", "Content-Length", "Content-Location", "Content-Range", "Content-Type", "Date", "Etag",
		"Expires", "Last-Modified", "Link", "Location", "Retry-After", "Server", "Set-Cookie", "Strict-Transport-Security",
		"Trailer", "Vary", "Www-Authenticate", "X-Content-Type-Options", "X-Frame-Options", "Grpc-Status",
		"Grpc-Message", "Grpc-Encoding", "Grpc-Accept-Encoding", "Access-Control-Allow-Origin"} {
		m[k] = strings.ToLower(k)
	}
	return m
}()

func lowerName(k string) string {
	if v, ok := lowerNames[k]; ok {
		return v
	}
	return strings.ToLower(k)
}

// statusText is a status code's three digits.
func statusText(code int) string {
	switch code {
	case 200:
		return "200"
	case 204:
		return "204"
	case 304:
		return "304"
	case 404:
		return "404"
	}
	return strconv.Itoa(code)
}
