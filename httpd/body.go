package httpd

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// body is a request's Body: a bounded buffer that the loop fills with the
// body's bytes (decoded, for chunked) and the handler's Read empties.
// While it is full the loop leaves further input in the socket; a Read
// that makes room wakes the loop. Read blocks while the buffer is empty
// and the body not over.
type body struct {
	ex  *exchange
	req *http.Request

	mu      sync.Mutex
	buf     []byte // from bodyBufs (bodybuf.go): grown as bytes come, given back once read
	r, w    int
	max     int         // the most buf grows to
	step    int         // the room a receive needs: reading pauses below it
	end     error       // set once no more bytes will come: io.EOF, or why
	trailer http.Header // the chunked body's trailer, set at its end
	wait    chan struct{}
	waiting bool  // a Read waits on wait
	full    bool  // the loop stopped for room: Read wakes it
	closed  bool  // the handler closed it, or returned
	read    int64 // bytes Read returned
	pushed  int64 // bytes the loop pushed
	limit   int64 // Server.MaxBodyBytes; 0 for none
	expect  bool  // 100-continue asked and not yet sent
	// deadline bounds Read's waits (response.SetReadDeadline); zero for
	// none.
	deadline time.Time
}

func (b *body) init(ex *exchange, r *http.Request, size, step int, limit int64) {
	b.ex, b.req, b.max, b.step, b.limit = ex, r, size, min(step, size/2), limit
	if b.wait == nil {
		b.wait = make(chan struct{}, 1)
	}
}

func (b *body) reset() {
	if b.buf != nil {
		putBodyBuf(b.buf)
	}
	wait := b.wait
	select {
	case <-wait:
	default:
	}
	*b = body{wait: wait}
}

// Read reads the body, waiting for the loop while nothing is buffered.
func (b *body) Read(p []byte) (int, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return 0, http.ErrBodyReadAfterClose
	}
	if b.expect {
		b.expect = false
		b.mu.Unlock()
		b.ex.resp.writeContinue()
		b.mu.Lock()
	}
	for b.r == b.w && b.end == nil {
		if !b.await() {
			b.mu.Unlock()
			return 0, errReadTimeout
		}
		if b.closed {
			b.mu.Unlock()
			return 0, http.ErrBodyReadAfterClose
		}
	}
	if b.r == b.w {
		err := b.end
		if err == io.EOF && b.trailer != nil {
			mergeTrailer(b.req, b.trailer)
			b.trailer = nil
		}
		b.mu.Unlock()
		return 0, err
	}
	if b.limit > 0 && b.read >= b.limit {
		b.mu.Unlock()
		b.ex.resp.closeAfterBody()
		return 0, &http.MaxBytesError{Limit: b.limit}
	}
	if b.limit > 0 {
		p = p[:min(int64(len(p)), b.limit-b.read)]
	}
	n := copy(p, b.buf[b.r:b.w])
	b.r += n
	b.read += int64(n)
	if b.r == b.w {
		b.dropBuf()
	}
	wake := b.full && b.max-(b.w-b.r) >= b.step
	if wake {
		b.full = false
	}
	b.mu.Unlock()
	if wake {
		b.ex.c.ec.Wake()
	}
	return n, nil
}

// await waits for the loop (push, finish, abandon) or a new deadline
// with b.mu held, unlocking it meanwhile, and reports false if the
// deadline had passed.
func (b *body) await() bool {
	var expired <-chan time.Time
	if !b.deadline.IsZero() {
		d := time.Until(b.deadline)
		if d <= 0 {
			return false
		}
		t := time.NewTimer(d)
		defer t.Stop()
		expired = t.C
	}
	b.waiting = true
	b.mu.Unlock()
	select {
	case <-b.wait:
	case <-expired: // checked again by the caller's next await
	}
	b.mu.Lock()
	return true
}

// setDeadline sets the deadline of Read's waits, waking one that waits
// so that it waits for the new one.
func (b *body) setDeadline(t time.Time) {
	if b.ex == nil {
		return // no body (http.NoBody)
	}
	b.mu.Lock()
	b.deadline = t
	b.signal()
	b.mu.Unlock()
}

// Close stops the handler's reading: the loop discards the rest of the
// body (up to a bound, past which the connection closes after the
// response, as net/http's does).
func (b *body) Close() error {
	b.abandon()
	return nil
}

// abandon marks the body closed: Read fails from now on, and the loop
// drops what it receives.
func (b *body) abandon() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.dropBuf()
	wake := b.full || b.waiting
	b.full = false
	b.signal()
	b.mu.Unlock()
	if wake {
		b.ex.c.ec.Wake()
	}
}

// signal releases a waiting Read. b.mu is held.
func (b *body) signal() {
	if b.waiting {
		b.waiting = false
		select {
		case b.wait <- struct{}{}:
		default:
		}
	}
}

// push appends p's bytes, or drops them once the body is closed (and
// says so), and returns how many it used: fewer than len(p) when the
// buffer is full, in which case Read will wake the loop once it has made
// room. It runs on the loop.
func (b *body) push(p []byte) (int, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return len(p), true
	}
	if len(b.buf)-b.w < len(p) && b.r > 0 {
		b.w = copy(b.buf, b.buf[b.r:b.w])
		b.r = 0
	}
	if len(b.buf)-b.w < len(p) && len(b.buf) < b.max {
		b.grow(b.w + len(p))
	}
	n := copy(b.buf[b.w:], p)
	b.w += n
	b.pushed += int64(n)
	if n > 0 {
		b.signal()
	}
	if n < len(p) || b.max-(b.w-b.r) < b.step {
		b.full = true // the loop stops reading: Read must wake it
	}
	return n, false
}

// grow gives b a buffer that holds need bytes, if max allows, or max
// bytes: at least twice the one it has. b.mu is held and b.r is 0.
func (b *body) grow(need int) {
	nb := getBodyBuf(min(b.max, max(need, 2*len(b.buf), minBodyBuf)))
	copy(nb, b.buf[:b.w])
	if b.buf != nil {
		putBodyBuf(b.buf)
	}
	b.buf = nb
}

// dropBuf gives the emptied buffer back. b.mu is held.
func (b *body) dropBuf() {
	if b.buf != nil {
		putBodyBuf(b.buf)
	}
	b.buf, b.r, b.w = nil, 0, 0
}

// room reports whether the buffer takes a whole receive's bytes, so
// that what the loop reads next goes into it rather than piling up in
// the connection's input (and being moved there again and again). It
// runs on the loop.
func (b *body) room() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed || b.max-(b.w-b.r) >= b.step
}

// finish ends the body with err (io.EOF at its end) and the trailer, if
// any. It runs on the loop.
func (b *body) finish(err error, trailer http.Header) {
	b.mu.Lock()
	if b.end == nil {
		b.end, b.trailer = err, trailer
	}
	b.signal()
	b.mu.Unlock()
}

// mergeTrailer adds the trailer's fields to r.Trailer, as net/http does
// once a chunked body has been read.
func mergeTrailer(r *http.Request, t http.Header) {
	if r.Trailer == nil {
		r.Trailer = t
		return
	}
	for k, vv := range t {
		r.Trailer[k] = vv
	}
}

// The errors a Read gets when the body cannot end well.
var (
	errUnexpectedEOF       = io.ErrUnexpectedEOF
	errReadTimeout   error = &timeoutError{}
)

// timeoutError is a Read of the body past the read deadline: a net.Error
// whose Timeout is true, matching os.ErrDeadlineExceeded.
type timeoutError struct{}

func (*timeoutError) Error() string   { return "httpd: read timeout" }
func (*timeoutError) Timeout() bool   { return true }
func (*timeoutError) Temporary() bool { return true }
func (*timeoutError) Is(err error) bool {
	return err == os.ErrDeadlineExceeded
}

// expecting reports whether the client was asked for 100 Continue and
// never got it: it may not send the body.
func (b *body) expecting() bool {
	if b.ex == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.expect && !b.ex.resp.sentCont
}

// unread returns how many bytes of a body of length total (-1 when
// chunked) the handler did not read (net/http's measure); a chunked
// body's is taken to be large.
func (b *body) unread(total int64) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.end != nil {
		return 0
	}
	if total < 0 {
		return maxDiscard // unknown: the loop drops up to the bound, then closes
	}
	return total - b.read
}

// handOff closes the body for a hijack and returns the bytes received
// and not read, which the hijacked connection returns first.
func (b *body) handOff() []byte {
	if b.ex == nil {
		return nil // no body
	}
	b.mu.Lock()
	var rest []byte
	if !b.closed && b.r < b.w {
		rest = bytes.Clone(b.buf[b.r:b.w])
	}
	b.mu.Unlock()
	b.abandon()
	return rest
}

// failed reports whether the body ended so that its connection cannot
// serve another request, by net/http's measure: an error other than its
// end or the client's (bad framing, a timeout); the client's end inside
// a chunked body's framing; or the client's end with maxDiscard bytes or
// more of a Content-Length body unsent.
func (b *body) failed(total int64) bool {
	if b.ex == nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch b.end {
	case nil, io.EOF:
		return false
	case io.ErrUnexpectedEOF:
		return total < 0 || total-b.pushed >= maxDiscard
	}
	return true
}
