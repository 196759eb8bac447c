package httpd

// Committing a response and sending its frames: the head as the handler
// left it, the body in DATA frames within the windows, the trailers.

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http/httpguts"
)

// commit sends the HEADERS. When final (the handler returned) the
// buffer is the whole body: it goes with them, with its length. next is
// what the handler is writing past the buffer, to sniff the type from
// when the buffer is empty.
func (w *h2writer) commit(final bool, next []byte) error {
	w.mu.Lock()
	w.committed = true
	w.mu.Unlock()
	h := w.snap
	for _, v := range h["Trailer"] {
		for _, f := range strings.Split(v, ",") {
			if f = http.CanonicalHeaderKey(strings.TrimSpace(f)); httpguts.ValidTrailerHeader(f) {
				w.trailers = append(w.trailers, f)
			}
		}
	}
	if v, ok := h["Connection"]; ok {
		// Not HTTP/2's (§8.2.2); "close" still asks for the connection
		// to end, as net/http reads it.
		if len(v) > 0 && v[0] == "close" {
			go w.st.h.shutdown()
		}
	}
	if final && w.declared < 0 && bodyAllowed(w.status) && (w.st.req.Method != "HEAD" || w.written > 0) {
		h.Set("Content-Length", strconv.FormatInt(w.written, 10))
	}
	if bodyAllowed(w.status) {
		sniff := w.buf
		if len(sniff) == 0 {
			sniff = next
		}
		if _, ok := h["Content-Type"]; !ok && h.Get("Content-Encoding") == "" && len(sniff) > 0 {
			h.Set("Content-Type", http.DetectContentType(sniff[:min(len(sniff), 512)]))
		}
	}
	if _, ok := h["Date"]; !ok {
		h.Set("Date", string(date()))
	}
	body := w.buf
	if w.noBody {
		body = nil
	}
	if !final {
		return w.sendHeaders(w.status, h, false)
	}
	t := w.trailer()
	if len(body) > 0 && t == nil && w.st.take(len(body)) {
		// The whole response in one write: HEADERS, then DATA with
		// END_STREAM.
		w.st.localEnded()
		return w.fail(w.st.h.writeHead(w.st, w.status, h, false, body))
	}
	if err := w.sendHeaders(w.status, h, len(body) == 0 && t == nil); err != nil || len(body) == 0 && t == nil {
		return err
	}
	if len(body) > 0 {
		if err := w.sendData(body, t == nil); err != nil || t == nil {
			return err
		}
	}
	return w.sendHeaders(0, t, true)
}

// trailer gathers the trailers to send, as net/http does: the declared
// ones the handler set, and those named with http.TrailerPrefix; nil
// when there are none.
func (w *h2writer) trailer() http.Header {
	var t http.Header
	for k, vv := range w.header {
		if name, ok := cutPrefix(k, http.TrailerPrefix); ok && len(vv) > 0 {
			if t == nil {
				t = make(http.Header)
			}
			t[http.CanonicalHeaderKey(name)] = vv
		}
	}
	for _, k := range w.trailers {
		if vv := w.header[k]; len(vv) > 0 {
			if t == nil {
				t = make(http.Header)
			}
			t[k] = append(t[k], vv...)
		}
	}
	return t
}

// sendHeaders sends a header block: a response's head when status is not
// 0, else its trailers; with END_STREAM when end.
func (w *h2writer) sendHeaders(status int, fields http.Header, end bool) error {
	st := w.st
	if end {
		st.localEnded() // before the client can see the end and reuse nothing of it
	}
	return w.fail(st.h.writeHeaders(st, status, fields, end))
}

// sendData sends p in DATA frames within the windows, the last with
// END_STREAM when end.
func (w *h2writer) sendData(p []byte, end bool) error {
	st := w.st
	if err := st.ended(); err != nil {
		return w.fail(err) // nothing goes on a stream reset (RFC 9113 §6.4)
	}
	for {
		n := 0
		if len(p) > 0 {
			k, err := st.reserve(len(p))
			if err != nil {
				return w.fail(err)
			}
			n = k
		}
		last := end && n == len(p)
		fh := h2frame.Header{Length: uint32(n), Type: h2frame.TypeData, StreamID: st.id}
		if last {
			fh.Flags = h2frame.FlagEndStream
			// The stream is closed on this side before the client can
			// see it closed: a frame it sends for it then is answered
			// as for a closed stream (h2spec 5.1).
			st.localEnded()
		}
		if _, err := st.h.ec.Writev([][]byte{fh.AppendTo(w.fh[:0]), p[:n]}); err != nil {
			return w.fail(errH2Closed)
		}
		st.h.wrote.Store(true)
		if last {
			return nil
		}
		if p = p[n:]; len(p) == 0 {
			return nil
		}
		if err := st.drain(); err != nil {
			return w.fail(err)
		}
	}
}

// fail records a write's error, which every later write returns.
func (w *h2writer) fail(err error) error {
	if err != nil && w.err == nil {
		w.err = err
	}
	return err
}

// writeContinue answers "Expect: 100-continue" when the handler first
// reads the body, unless the response has begun.
func (w *h2writer) writeContinue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.committed {
		return
	}
	w.st.h.writeHeaders(w.st, http.StatusContinue, nil, false)
}

// writeInformational sends a 1xx response (103 Early Hints, say) with the
// header as it stands.
func (w *h2writer) writeInformational(code int) {
	if code == http.StatusContinue {
		w.st.h.mu.Lock()
		w.st.sentCont = true
		w.st.h.mu.Unlock()
	}
	w.st.h.writeHeaders(w.st, code, w.header, false)
}

// localEnded records that the response's END_STREAM went, and ends the
// stream if the client's had come.
func (st *h2stream) localEnded() {
	h := st.h
	h.mu.Lock()
	st.localDone = true
	both := st.remoteDone && st.err == nil
	h.mu.Unlock()
	if both {
		h.closeStream(st)
	}
}
