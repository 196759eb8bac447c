package httpd

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// response is an exchange's http.ResponseWriter. Like net/http's, it is
// for the handler's goroutine (or one at a time), and not to be used once
// the handler has returned. Bodies up to outBufSize written before the
// handler returns go out in one write with the head and a Content-Length;
// longer ones are chunked (HTTP/1.1) or delimited by the close (1.0),
// unless the handler declared a Content-Length.
type response struct {
	ex     *exchange
	c      *conn
	req    *http.Request
	header http.Header // the handler's, kept (emptied) for the next request

	mu          sync.Mutex // orders 100 Continue against the head
	status      int
	wroteHeader bool // the status is fixed
	committed   bool // the head was written
	chunking    bool
	noBody      bool  // HEAD, or a status without a body: bytes are counted, not sent
	declared    int64 // the handler's Content-Length, or -1
	written     int64 // body bytes the handler wrote
	closeAfter  bool
	hijacked    bool // Hijack or Upgrade took the connection
	detached    bool // Hijack did: the handler left the pool's count
	fullDuplex  bool
	sentCont    bool // 100 Continue was written
	trailers    []string
	buf         []byte // body bytes not yet written
	head        []byte // the head being built
	keys        []string
	vec         [5][]byte // send's writev, kept here so that it does not escape each time
	chunkHdr    [20]byte
	err         error // the first write error: every later write fails with it
}

// outBufSize is the body a response buffers before it writes.
const outBufSize = 4096

func (w *response) init(ex *exchange) {
	w.ex, w.c, w.req = ex, ex.c, ex.req
	w.status, w.declared = 0, -1
	if w.header == nil {
		w.header = make(http.Header)
	}
}

func (w *response) reset() {
	clear(w.header)
	*w = response{header: w.header, buf: w.buf[:0], head: w.head[:0], keys: w.keys[:0], trailers: w.trailers[:0]}
}

// Header returns the header to send; changes after WriteHeader (or the
// first Write) have no effect, except to trailers.
func (w *response) Header() http.Header { return w.header }

// WriteHeader sends the status with the head; 1xx statuses other than
// 101 are written at once, and another may follow.
func (w *response) WriteHeader(code int) {
	if w.hijacked {
		w.c.s.logf("http: response.WriteHeader on hijacked connection")
		return
	}
	if w.wroteHeader {
		w.c.s.logf("http: superfluous response.WriteHeader call")
		return
	}
	if code < 100 || code > 999 {
		panic(fmt.Sprintf("invalid WriteHeader code %v", code))
	}
	if code >= 100 && code <= 199 && code != http.StatusSwitchingProtocols {
		w.writeInformational(code)
		return
	}
	w.wroteHeader, w.status = true, code
	if cl := field(w.header, "Content-Length"); cl != "" {
		v, err := strconv.ParseInt(cl, 10, 64)
		if err == nil && v >= 0 {
			w.declared = v
		} else {
			w.c.s.logf("http: invalid Content-Length of %q", cl)
			w.header.Del("Content-Length")
		}
	}
	w.noBody = w.req.Method == "HEAD" || !bodyAllowed(code)
}

// Write writes body bytes; see response for how they are framed.
func (w *response) Write(p []byte) (int, error) {
	if w.hijacked {
		return 0, http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if len(p) == 0 {
		return 0, nil
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.written += int64(len(p))
	if w.declared >= 0 && w.written > w.declared {
		w.written -= int64(len(p))
		return 0, http.ErrContentLength
	}
	if w.noBody {
		if !w.committed && len(w.buf) < 512 {
			w.buf = append(w.buf, p[:min(len(p), 512-len(w.buf))]...) // kept for sniffing
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
		w.commit(false)
	}
	if err := w.send(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *response) WriteString(s string) (int, error) {
	if len(w.buf)+len(s) <= outBufSize && w.wroteHeader && !w.noBody && w.err == nil && !w.hijacked &&
		(w.declared < 0 || w.written+int64(len(s)) <= w.declared) && len(s) > 0 {
		w.buf = append(w.buf, s...)
		w.written += int64(len(s))
		return len(s), nil
	}
	return w.Write([]byte(s))
}

// Flush sends the head and what is buffered.
func (w *response) Flush() { w.FlushError() }

// FlushError is Flush that reports the write's error (for
// http.ResponseController).
func (w *response) FlushError() error {
	if w.hijacked {
		return http.ErrHijacked
	}
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(false)
	}
	if w.noBody {
		// Only the head goes (HEAD, 204, 304): send writes the head
		// alone, as w.buf holds no body once committed.
		w.buf = w.buf[:0]
	}
	return w.send(nil)
}

// SetReadDeadline sets the request's read deadline (for
// http.ResponseController): a Body.Read that would wait past t fails
// with an error matching os.ErrDeadlineExceeded, however the body
// trickles in, as a net.Conn's Read does; bytes already received are
// still returned. Moving t, or a zero t, lets Reads go on. It holds for
// this request only: the connection's next request starts without it,
// as in net/http.
func (w *response) SetReadDeadline(t time.Time) error {
	w.ex.body.setDeadline(t)
	return nil
}

// SetWriteDeadline sets the connection's write deadline (for
// http.ResponseController): a Write after t fails, and a response still
// queued at t cuts the connection. The connection's next request starts
// with the Server's WriteTimeout, or none, as in net/http.
func (w *response) SetWriteDeadline(t time.Time) error {
	w.c.userWDL.Store(true)
	return w.c.ec.SetWriteDeadline(t)
}

// EnableFullDuplex lets the handler read the body after it began the
// response (for http.ResponseController). Here that always works; the
// call is recorded so that an unread body is not discarded early.
func (w *response) EnableFullDuplex() error {
	w.fullDuplex = true
	return nil
}

// closeAfterBody asks for the connection to close after the response (a
// body read past Server.MaxBodyBytes).
func (w *response) closeAfterBody() {
	w.mu.Lock()
	w.closeAfter = true
	w.mu.Unlock()
}

// abort ends a response whose handler panicked: the connection is cut,
// as net/http's is, so the client cannot take a partial response for a
// whole one.
func (w *response) abort() {
	w.closeAfter = true
	w.err = errAborted
	w.c.quit.Store(true)
	w.c.ec.Abort()
}

var errAborted = fmt.Errorf("httpd: handler panicked")

// Hijack takes the connection over from the server: it leaves its loop
// as a netconn.Conn (a goroutine's blocking net.Conn). Everything the
// client sent after the request's head and the handler did not read
// comes out of the returned bufio.Reader, in order: the body's unread
// part, then what followed it. (A chunked body the loop had decoded
// ahead of the handler comes re-framed as a chunk of the same data.)
// Buffered output is written first. The handler stops counting against
// Server.MaxHandlers. A TLS connection cannot be hijacked (its record
// layer's state stays on the loop); Hijack then fails with
// http.ErrNotSupported.
func (w *response) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	if w.hijacked {
		return nil, nil, http.ErrHijacked
	}
	if w.c.tls != nil {
		return nil, nil, http.ErrNotSupported
	}
	if w.wroteHeader && !w.committed {
		w.commit(false)
	}
	if w.committed && len(w.buf) > 0 {
		w.send(nil)
	}
	return w.hijack()
}
