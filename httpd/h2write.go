package httpd

import (
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/galeio/gale/internal/h2frame"
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
