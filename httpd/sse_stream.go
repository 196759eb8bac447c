package httpd

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/galeio/gale/engine"
)

// Stream is a server-sent event stream that EventStream began: the
// events of one response, sent as they come. Its methods are safe from
// any goroutine, and none waits for the client.
//
// On a loop-served HTTP/1.x connection the stream is held by the
// connection's loop and outlives the handler, which may return at once:
// while it is idle it costs its connection, a loop timer for its
// heartbeat, and this struct; no goroutine. Otherwise (HTTP/2, and
// net/http's connections) the handler's goroutine holds it: see Serve.
type Stream struct {
	lastID string
	opts   EventStreamOptions
	srv    *Server // the server that Shutdown closes it with; nil for net/http's
	done   chan struct{}

	ec      *engine.Conn // a loop-held stream's connection; nil for a held one
	hbAt    int64        // when the next heartbeat is due, in Unix nanoseconds; the loop's
	closing bool         // Close's bound is the read deadline; the loop's
	held    *heldStream  // a stream the handler holds; nil for a loop-held one

	mu       sync.Mutex
	err      error // why the stream ended; nil while it is open
	doneOnce sync.Once
}

// closeWait is how long a closed stream's queued events have to get out
// before the connection is cut. A variable for the tests.
var closeWait = 5 * time.Second

// errStreamClosed fails a Send on a stream that ended.
var errStreamClosed = fmt.Errorf("httpd: event stream closed: %w", net.ErrClosed)

// EventStream answers r with an event stream (Content-Type
// text/event-stream, status 200, w's header as set so far, with
// Cache-Control no-cache unless set) and returns it, for the handler and
// any other goroutine to Send events on. The handler calls it before it
// writes anything; the request must have no body left unread. r's
// Last-Event-ID, the ID of the last event a reconnecting client saw, is
// the stream's LastEventID.
//
// On a loop-served HTTP/1.x connection the connection switches to the
// stream on its loop, as Upgrade switches it to a Protocol (ConnState
// reports StateHijacked), and the handler may return at once. Elsewhere,
// the handler serves the stream itself, by calling Serve, which returns
// once it ended; a handler may call Serve in either case, since it
// returns at once for a loop-held stream.
//
// A stream ends when Close is called, when the client goes, when it
// does not read (see EventStreamOptions.MaxQueued), and when the Server
// shuts down: Shutdown closes its streams, after the events they have
// queued, and the clients reconnect to the next server.
func EventStream(w http.ResponseWriter, r *http.Request, opts EventStreamOptions) (*Stream, error) {
	s := &Stream{
		lastID: r.Header.Get("Last-Event-ID"),
		opts:   opts.withDefaults(),
		done:   make(chan struct{}),
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	if _, ok := h["Cache-Control"]; !ok {
		h.Set("Cache-Control", "no-cache")
	}
	h.Del("Content-Length")
	h.Del("Transfer-Encoding")
	if lr := loopResponse(w); lr != nil && r.ProtoMajor == 1 {
		return s, s.startLoop(lr)
	}
	return s, s.startHeld(w, r)
}

// startLoop writes the response's head and switches the connection to
// the stream. The handler's goroutine.
func (s *Stream) startLoop(lr *response) error {
	b := append([]byte(nil), "HTTP/1.1 200 OK\r\n"...)
	h := lr.header
	h.Set("Connection", "close") // the body ends with the connection
	if _, ok := h["Date"]; !ok {
		b = append(append(append(b, "Date: "...), date()...), "\r\n"...)
	}
	buf := &appendWriter{b}
	h.Write(buf)
	b = append(buf.b, "\r\n"...)
	b = s.appendRetry(b)
	s.ec, s.srv = lr.c.ec, lr.c.s
	open := s.srv.addStream(s)
	if _, err := lr.switchTo(b, (*streamProto)(s)); err != nil {
		s.opts.OnClose = nil // EventStream's error says it
		s.finish(err)
		return err
	}
	if !open {
		s.Close()
	}
	return nil
}

// appendRetry appends the "retry:" field of EventStreamOptions.Retry, if
// set.
func (s *Stream) appendRetry(b []byte) []byte {
	if s.opts.Retry <= 0 {
		return b
	}
	b = strconv.AppendInt(append(b, "retry: "...), s.opts.Retry.Milliseconds(), 10)
	return append(b, "\n\n"...)
}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// LastEventID returns the request's Last-Event-ID: the ID of the last
// event a reconnecting client received, from which the stream should go
// on; "" for a client's first request.
func (s *Stream) LastEventID() string { return s.lastID }

// Send sends ev. It never waits: ev is written at once as far as the
// socket takes it, and the rest queued. It fails with ErrInvalidEvent
// for an ev that cannot be framed, with ErrQueueFull when the queue is
// full (see EventStreamOptions.MaxQueued), and with an error matching
// net.ErrClosed once the stream ended. Events sent concurrently go out
// whole, one after another.
func (s *Stream) Send(ev Event) error {
	bp := encodeBufs.Get().(*[]byte)
	b, err := ev.appendTo((*bp)[:0])
	if err == nil {
		err = s.write(b)
	}
	if cap(b) <= 64<<10 {
		*bp = b[:0]
		encodeBufs.Put(bp)
	}
	return err
}

// SendPrepared sends pe, as Send sends its event.
func (s *Stream) SendPrepared(pe *PreparedEvent) error { return s.write(pe.b) }

// write sends an encoded event.
func (s *Stream) write(b []byte) error {
	if s.held != nil {
		return s.held.write(s, b, false)
	}
	if s.Err() != nil {
		return errStreamClosed
	}
	if s.ec.OutboundBuffered() >= s.opts.MaxQueued {
		if !s.opts.DropWhenFull {
			s.cut(ErrQueueFull)
		}
		return ErrQueueFull
	}
	if _, err := s.ec.Write(b); err != nil {
		if errors.Is(err, engine.ErrWriteBufferFull) {
			s.end(ErrQueueFull)
			return ErrQueueFull
		}
		return errStreamClosed
	}
	return nil
}

// cut ends the stream at once for err, dropping what is queued.
func (s *Stream) cut(err error) {
	if !s.end(err) {
		return
	}
	if s.held != nil {
		s.held.cut(s)
		return
	}
	s.ec.Abort()
}

// Close ends the stream once the events queued are sent (within a few
// seconds: a client that does not read them is cut). Closing a closed
// stream does nothing. A browser's EventSource reconnects after a close,
// with the last ID it saw; answer it 204 (No Content) to make it stop.
func (s *Stream) Close() error {
	if !s.end(net.ErrClosed) {
		return nil
	}
	if s.held != nil {
		s.held.close(s)
		return nil
	}
	s.ec.Execute(func(ec *engine.Conn) {
		s.closing = true
		ec.SetReadDeadline(time.Now().Add(closeWait)) // see OnDeadline
	})
	return s.ec.Close()
}

// Done returns a channel closed once the stream has ended, for whatever
// reason: Err says which.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Err returns nil while the stream is open, then why it ended:
// net.ErrClosed after Close (or the Server's), ErrQueueFull when it was
// cut for a client that did not read, io.EOF when the client went, or the
// connection's error.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// end records why the stream ended, unless it had, and reports whether
// it had not.
func (s *Stream) end(err error) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return false
	}
	s.err = err
	return true
}

// finish ends the stream for err, unless it had ended, and closes Done.
func (s *Stream) finish(err error) {
	s.end(err)
	s.doneOnce.Do(func() {
		close(s.done)
		if s.srv != nil {
			s.srv.removeStream(s)
		}
		if f := s.opts.OnClose; f != nil {
			f(s, s.Err())
		}
	})
}

// streamProto is a loop-held Stream as the Protocol of its connection.
// Its callbacks run on the loop.
type streamProto Stream

func (p *streamProto) OnOpen(ec *engine.Conn) {
	s := (*Stream)(p)
	if s.opts.Heartbeat > 0 {
		s.hbAt = time.Now().Add(s.opts.Heartbeat).UnixNano()
		ec.SetReadDeadline(time.Unix(0, s.hbAt))
	}
}

// OnData drops what the client sends (nothing, after its request, as a
// rule) and keeps the heartbeat's timer, which consumed input clears.
func (p *streamProto) OnData(ec *engine.Conn, in *engine.Inbound) engine.Action {
	s := (*Stream)(p)
	if in.Len() > 0 && s.hbAt != 0 && s.Err() == nil {
		ec.SetReadDeadline(time.Unix(0, s.hbAt))
	}
	in.Discard(in.Len())
	return engine.None
}

// OnDeadline sends a heartbeat, or, once the stream was closed, cuts a
// close whose output the client did not take in closeWait.
func (p *streamProto) OnDeadline(ec *engine.Conn, err error) engine.Action {
	s := (*Stream)(p)
	if s.closing {
		ec.Abort()
		return engine.None
	}
	if err != engine.ErrReadDeadline || s.hbAt == 0 || s.Err() != nil {
		return engine.None
	}
	if ec.OutboundBuffered() >= s.opts.MaxQueued {
		s.cut(ErrQueueFull) // not even heartbeats are read
		return engine.None
	}
	ec.Write(heartbeat)
	now := time.Now().UnixNano()
	s.hbAt += int64(s.opts.Heartbeat)
	if s.hbAt <= now {
		s.hbAt = now + int64(s.opts.Heartbeat)
	}
	ec.SetReadDeadline(time.Unix(0, s.hbAt))
	return engine.None
}

func (p *streamProto) OnClose(ec *engine.Conn, err error) {
	if err == nil {
		err = net.ErrClosed // Abort, or the engine stopping
	}
	(*Stream)(p).finish(err)
}

// addStream registers s, for Shutdown to close, and reports whether it
// did: false once Shutdown has begun (the caller closes s once it began).
func (srv *Server) addStream(s *Stream) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.shutting.Load() {
		return false
	}
	if srv.streams == nil {
		srv.streams = make(map[*Stream]struct{})
	}
	srv.streams[s] = struct{}{}
	return true
}

func (srv *Server) removeStream(s *Stream) {
	srv.mu.Lock()
	delete(srv.streams, s)
	srv.mu.Unlock()
}

// closeStreams closes the event streams, for Shutdown.
func (srv *Server) closeStreams() {
	srv.mu.Lock()
	streams := make([]*Stream, 0, len(srv.streams))
	for s := range srv.streams {
		streams = append(streams, s)
	}
	srv.mu.Unlock()
	for _, s := range streams {
		s.Close()
	}
}
