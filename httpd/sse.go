package httpd

// Server-sent events (the WHATWG HTML standard, §9.2, "Server-sent
// events"): the event's wire form, the options of a stream, and events
// prepared once for many streams. The stream itself is in
// sse_stream.go (on the loop) and sse_held.go (on the handler).

import (
	"errors"
	"strconv"
	"sync"
	"time"
)

// Event is one server-sent event. Its fields go out in the standard's
// form: ID as "id:", Event as "event:", Retry as "retry:" (in whole
// milliseconds; 0 sends none), and Data as one "data:" field per line,
// lines being split at CRLF, CR or LF as the client splits them, so that
// the client's event.data is Data with its line breaks as LF. An Event
// with neither Data nor Event (only ID or Retry) dispatches nothing in a
// browser, which still takes its ID and Retry; any other, an empty Data
// included, dispatches a message.
type Event struct {
	ID    string // no CR, LF or NUL (a browser ignores an ID with NUL)
	Event string // the event's type; "" is "message"; no CR or LF
	Data  string
	Retry time.Duration
}

// ErrQueueFull is returned by a Stream's Send when
// EventStreamOptions.MaxQueued bytes were already queued ahead of the
// event: the client is not reading. The stream is then closed at once,
// unless DropWhenFull asked to drop the event instead.
var ErrQueueFull = errors.New("httpd: event stream's queue full")

// ErrInvalidEvent is returned for an Event whose ID has a CR, LF or NUL,
// or whose Event has a CR or LF: it could not be framed as one event.
var ErrInvalidEvent = errors.New("httpd: event ID or type with a line break or NUL")

// EventStreamOptions configure an EventStream. The zero value is the
// defaults.
type EventStreamOptions struct {
	// Heartbeat is the interval at which a comment line (":") goes to
	// the client, so that proxies and the client see the stream alive
	// and a client that is gone is found out: by the connection's loop
	// timer, not a goroutine or a runtime timer. Default
	// DefaultEventHeartbeat; negative for none.
	Heartbeat time.Duration
	// MaxQueued caps the bytes queued for the client and not yet sent: a
	// Send that finds this many queued ahead of it fails with
	// ErrQueueFull, and, unless DropWhenFull, the stream is cut. Default
	// DefaultEventMaxQueued.
	MaxQueued int
	// DropWhenFull keeps a stream whose queue is full open, dropping
	// only the event that did not fit (a live feed's choice). A heartbeat
	// that does not fit still cuts it: a client that lets a full queue
	// stand for a heartbeat's interval is taken as gone.
	DropWhenFull bool
	// Retry, when positive, is sent first, as the client's reconnection
	// time (a "retry:" field).
	Retry time.Duration
	// OnClose, if set, is called once the stream has ended, with Err's
	// error, as Done closes: on the connection's loop for a loop-held
	// stream, so it must not block. A hub of streams drops s there,
	// without a goroutine per stream waiting on Done.
	OnClose func(s *Stream, err error)
}

// The defaults of EventStreamOptions.
const (
	DefaultEventHeartbeat = 15 * time.Second
	DefaultEventMaxQueued = 256 << 10
)

func (o EventStreamOptions) withDefaults() EventStreamOptions {
	if o.Heartbeat == 0 {
		o.Heartbeat = DefaultEventHeartbeat
	}
	if o.MaxQueued <= 0 {
		o.MaxQueued = DefaultEventMaxQueued
	}
	return o
}

// heartbeat is the comment line a heartbeat sends (§9.2.6: a line that
// starts with a colon is ignored by the client).
var heartbeat = []byte(":\n\n")

// appendTo appends ev's wire form to b.
func (ev *Event) appendTo(b []byte) ([]byte, error) {
	if !validField(ev.ID, true) || !validField(ev.Event, false) {
		return b, ErrInvalidEvent
	}
	if ev.ID != "" {
		b = append(append(append(b, "id: "...), ev.ID...), '\n')
	}
	if ev.Event != "" {
		b = append(append(append(b, "event: "...), ev.Event...), '\n')
	}
	if ev.Retry > 0 {
		b = strconv.AppendInt(append(b, "retry: "...), ev.Retry.Milliseconds(), 10)
		b = append(b, '\n')
	}
	if ev.Data != "" || ev.Event != "" || ev.ID == "" && ev.Retry <= 0 {
		b = appendData(b, ev.Data)
	}
	return append(b, '\n'), nil
}

// appendData appends data as "data:" fields, one per line (§9.2.6: a
// line ends at CRLF, LF or CR).
func appendData(b []byte, data string) []byte {
	for {
		i := 0
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			i++
		}
		b = append(append(append(b, "data: "...), data[:i]...), '\n')
		if i == len(data) {
			return b
		}
		if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
		data = data[i+1:]
	}
}

// validField reports whether s can be one field's value: no line break,
// and, for an ID, no NUL.
func validField(s string, id bool) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\n' || c == '\r' || c == 0 && id {
			return false
		}
	}
	return true
}

// encodeBufs recycles the buffers Send encodes events in.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// PreparedEvent is an event encoded once for many streams (see
// Broadcast). It is immutable and safe to use from many goroutines.
type PreparedEvent struct {
	b []byte
}

// NewPreparedEvent encodes ev, or fails with ErrInvalidEvent.
func NewPreparedEvent(ev Event) (*PreparedEvent, error) {
	b, err := ev.appendTo(nil)
	if err != nil {
		return nil, err
	}
	return &PreparedEvent{b: b}, nil
}

// Broadcast sends ev to every stream of streams, encoding it once, and
// returns how many took it. Like Send, it never waits: a stream whose
// queue is full is dealt with as its own Send would be (see
// EventStreamOptions.DropWhenFull), and the others are not held back by
// it. Safe from any goroutine.
func Broadcast(streams []*Stream, ev Event) int {
	pe, err := NewPreparedEvent(ev)
	if err != nil {
		return 0
	}
	n := 0
	for _, s := range streams {
		if s.SendPrepared(pe) == nil {
			n++
		}
	}
	return n
}
