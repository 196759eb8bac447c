package httpd

import (
	"context"
	"io"
	"net/http"
	"time"
)

// heldStream is a Stream its handler's goroutine holds (Serve): one on
// an HTTP/2 stream, or on a connection net/http's server serves. Sends
// queue the encoded events (under Stream.mu) and wake Serve, which
// writes and flushes them. It costs, while idle, the handler's
// goroutine, blocked in Serve, and its ticker for the heartbeats.
//
// An HTTP/2 stream is not held on the loop as an HTTP/1.x connection
// is: the stream's DATA must wait for the client's flow-control windows,
// which the handler's writes already do; a loop-held one would need a
// queue and a timer of its own in the connection's state.
type heldStream struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	wake chan struct{} // cap 1: events were queued, or the stream ended

	// Stream.mu's:
	q       []byte // events queued, encoded
	spare   []byte // the buffer Serve wrote last, for the next queue
	writing int    // the bytes Serve is writing
	// serving is set while Serve runs: it, not the request's end, then
	// closes Done, and w is the handler's, so that cut and close may set
	// its write deadline (never a later request's, on a connection
	// net/http reused), holding Stream.mu.
	serving bool
}

// startHeld writes the response's head and sets s up for Serve. A
// stream left without Serve ends with its handler. The handler's
// goroutine.
func (s *Stream) startHeld(w http.ResponseWriter, r *http.Request) error {
	h := &heldStream{w: w, rc: http.NewResponseController(w), wake: make(chan struct{}, 1)}
	s.held = h
	if hw := h2Response(w); hw != nil {
		s.srv = hw.st.h.s
	}
	open := s.srv == nil || s.srv.addStream(s)
	w.WriteHeader(http.StatusOK)
	if b := s.appendRetry(nil); len(b) > 0 {
		w.Write(b)
	}
	if err := h.rc.Flush(); err != nil {
		s.opts.OnClose = nil // EventStream's error says it
		s.finish(err)
		return err
	}
	// The request's context ends when the client goes, and when the
	// handler returns: either ends the stream.
	context.AfterFunc(r.Context(), func() {
		s.end(io.EOF)
		h.signal()
		s.mu.Lock()
		serving := h.serving
		s.mu.Unlock()
		if !serving {
			s.finish(io.EOF)
		}
	})
	if !open {
		s.Close()
	}
	return nil
}

// Serve serves a stream that its handler must hold: it writes the
// events as they are sent, and heartbeats, on the calling goroutine, the
// handler's, until the stream ends, then returns. For a stream held by
// its connection's loop it returns at once, so a handler may call it
// whatever its stream: a handler that returns without calling it ends a
// held stream.
func (s *Stream) Serve() {
	h := s.held
	if h == nil {
		return
	}
	var tick <-chan time.Time
	if s.opts.Heartbeat > 0 {
		t := time.NewTicker(s.opts.Heartbeat)
		defer t.Stop()
		tick = t.C
	}
	s.mu.Lock()
	h.serving = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		h.serving = false
		s.mu.Unlock()
	}()
	for {
		select {
		case <-h.wake:
		case <-tick:
			h.write(s, heartbeat, true)
		}
		s.mu.Lock()
		b, err := h.q, s.err
		h.q, h.spare, h.writing = h.spare[:0], nil, len(b)
		s.mu.Unlock()
		if err == ErrQueueFull {
			s.finish(err) // cut: what is queued is dropped
			return
		}
		if len(b) > 0 {
			_, werr := h.w.Write(b)
			if werr == nil {
				werr = h.rc.Flush()
			}
			if werr != nil {
				s.finish(werr)
				return
			}
		}
		s.mu.Lock()
		h.spare, h.writing = b, 0
		s.mu.Unlock()
		if err != nil {
			h.rc.SetWriteDeadline(time.Time{}) // close's, for what the queue held
			s.finish(err)
			return
		}
	}
}

// write queues b, an encoded event or a heartbeat (beat), for Serve.
func (h *heldStream) write(s *Stream, b []byte, beat bool) error {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return errStreamClosed
	}
	if len(h.q)+h.writing >= s.opts.MaxQueued {
		s.mu.Unlock()
		if !s.opts.DropWhenFull || beat {
			s.cut(ErrQueueFull)
		}
		return ErrQueueFull
	}
	h.q = append(h.q, b...)
	s.mu.Unlock()
	h.signal()
	return nil
}

func (h *heldStream) signal() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// cut stops Serve at once, dropping what is queued: a write under way is
// ended by a write deadline in the past.
func (h *heldStream) cut(s *Stream) { h.stop(s, time.Now()) }

// close has Serve write what is queued, within closeWait, and return.
func (h *heldStream) close(s *Stream) { h.stop(s, time.Now().Add(closeWait)) }

// stop bounds Serve's writes by t, and wakes it to end.
func (h *heldStream) stop(s *Stream, t time.Time) {
	s.mu.Lock()
	if h.serving {
		h.rc.SetWriteDeadline(t)
	}
	s.mu.Unlock()
	h.signal()
}
