package httpd

import (
	"io"
	"net/http"

	"github.com/galeio/gale/internal/h2frame"
)

// h2body is an HTTP/2 request's Body: it reads what the loop pushed, and
// gives the bytes read back to the client's windows.
type h2body struct{ st *h2stream }

// push adds a DATA frame's bytes to the body, and returns how many it
// kept (none once the handler is done with the body). A body longer or
// shorter than its Content-Length is a stream error (§8.1.1). h.mu is
// held; the loop.
func (st *h2stream) push(p []byte, end bool) (int, error) {
	st.got += int64(len(p))
	if st.declared >= 0 && (st.got > st.declared || end && st.got != st.declared) {
		return 0, h2Error(st.id, h2frame.ErrCodeProtocol, "a body of %d bytes where Content-Length says %d", st.got, st.declared)
	}
	if end {
		st.remoteDone = true
	}
	kept := 0
	if !st.bodyClosed {
		st.buf = append(st.buf, p...)
		kept = len(p)
		if end {
			st.bodyErr = io.EOF
		}
	}
	st.signalBody()
	return kept, nil
}

// pushTrailer ends the body with the client's trailer, which Read merges
// into the request's Trailer with the body's end. h.mu is held.
func (st *h2stream) pushTrailer(t http.Header) {
	st.remoteDone = true
	st.trailer = t
	if !st.bodyClosed {
		st.bodyErr = io.EOF
	}
	st.signalBody()
}

// Read reads the body, waiting for the client's DATA.
func (b *h2body) Read(p []byte) (int, error) {
	st := b.st
	h := st.h
	h.mu.Lock()
	if st.bodyClosed {
		h.mu.Unlock()
		return 0, http.ErrBodyReadAfterClose
	}
	cont := !st.sentCont && st.off == len(st.buf) && st.bodyErr == nil && st.err == nil && expectsContinue(st.req)
	st.sentCont = true
	h.mu.Unlock()
	if cont {
		st.w.writeContinue()
	}
	h.mu.Lock()
	for st.off == len(st.buf) && st.bodyErr == nil && st.err == nil && st.readErr == nil {
		h.mu.Unlock()
		<-st.bodyCh
		h.mu.Lock()
		if st.bodyClosed {
			// Close ran meanwhile (another goroutine of the handler's).
			h.mu.Unlock()
			return 0, http.ErrBodyReadAfterClose
		}
	}
	if st.off < len(st.buf) && st.err == nil && st.readErr == nil {
		n, err := b.take(p)
		h.mu.Unlock()
		h.creditStream(st, int64(n))
		return n, err
	}
	err := st.bodyErr
	switch {
	case st.readErr != nil:
		err = st.readErr
	case st.err != nil:
		err = st.err
	case err == io.EOF && st.trailer != nil:
		mergeTrailer(st.req, st.trailer)
		st.trailer = nil
	}
	h.mu.Unlock()
	return 0, err
}

// take copies buffered bytes to p, within MaxBodyBytes. h.mu is held.
func (b *h2body) take(p []byte) (int, error) {
	st := b.st
	var err error
	if lim := st.h.s.MaxBodyBytes; lim > 0 && st.read+int64(len(p)) > lim {
		p = p[:max(0, lim-st.read)]
		if len(p) == 0 {
			return 0, &http.MaxBytesError{Limit: lim}
		}
	}
	n := copy(p, st.buf[st.off:])
	st.off += n
	st.read += int64(n)
	if st.off == len(st.buf) {
		if cap(st.buf) > 16<<10 {
			st.buf = nil // a large buffer goes back between bursts
		} else {
			st.buf = st.buf[:0]
		}
		st.off = 0
	}
	return n, err
}

// Close drops the rest of the body: what is buffered goes back to the
// client's window, later DATA is dropped, and a Read waiting, or to come,
// fails with http.ErrBodyReadAfterClose.
func (b *h2body) Close() error {
	st := b.st
	h := st.h
	h.mu.Lock()
	if st.bodyClosed {
		h.mu.Unlock()
		return nil
	}
	st.bodyClosed = true
	back := int64(len(st.buf) - st.off)
	st.buf, st.off = nil, 0
	h.mu.Unlock()
	st.signalBody() // a Read waiting returns
	if back > 0 {
		h.creditStream(st, back)
	}
	return nil
}
