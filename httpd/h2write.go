package httpd

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/galeio/gale/internal/h2frame"
	"golang.org/x/net/http/httpguts"
)

// h2writer is an HTTP/2 stream's http.ResponseWriter. Like net/http's, it
// is for the handler's goroutine (or one at a time) until the handler
// returns. Bodies up to outBufSize written before the handler returns
// go out with the HEADERS and a Content-Length; longer ones in DATA
// frames as they come, within the client's windows.
type h2writer struct {
	st     *h2stream
	header http.Header // the handler's
	snap   http.Header // header as WriteHeader found it: what the HEADERS carry

	mu          sync.Mutex // orders 100 Continue against the HEADERS
	status      int
	wroteHeader bool // the status is fixed
	committed   bool // the HEADERS went
	noBody      bool // HEAD, or a status without a body
	declared    int64
	written     int64
	trailers    []string
	buf         []byte
	fh          [h2frame.HeaderLen]byte
	err         error
}

func (w *h2writer) init(st *h2stream) {
	w.st, w.declared = st, -1
	w.header = make(http.Header)
}

// Header returns the header to send; changes after WriteHeader (or the
// first Write) have no effect, except to trailers.
func (w *h2writer) Header() http.Header { return w.header }

// WriteHeader fixes the status; 1xx statuses are sent at once, and
// another may follow.
func (w *h2writer) WriteHeader(code int) {
	if w.wroteHeader {
		w.st.h.s.logf("http2: superfluous response.WriteHeader call")
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 {
		if code != http.StatusSwitchingProtocols {
			w.writeInformational(code)
		}
		return
	}
	w.wroteHeader, w.status = true, code
	w.snap = w.header.Clone() // later changes are not sent, but for trailers
	if cl := w.snap.Get("Content-Length"); cl != "" {
		v, err := strconv.ParseInt(cl, 10, 64)
		if err == nil && v >= 0 {
			w.declared = v
		} else {
			w.st.h.s.logf("http2: invalid Content-Length of %q", cl)
			w.snap.Del("Content-Length")
		}
	}
	w.noBody = w.st.req.Method == "HEAD" || !bodyAllowed(code)
}

// Write writes body bytes: buffered up to outBufSize, then sent.
func (w *h2writer) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	if w.declared >= 0 && w.written+int64(len(p)) > w.declared {
		return 0, http.ErrContentLength
	}
	w.written += int64(len(p))
	if w.noBody {
		if !w.committed && len(w.buf) < 512 {
			w.buf = append(w.buf, p[:min(len(p), 512-len(w.buf))]...) // kept for sniffing
		}
		if !w.committed && w.written > outBufSize {
			// Past the buffer, as a body would be: the head goes without
			// a length, as net/http's does.
			if err := w.commit(false, nil); err != nil {
				return 0, err
			}
		}
		return len(p), nil
	}
	if w.err != nil {
		return 0, w.err
	}
	if len(w.buf)+len(p) <= outBufSize {
		w.buf = append(w.buf, p...)
		return len(p), nil
	}
	if !w.committed {
		if err := w.commit(false, p); err != nil {
			return 0, err
		}
	}
	if err := w.flush(false); err != nil {
		return 0, err
	}
	if err := w.sendData(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *h2writer) WriteString(s string) (int, error) {
	if len(w.buf)+len(s) <= outBufSize && w.wroteHeader && !w.noBody && w.err == nil &&
		(w.declared < 0 || w.written+int64(len(s)) <= w.declared) && len(s) > 0 {
		w.buf = append(w.buf, s...)
		w.written += int64(len(s))
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// Flush sends the HEADERS and what is buffered.
func (w *h2writer) Flush() { w.FlushError() }

// FlushError is Flush that reports the write's error (for
// http.ResponseController).
func (w *h2writer) FlushError() error {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	return w.flush(false)
}

// SetReadDeadline sets the body's read deadline (for
// http.ResponseController): a Read that would wait past t fails with an
// error matching os.ErrDeadlineExceeded.
func (w *h2writer) SetReadDeadline(t time.Time) error {
	w.st.setReadDeadline(t)
	return nil
}

// SetWriteDeadline sets the response's write deadline (for
// http.ResponseController): a response unfinished at t has its stream
// reset, and its Writes fail, as with net/http's HTTP/2.
func (w *h2writer) SetWriteDeadline(t time.Time) error {
	w.st.setWriteDeadline(t)
	return nil
}

// EnableFullDuplex is a no-op: an HTTP/2 handler may always read its
// body while it writes.
func (w *h2writer) EnableFullDuplex() error { return nil }

// flush commits the HEADERS, if not yet sent, and sends the buffer.
func (w *h2writer) flush(final bool) error {
	if w.err != nil {
		return w.err
	}
	if !w.committed {
		if err := w.commit(final, nil); err != nil || final {
			return err
		}
	}
	if len(w.buf) == 0 || w.noBody {
		return nil
	}
	err := w.sendData(w.buf, false)
	w.buf = w.buf[:0]
	return err
}

// finish ends the response once the handler returned: the HEADERS with
// the whole body if not sent yet, else the rest, then the trailers or
// END_STREAM.
func (w *h2writer) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if w.err != nil {
		return
	}
	if !w.committed {
		w.commit(true, nil)
		w.release()
		return
	}
	t := w.trailer()
	body := w.buf
	if w.noBody {
		body = nil
	}
	if len(body) > 0 || t == nil {
		if w.sendData(body, t == nil) != nil {
			w.release()
			return
		}
	}
	if t != nil {
		w.sendHeaders(0, t, true)
	}
	w.release()
}

// release gives the buffer back: a finished stream keeps nothing.
func (w *h2writer) release() {
	w.buf = nil
}

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
