package websocket_test

import (
	"compress/flate"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/websocket"
)

// FuzzStreamFrames sends the same bytes, cut in two writes at the same
// point, to a server that takes messages whole and to one that takes
// them in pieces (a StreamHandler), with the same options: both must
// deliver the same messages (the pieces joined) and end the same way,
// but that a compressed message may fail in pieces (1007: invalid
// data; 1009: inflated past ReadLimit) before its end, where whole it
// never completed (the input ended, or a later frame failed first).
func FuzzStreamFrames(f *testing.F) {
	d := newDeflater(flate.BestSpeed)
	for _, seed := range [][]byte{
		rawFrame(0x81, true, []byte("hello")),
		append(rawFrame(0x01, true, []byte("h\xc3")), rawFrame(0x80, true, []byte("\xa9llo"))...),
		append(rawFrame(0x89, true, []byte("ping")), rawFrame(0x88, true, closePayload(1000, "ok"))...),
		rawFrame(0x82, true, make([]byte, 60000)),
		rawFrame(0xc1, true, []byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0x00}),
		rawFrame(0xc2, true, d.message(make([]byte, 60000))),
		rawFrame(0xc2, true, d.message(make([]byte, 100000))),
		rawFrame(0xc1, true, d.message([]byte("ok\xff"))),
		rawFrame(0xc2, true, nil),
		append(rawFrame(0x42, true, []byte{0xf2, 0x48}), rawFrame(0x80, true, []byte{0xcd, 0xc9, 0xc9, 0x07, 0x00})...),
	} {
		f.Add(seed, uint16(len(seed)/2))
	}
	o := websocket.Options{ReadLimit: 1 << 16, Compression: websocket.CompressionEnabled}
	whole, pieces := &outcomes{ends: make(chan ended, 1)}, &outcomes{ends: make(chan ended, 1)}
	o.Handler = whole
	wholeURL := serveWS(f, &websocket.Upgrader{Options: o}, false)
	o.Handler = &streamOutcomes{pieces}
	piecesURL := serveWS(f, &websocket.Upgrader{Options: o}, false)
	f.Fuzz(func(t *testing.T, data []byte, cut uint16) {
		a := outcome(t, wholeURL, whole, data, int(cut))
		b := outcome(t, piecesURL, pieces, data, int(cut))
		if a.log != b.log && !failedEarly(a, b) {
			t.Fatalf("taken whole: %.300s\ntaken in pieces: %.300s", a.log, b.log)
		}
	})
}

// failedEarly reports whether pieces failed, with 1007 or 1009, a
// message under way that whole never completed (so never inflated): the
// messages before it are the same, and whole ended later, some other
// way.
func failedEarly(whole, pieces ended) bool {
	msgs, end := lastLine(pieces.log)
	wmsgs, _ := lastLine(whole.log)
	return pieces.underway && msgs == wmsgs && (end == "1007" || end == "1009")
}

// lastLine splits s at its last newline.
func lastLine(s string) (rest, last string) {
	i := strings.LastIndexByte(s, '\n')
	return s[:max(i, 0)], s[i+1:]
}

// ended is how a connection ended: its messages and end, one a line, and
// whether a message was under way (in pieces only).
type ended struct {
	log      string
	underway bool
}

// outcome sends data to url as fuzzServerFrames does, and returns what
// h saw of the connection.
func outcome(t *testing.T, url string, h *outcomes, data []byte, cut int) ended {
	rc, _ := rawDial(t, url, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover")
	at := min(cut, len(data))
	rc.nc.Write(data[:at])
	rc.nc.Write(data[at:])
	rc.nc.(interface{ CloseWrite() error }).CloseWrite()
	rc.nc.SetReadDeadline(time.Now().Add(testTimeout))
	if _, err := io.Copy(io.Discard, rc.r); err != nil && !isReset(err) {
		t.Fatalf("the connection did not end: %v", err)
	}
	return recv(t, h.ends)
}

// outcomes records, per connection (its Context), the messages and how
// the connection ended, and hands them to ends at OnClose.
type outcomes struct {
	websocket.BaseHandler
	ends chan ended
}

// record is a connection's outcome so far.
type record struct {
	msgs     []string
	cur      []byte // a streamed message's pieces so far
	underway bool   // a streamed message began and has not ended
}

func (h *outcomes) OnOpen(c *websocket.Conn) { c.SetContext(new(record)) }

func (h *outcomes) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	r := c.Context().(*record)
	r.msgs = append(r.msgs, fmt.Sprintf("%d %q", typ, data))
}

func (h *outcomes) OnClose(c *websocket.Conn, err error) {
	r := c.Context().(*record)
	var ce *websocket.CloseError
	end := fmt.Sprint(closeCode(err))
	if errors.As(err, &ce) {
		end = fmt.Sprintf("close frame %d %q", ce.Code, ce.Reason)
	}
	h.ends <- ended{strings.Join(append(slices.Clip(r.msgs), end), "\n"), r.underway}
}

// streamOutcomes is outcomes as a StreamHandler.
type streamOutcomes struct{ *outcomes }

func (h *streamOutcomes) OnMessageStart(c *websocket.Conn, typ websocket.MessageType) {
	r := c.Context().(*record)
	r.cur = append(r.cur[:0], byte(typ))
	r.underway = true
}

func (h *streamOutcomes) OnMessageData(c *websocket.Conn, chunk []byte, final bool) {
	r := c.Context().(*record)
	r.cur = append(r.cur, chunk...)
	if final {
		r.underway = false
		h.OnMessage(c, websocket.MessageType(r.cur[0]), r.cur[1:])
	}
}
