package httpd

import (
	"net/http"
	"strconv"
)

// Output's bounds: a handler writing to a client that reads slowly waits
// (as a blocking net.Conn's Write would) once more than outHigh bytes are
// queued on the connection, until at most outLow are.
const (
	outHigh = 256 << 10
	outLow  = 64 << 10
)

// send writes the committed head (the first time), the buffered body
// bytes and p, framed as a chunk when chunking, with one writev.
func (w *response) send(p []byte) error {
	if w.err != nil {
		return w.err
	}
	bufs := w.vec[:0]
	if len(w.head) > 0 {
		bufs = append(bufs, w.head)
	}
	n := len(w.buf) + len(p)
	if w.chunking && n > 0 {
		h := strconv.AppendInt(w.chunkHdr[:0], int64(n), 16)
		bufs = append(bufs, append(h, '\r', '\n'))
	}
	if len(w.buf) > 0 {
		bufs = append(bufs, w.buf)
	}
	if len(p) > 0 {
		bufs = append(bufs, p)
	}
	if w.chunking && n > 0 {
		bufs = append(bufs, crlf)
	}
	err := w.writev(bufs)
	clear(w.vec[:])
	return err
}

var (
	crlf         = []byte("\r\n")
	continueLine = []byte("HTTP/1.1 100 Continue\r\n\r\n")
)

// writev writes bufs to the connection, then waits while the client lets
// too much pile up.
func (w *response) writev(bufs [][]byte) error {
	if len(bufs) == 0 {
		return nil
	}
	ec := w.c.ec
	_, err := ec.Writev(bufs)
	w.head, w.buf = w.head[:0], w.buf[:0]
	if err == nil && ec.OutboundBuffered() > outHigh {
		err = ec.WaitOutput(outLow, w.ex.ctx.doneChan())
	}
	if err != nil {
		w.err = err
		w.closeAfter = true
	}
	return err
}

// finish ends the response after the handler returned: the head, if not
// yet written, with the whole body and its length; then the rest of the
// body, and the last chunk with the trailers.
func (w *response) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !w.committed {
		w.commit(true)
	}
	if w.err != nil {
		return
	}
	if w.chunking {
		if len(w.buf) > 0 {
			if w.send(nil) != nil {
				return
			}
		}
		w.head = append(w.head[:0], "0\r\n"...)
		w.head = w.appendTrailers(w.head)
		w.head = append(w.head, "\r\n"...)
		w.vec[0] = w.head
		w.writev(w.vec[:1])
		w.vec[0] = nil
		return
	}
	if len(w.head) > 0 || len(w.buf) > 0 {
		w.send(nil)
	}
	if w.declared >= 0 && w.written != w.declared && !w.noBody {
		w.closeAfter = true // the client waits for bytes that will not come
	}
}

// appendTrailers appends the declared trailers the handler set, and those
// named with http.TrailerPrefix, as net/http's finalTrailers gathers
// them: sorted by name, invalid names dropped and CR and LF in values
// turned to spaces (appendHeader), so that no trailer can end the
// message early and smuggle a response in.
func (w *response) appendTrailers(b []byte) []byte {
	var t http.Header
	for k, vv := range w.header {
		if name, ok := cutPrefix(k, http.TrailerPrefix); ok {
			if t == nil {
				t = make(http.Header)
			}
			t[name] = vv
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
	if t == nil {
		return b
	}
	return w.appendHeader(b, t, func(string) bool { return false })
}

func cutPrefix(s, prefix string) (string, bool) {
	if len(s) > len(prefix) && s[:len(prefix)] == prefix {
		return s[len(prefix):], true
	}
	return "", false
}

// writeContinue answers "Expect: 100-continue" when the handler first
// reads the body, unless the response has begun.
func (w *response) writeContinue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.committed || w.sentCont || w.hijacked {
		return
	}
	w.sentCont = true
	w.c.ec.Write(continueLine)
}

// writeInformational writes a 1xx response (103 Early Hints, say) with
// the header as it stands.
func (w *response) writeInformational(code int) {
	if code == http.StatusContinue {
		w.mu.Lock()
		w.sentCont = true
		w.mu.Unlock()
	}
	b := appendStatusLine(nil, w.req.ProtoAtLeast(1, 1), code)
	b = w.appendHeader(b, w.header, func(string) bool { return false })
	b = append(b, "\r\n"...)
	w.writev([][]byte{b})
}
