package httpd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/h2frame"
)

// h2stream is one request of an HTTP/2 connection and its response. The
// loop creates it once the request's header block is whole and feeds it
// the body's DATA; its handler runs on a pooled goroutine (run).
// Fields after mu's mark are guarded by h.mu.
type h2stream struct {
	h   *h2conn
	id  uint32
	req *http.Request
	ctx *reqCtx
	w   h2writer

	bodyCh chan struct{} // cap 1: the body has news (data, its end, an error)
	winCh  chan struct{} // cap 1: the send window grew, or the stream ended
	done   chan struct{} // closed when the stream ends early (err set)

	readDL  *time.Timer // ReadTimeout or SetReadDeadline, for the body
	writeDL *time.Timer // WriteTimeout or SetWriteDeadline

	// mu's:
	sendWin     int64
	recvWin     int64 // what the client may still send on the stream
	unacked     int64 // bytes of the stream's window to give back
	remoteDone  bool  // END_STREAM came (or the stream ended)
	localDone   bool  // END_STREAM went (or the stream ended)
	handlerDone bool
	err         error // why the stream ended early; reads and writes fail with it
	buf         []byte
	off         int
	bodyErr     error // io.EOF once the body is whole, read after buf
	bodyClosed  bool  // the handler is done with the body: DATA is dropped
	readErr     error // set by a read deadline
	declared    int64 // Content-Length, or -1
	got         int64
	read        int64 // body bytes the handler read (MaxBodyBytes)
	trailer     http.Header
	sentCont    bool // 100 Continue went
	tunnel      bool // Tunnel took the stream: the handler's return does not end it
}

// errStreamReset fails a stream's reads and writes once it was reset.
var errStreamReset = errors.New("http2: stream reset")

// streamResetError is a reset by the client, with its code.
type streamResetError struct{ code h2frame.ErrCode }

func (e *streamResetError) Error() string {
	return "http2: stream reset by the client: " + e.code.String()
}

// errWriteTimeout fails a stream's writes once its write deadline passed.
var errWriteTimeout = fmt.Errorf("http2: write deadline passed: %w", os.ErrDeadlineExceeded)

// errStalled fails a Write whose client kept its window shut for the
// stall timeout.
var errStalled = errors.New("http2: the client did not open its flow-control window in time")

func (h *h2conn) newStream(id uint32, req *http.Request, declared int64, end bool) *h2stream {
	st := &h2stream{
		h: h, id: id,
		bodyCh:   make(chan struct{}, 1),
		winCh:    make(chan struct{}, 1),
		done:     make(chan struct{}),
		sendWin:  int64(h.peerWindow),
		recvWin:  int64(h.lim.streamWindow),
		declared: declared,
	}
	st.ctx = newReqCtx(h.c)
	st.req = req.WithContext(st.ctx)
	if end {
		st.remoteDone = true
		st.req.Body = http.NoBody
	} else {
		st.req.Body = &h2body{st: st}
	}
	st.w.init(st)
	return st
}

// run serves the stream on a pooled goroutine.
func (st *h2stream) run() bool {
	h := st.h
	defer st.finish()
	defer func() {
		if p := recover(); p != nil {
			if p != http.ErrAbortHandler {
				h.s.logf("http2: panic serving %v: %v\n%s", h.c.raddr, p, stack())
			}
			h.reset(st, h2frame.ErrCodeInternal, errStreamReset)
		}
	}()
	if d := h.s.WriteTimeout; d > 0 {
		st.setWriteDeadline(time.Now().Add(d))
	}
	if d := h.s.ReadTimeout; d > 0 && st.req.Body != http.NoBody {
		st.setReadDeadline(time.Now().Add(d))
	}
	hd := h.s.Handler
	if hd == nil {
		hd = http.DefaultServeMux
	}
	if st.req.RequestURI == "*" && st.req.Method == "OPTIONS" {
		hd = optionsHandler{}
	}
	hd.ServeHTTP(&st.w, st.req)
	return false
}

// finish ends the response, drops what is left of the body, and ends
// the stream if the client is done with it too.
func (st *h2stream) finish() {
	h := st.h
	h.mu.Lock()
	tunnel := st.tunnel
	h.mu.Unlock()
	if !tunnel {
		st.w.finish()
	}
	st.ctx.cancel(context.Canceled)
	st.stopTimers()
	h.mu.Lock()
	st.handlerDone = true
	back := int64(0)
	if !tunnel { // a tunnel's stream lives on (Tunnel)
		st.bodyClosed = true
		back = int64(len(st.buf) - st.off)
		st.buf, st.off = nil, 0
	}
	h.handlers--
	if st.err == nil && h.calmed > 0 {
		h.calmed--
	}
	open := st.err == nil && !st.remoteDone && !tunnel
	closing := st.err == nil && st.remoteDone && st.localDone
	h.mu.Unlock()
	if back > 0 {
		h.creditConn(back)
	}
	switch {
	case open:
		// The response is whole and the client still sends a body no one
		// reads: the stream ends, NO_ERROR (RFC 9113 §8.1).
		h.reset(st, h2frame.ErrCodeNo, errStreamReset)
	case closing:
		h.closeStream(st)
	}
	h.settle()
}

// abort ends the stream early with err: its handler's context is
// canceled and its reads and writes fail. It reports false if the
// stream had ended already. Any goroutine.
func (st *h2stream) abort(err error) bool {
	h := st.h
	h.mu.Lock()
	if st.err != nil || st.remoteDone && st.localDone {
		h.mu.Unlock()
		return false
	}
	st.err = err
	st.remoteDone, st.localDone = true, true
	back := int64(0)
	if !st.bodyClosed {
		back = int64(len(st.buf) - st.off)
	}
	closed := h.closed
	h.mu.Unlock()
	close(st.done)
	st.signalBody()
	st.signalWin()
	st.ctx.cancel(context.Canceled)
	if back > 0 && !closed {
		h.creditConn(back)
	}
	return true
}

// ended returns the error a stream that ended early fails with, or nil.
// Any goroutine.
func (st *h2stream) ended() error {
	st.h.mu.Lock()
	defer st.h.mu.Unlock()
	return st.err
}

// running reports whether the stream's handler runs. The loop.
func (st *h2stream) running() bool {
	st.h.mu.Lock()
	defer st.h.mu.Unlock()
	return !st.handlerDone
}

func (st *h2stream) signalBody() {
	select {
	case st.bodyCh <- struct{}{}:
	default:
	}
}

// signalWin wakes the stream's writer waiting for window.
func (st *h2stream) signalWin() {
	select {
	case st.winCh <- struct{}{}:
	default:
	}
}

func (st *h2stream) stopTimers() {
	st.h.mu.Lock()
	r, w := st.readDL, st.writeDL
	st.readDL, st.writeDL = nil, nil
	st.h.mu.Unlock()
	if r != nil {
		r.Stop()
	}
	if w != nil {
		w.Stop()
	}
}

// setWriteDeadline resets the stream with INTERNAL_ERROR when t passes
// with the response unfinished, as net/http's HTTP/2 server does.
func (st *h2stream) setWriteDeadline(t time.Time) {
	st.h.mu.Lock()
	defer st.h.mu.Unlock()
	if st.writeDL != nil {
		st.writeDL.Stop()
		st.writeDL = nil
	}
	if t.IsZero() || st.handlerDone {
		return
	}
	st.writeDL = time.AfterFunc(time.Until(t), func() {
		st.h.reset(st, h2frame.ErrCodeInternal, errWriteTimeout)
	})
}

// setReadDeadline fails the body's reads once t passes.
func (st *h2stream) setReadDeadline(t time.Time) {
	h := st.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if st.readDL != nil {
		st.readDL.Stop()
		st.readDL = nil
	}
	st.readErr = nil
	if t.IsZero() || st.handlerDone {
		return
	}
	st.readDL = time.AfterFunc(time.Until(t), func() {
		h.mu.Lock()
		st.readErr = errReadTimeout
		h.mu.Unlock()
		st.signalBody()
	})
}

// reset sends RST_STREAM with code for st and ends it with err, unless
// it had ended. Any goroutine.
func (h *h2conn) reset(st *h2stream, code h2frame.ErrCode, err error) {
	if !st.abort(err) {
		return
	}
	h.ec.Write(h2frame.AppendRSTStream(nil, st.id, code))
	h.closeStream(st)
}

// stream returns the open stream id, or nil. Any goroutine.
func (h *h2conn) stream(id uint32) *h2stream {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.streams[id]
}

// addStream puts st in the table, made on need. h.mu is held.
func (h *h2conn) addStream(st *h2stream) {
	if h.streams == nil {
		h.streams = make(map[uint32]*h2stream)
	}
	h.streams[st.id] = st
}

// closeStream takes st out of the table: the client may open another.
// Any goroutine.
func (h *h2conn) closeStream(st *h2stream) {
	h.mu.Lock()
	if h.streams[st.id] == st {
		delete(h.streams, st.id)
		if len(h.streams) == 0 {
			h.streams = nil // its storage, grown by the streams, goes with them
		}
		h.recent[h.recentAt%len(h.recent)] = st.id
		h.recentAt++
	}
	h.mu.Unlock()
	h.settle()
}

// settle closes the connection once GOAWAY went (or the client's stream
// ended) and nothing is left to serve, and starts the idle timeout when
// no stream is open. Any goroutine.
func (h *h2conn) settle() {
	h.mu.Lock()
	idle := len(h.streams) == 0 && h.handlers == 0
	end := idle && h.goAway && !h.closed && !h.failed
	wasActive := h.active
	h.active = !idle
	h.mu.Unlock()
	switch {
	case end:
		h.ec.Close()
	case idle && wasActive:
		h.idle()
		if h.s.ConnState != nil {
			h.ec.Execute(func(_ *engine.Conn) { h.s.setState(h.c, http.StateIdle) })
		}
	}
}
