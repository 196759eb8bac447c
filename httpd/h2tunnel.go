package httpd

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/galeio/gale/internal/h2frame"
)

// ErrNotTunnel is returned by Tunnel for a request that is not a CONNECT
// on an HTTP/2 stream of this package's server.
var ErrNotTunnel = fmt.Errorf("httpd: not a CONNECT on an HTTP/2 stream: %w", errors.ErrUnsupported)

// Tunnel answers a CONNECT on an HTTP/2 stream (an extended CONNECT of
// RFC 8441, as a browser's WebSocket, or a plain one) with 200 and w's
// header, and returns the stream as a byte stream that outlives the
// handler: Read reads the client's DATA, Write sends DATA (within the
// client's flow-control windows, waiting as a handler's Write does), and
// Close ends it (END_STREAM; a reset if the client still sends). The
// handler calls it before it writes anything, may return at once, and
// must not use w afterwards. The stream counts against
// MaxConcurrentStreams until it ends.
//
// The returned stream is for one reader and one writer at a time. Its
// Read fails once the client resets the stream or the connection goes.
func Tunnel(w http.ResponseWriter) (io.ReadWriteCloser, error) {
	hw := h2Response(w)
	if hw == nil || hw.st.req.Method != http.MethodConnect {
		return nil, ErrNotTunnel
	}
	if hw.wroteHeader || hw.committed {
		return nil, errors.New("httpd: Tunnel after the response began")
	}
	st := hw.st
	st.h.mu.Lock()
	st.tunnel = true
	st.h.mu.Unlock()
	hw.WriteHeader(http.StatusOK)
	if err := hw.flush(false); err != nil {
		return nil, err
	}
	return &h2tunnel{st: st, body: h2body{st: st}}, nil
}

// h2Response finds the HTTP/2 response behind w, looking through
// wrappers with an Unwrap method.
func h2Response(w http.ResponseWriter) *h2writer {
	for {
		switch t := w.(type) {
		case *h2writer:
			return t
		case interface{ Unwrap() http.ResponseWriter }:
			w = t.Unwrap()
		default:
			return nil
		}
	}
}

// h2tunnel is a stream that Tunnel handed over.
type h2tunnel struct {
	st     *h2stream
	body   h2body
	closed bool // the writer's
}

func (t *h2tunnel) Read(p []byte) (int, error) { return t.body.Read(p) }

func (t *h2tunnel) Write(p []byte) (int, error) {
	if err := t.st.w.sendData(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

// CloseWrite ends the stream's sending half (END_STREAM).
func (t *h2tunnel) CloseWrite() error {
	if t.closed {
		return nil
	}
	t.closed = true
	return t.st.w.sendData(nil, true)
}

// Close ends the stream: END_STREAM, and a reset if the client has not
// ended its half.
func (t *h2tunnel) Close() error {
	err := t.CloseWrite()
	st := t.st
	h := st.h
	h.mu.Lock()
	open := st.err == nil && !st.remoteDone
	h.mu.Unlock()
	if open {
		h.reset(st, h2frame.ErrCodeNo, errStreamReset)
	}
	return err
}
