package websocket_test

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// streamed is what a streamer was given of one message.
type streamed struct {
	typ      websocket.MessageType
	n        int      // bytes
	pieces   int      // OnMessageData calls
	maxPiece int      // the longest piece
	crc      uint32   // CRC-32 of the bytes
	data     []byte   // the bytes, when the streamer keeps them
	log      []string // the callbacks, in order: consecutive pieces merged
}

// streamer is a StreamHandler (and PingHandler, PongHandler): it hands
// each message, once its final piece came, to msgs. hook, if set, runs
// after each piece is recorded. The callbacks run on the connection's
// loop; the message being read is the connection's Context.
type streamer struct {
	websocket.BaseHandler
	conns  chan *websocket.Conn
	msgs   chan streamed
	closed chan error
	keep   bool
	hook   func(c *websocket.Conn, m *streamed, chunk []byte)
}

func newStreamer(keep bool) *streamer {
	return &streamer{conns: make(chan *websocket.Conn, 128), msgs: make(chan streamed, 16), closed: make(chan error, 128), keep: keep}
}

func (s *streamer) OnOpen(c *websocket.Conn) {
	c.SetContext(new(streamed))
	s.conns <- c
}

func (s *streamer) OnClose(_ *websocket.Conn, err error) { s.closed <- err }

func (s *streamer) OnMessage(*websocket.Conn, websocket.MessageType, []byte) {
	panic("OnMessage called on a StreamHandler")
}

func cur(c *websocket.Conn) *streamed { return c.Context().(*streamed) }

func (s *streamer) OnMessageStart(c *websocket.Conn, typ websocket.MessageType) {
	*cur(c) = streamed{typ: typ, log: []string{fmt.Sprintf("start %d", typ)}}
}

func (s *streamer) OnMessageData(c *websocket.Conn, chunk []byte, final bool) {
	m := cur(c)
	m.n += len(chunk)
	m.pieces++
	m.maxPiece = max(m.maxPiece, len(chunk))
	m.crc = crc32.Update(m.crc, crc32.IEEETable, chunk)
	data := "data"
	if s.keep {
		m.data = append(m.data, chunk...)
		data += " " + string(chunk)
	}
	if last := len(m.log) - 1; s.keep && strings.HasPrefix(m.log[last], "data ") {
		m.log[last] += string(chunk)
	} else if m.log[last] != data {
		m.log = append(m.log, data)
	}
	if s.hook != nil {
		s.hook(c, m, chunk)
	}
	if final {
		m.log = append(m.log, "final")
		s.msgs <- *m
		*m = streamed{}
	}
}

func (s *streamer) OnPing(c *websocket.Conn, data []byte) {
	cur(c).log = append(cur(c).log, "ping "+string(data))
}

func (s *streamer) OnPong(c *websocket.Conn, data []byte) {
	cur(c).log = append(cur(c).log, "pong "+string(data))
}

func equalStrings(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00") && len(a) == len(b)
}

// TestStreamReadFragments: a text message whose fragments split two
// characters, with a ping, a pong and an empty fragment between them, is
// delivered in order, the control frames handled between its pieces;
// then a one-frame message and an empty one.
func TestStreamReadFragments(t *testing.T) { backendtest.Run(t, testStreamReadFragments) }

func testStreamReadFragments(t *testing.T) {
	h := newStreamer(true)
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: h}}, false)
	rc, _ := rawDial(t, url)
	recv(t, h.conns)
	rc.frame(0x01, true, []byte("h\xc3"))
	rc.frame(0x89, true, []byte("p1"))
	rc.frame(0x00, true, []byte("\xa9llo \xe2\x82"))
	rc.frame(0x8a, true, []byte("unasked"))
	rc.frame(0x00, true, nil)
	rc.frame(0x80, true, []byte("\xac!"))
	rc.frame(0x82, true, []byte("one frame"))
	rc.frame(0x81, true, nil)
	for _, want := range [][]string{
		{"start 1", "data h\xc3", "ping p1", "data \xa9llo \xe2\x82", "pong unasked", "data \xac!", "final"},
		{"start 2", "data one frame", "final"},
		{"start 1", "data ", "final"},
	} {
		m := recv(t, h.msgs)
		if !equalStrings(m.log, want) {
			t.Errorf("callbacks %q, want %q", m.log, want)
		}
	}
	if f, err := rc.read(); err != nil || f.op() != 0xa || string(f.payload) != "p1" {
		t.Errorf("the ping's answer: %v %v, want a pong p1", f, err)
	}
}

// TestStreamReadInvalid: a message that breaks a rule fails the
// connection with the rule's code, and its StreamHandler gets no piece
// from the one that broke it on, and no final call.
func TestStreamReadInvalid(t *testing.T) { backendtest.Run(t, testStreamReadInvalid) }

func testStreamReadInvalid(t *testing.T) {
	bomb := newDeflater(flate.BestCompression).message(make([]byte, 1<<20))
	for _, tc := range []struct {
		name   string
		frames [][]byte
		code   int
		got    string // the pieces delivered
	}{
		{"invalid UTF-8", [][]byte{rawFrame(0x01, true, []byte("ok\xff"))}, 1007, ""},
		{"invalid UTF-8 in a later fragment", [][]byte{rawFrame(0x01, true, []byte("\xe2")), rawFrame(0x80, true, []byte("("))}, 1007, "\xe2"},
		{"ends within a character", [][]byte{rawFrame(0x81, true, []byte("ok\xe2\x82"))}, 1007, ""},
		{"invalid UTF-8, compressed", [][]byte{rawFrame(0xc1, true, newDeflater(flate.BestSpeed).message([]byte("ok\xff")))}, 1007, ""},
		{"over ReadLimit", [][]byte{rawFrame(0x02, true, make([]byte, 600)), rawFrame(0x80, true, make([]byte, 600))}, 1009, strings.Repeat("\x00", 600)},
		{"over ReadLimit, compressed", [][]byte{rawFrame(0xc2, true, bomb)}, 1009, strings.Repeat("\x00", 16<<10)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newStreamer(true)
			var pieces []string
			h.hook = func(_ *websocket.Conn, _ *streamed, chunk []byte) { pieces = append(pieces, string(chunk)) }
			o := websocket.Options{Handler: h, ReadLimit: 1000, Compression: websocket.CompressionEnabled}
			if strings.HasSuffix(tc.name, "compressed") && tc.code == 1009 {
				o.ReadLimit = 16 << 10
			}
			url := serveWS(t, &websocket.Upgrader{Options: o}, false)
			rc, _ := rawDial(t, url, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover")
			recv(t, h.conns)
			for _, f := range tc.frames {
				rc.send(f)
			}
			rc.expectClose(tc.code)
			err := recv(t, h.closed)
			if code := closeCode(err); code != tc.code {
				t.Errorf("OnClose(%v), want code %d", err, tc.code)
			}
			if got := strings.Join(pieces, ""); got != tc.got {
				t.Errorf("pieces delivered %.40q (%d bytes), want %.40q (%d)", got, len(got), tc.got, len(tc.got))
			}
			select {
			case m := <-h.msgs:
				t.Errorf("a final call, after %q", m.log)
			default:
			}
		})
	}
}

// closeCode is the close code the server sent for err.
func closeCode(err error) int {
	var pe *websocket.ProtocolError
	switch {
	case errors.Is(err, websocket.ErrReadLimit):
		return 1009
	case errors.As(err, &pe):
		return int(pe.Code)
	}
	return -1
}

// TestStreamReadCompressed sends messages from the package's Dialer with
// compression to a StreamHandler: each arrives whole, in pieces of at
// most 16 KiB (text split within its characters), a stream's fragments
// too; then, from a peer that keeps its context (context takeover),
// messages that refer back to earlier ones.
func TestStreamReadCompressed(t *testing.T) { backendtest.Run(t, testStreamReadCompressed) }

func testStreamReadCompressed(t *testing.T) {
	h := newStreamer(true)
	u := &websocket.Upgrader{Options: websocket.Options{Handler: h, ReadLimit: 4 << 20, Compression: websocket.CompressionContextTakeover}}
	url := serveWS(t, u, false)
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Compression: websocket.CompressionEnabled}}, url)
	recv(t, h.conns)
	if !c.Compressed() {
		t.Fatal("permessage-deflate was not agreed on")
	}
	text := []byte(strings.Repeat("héllo wörld, € and 😀 streamed; ", 40000)) // about 1.4 MiB
	rnd := make([]byte, 256<<10)
	for i := range rnd {
		rnd[i] = byte(rand.IntN(256))
	}
	check := func(typ websocket.MessageType, want []byte) {
		t.Helper()
		m := recv(t, h.msgs)
		if m.typ != typ || !bytes.Equal(m.data, want) {
			t.Fatalf("message of type %v, %d bytes %.30q, want %v, %d bytes %.30q", m.typ, len(m.data), m.data, typ, len(want), want)
		}
		if m.maxPiece > 16<<10 {
			t.Errorf("a piece of %d bytes, want at most 16 KiB", m.maxPiece)
		}
	}
	c.WriteMessage(websocket.TextMessage, text)
	check(websocket.TextMessage, text)
	c.WriteMessage(websocket.BinaryMessage, rnd)
	check(websocket.BinaryMessage, rnd)
	w, _ := c.NextWriter(websocket.TextMessage)
	for i := 0; i < len(text); i += 100 << 10 {
		w.Write(text[i:min(i+100<<10, len(text))])
	}
	w.Close()
	check(websocket.TextMessage, text)
	c.WriteMessage(websocket.BinaryMessage, nil)
	check(websocket.BinaryMessage, nil)

	rc, _ := rawDial(t, url, "Sec-WebSocket-Extensions: permessage-deflate")
	recv(t, h.conns)
	d := newDeflater(flate.BestSpeed)
	for i := range 3 {
		msg := fmt.Appendf(nil, "the same words again and again, %d", i)
		rc.frame(0xc1, true, d.message(msg))
		check(websocket.TextMessage, msg)
	}
	rc.frame(0xc2, true, nil) // no DEFLATE data at all: empty
	check(websocket.BinaryMessage, nil)
	rc.frame(0xc2, true, []byte{0x00}) // RFC 7692 §7.2.3.6's empty block
	check(websocket.BinaryMessage, nil)
	rc.frame(0x42, true, nil) // fragments, the first and last empty
	rc.frame(0x00, true, d.message([]byte("after nothing")))
	rc.frame(0x80, true, nil)
	check(websocket.BinaryMessage, []byte("after nothing"))
}

// TestStreamReadPause: a StreamHandler that calls PauseRead in
// OnMessageData gets no further piece, though the rest of the message
// has come, until ResumeRead; then it gets the rest. Both for a
// compressed message (its output held back) and for fragments that came
// in one write.
func TestStreamReadPause(t *testing.T) { backendtest.Run(t, testStreamReadPause) }

func testStreamReadPause(t *testing.T) {
	h := newStreamer(true)
	paused := make(chan *websocket.Conn, 1)
	h.hook = func(c *websocket.Conn, m *streamed, _ []byte) {
		if m.pieces == 1 {
			c.PauseRead()
			paused <- c
		}
	}
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: h, Compression: websocket.CompressionEnabled}}, false)

	text := []byte(strings.Repeat("paused, then resumed; ", 40000)) // 880 KB, in 16 KiB pieces
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Compression: websocket.CompressionEnabled}}, url)
	recv(t, h.conns)
	c.WriteMessage(websocket.TextMessage, text)
	pauseThenResume(t, h, paused, text)

	rc, _ := rawDial(t, url)
	recv(t, h.conns)
	first, second := bytes.Repeat([]byte("a"), 1000), bytes.Repeat([]byte("b"), 1000)
	rc.send(append(rawFrame(0x02, true, first), rawFrame(0x80, true, second)...))
	pauseThenResume(t, h, paused, append(first, second...))
}

// pauseThenResume waits for h's hook to pause, checks that no piece
// follows for a while, resumes and checks the message is whole.
func pauseThenResume(t *testing.T, h *streamer, paused chan *websocket.Conn, want []byte) {
	t.Helper()
	c := recv(t, paused)
	select {
	case m := <-h.msgs:
		t.Fatalf("the message ended, in %d pieces, though its first paused reading", m.pieces)
	case <-time.After(200 * time.Millisecond):
	}
	if err := c.ResumeRead(); err != nil {
		t.Fatal(err)
	}
	m := recv(t, h.msgs)
	if !bytes.Equal(m.data, want) {
		t.Fatalf("after ResumeRead: %d bytes %.30q, want %d %.30q", len(m.data), m.data, len(want), want)
	}
}

// TestStreamReadClient: a Dialer's connection whose Handler is a
// StreamHandler gets the server's (unmasked) messages in pieces, with
// and without compression.
func TestStreamReadClient(t *testing.T) { backendtest.Run(t, testStreamReadClient) }

func testStreamReadClient(t *testing.T) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionEnabled} {
		o := websocket.Options{Handler: newRecorder(true), ReadLimit: 4 << 20, MaxQueued: 4 << 20, Compression: mode}
		url := serveWS(t, &websocket.Upgrader{Options: o}, false)
		h := newStreamer(true)
		c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: h, ReadLimit: 4 << 20, Compression: mode}}, url)
		recv(t, h.conns)
		for _, msg := range [][]byte{[]byte("small"), []byte(strings.Repeat("héllo wörld, € and 😀 echoed; ", 40000))} {
			c.WriteMessage(websocket.TextMessage, msg)
			m := recv(t, h.msgs)
			if m.typ != websocket.TextMessage || !bytes.Equal(m.data, msg) {
				t.Fatalf("compression %d: echo of type %v, %d bytes %.30q, want text, %d bytes %.30q", mode, m.typ, len(m.data), m.data, len(msg), msg)
			}
		}
		c.CloseNow()
	}
}

// TestStreamReadSplitRune: a text frame whose payload arrives in two
// receives, cut within a character, is delivered in two pieces, the
// first ending with the character's first byte.
func TestStreamReadSplitRune(t *testing.T) { backendtest.Run(t, testStreamReadSplitRune) }

func testStreamReadSplitRune(t *testing.T) {
	h := newStreamer(true)
	got := make(chan string, 4)
	h.hook = func(_ *websocket.Conn, _ *streamed, chunk []byte) { got <- string(chunk) }
	url := serveWS(t, &websocket.Upgrader{Options: websocket.Options{Handler: h}}, false)
	rc, _ := rawDial(t, url)
	recv(t, h.conns)
	frame := rawFrame(0x81, true, []byte("a€b")) // € is e2 82 ac
	cut := len(frame) - 3                        // after "a\xe2"
	rc.send(frame[:cut])
	if p := recv(t, got); p != "a\xe2" {
		t.Fatalf("first piece %q, want %q", p, "a\xe2")
	}
	rc.send(frame[cut:])
	if p := recv(t, got); p != "\x82\xacb" {
		t.Fatalf("second piece %q, want %q", p, "\x82\xacb")
	}
	if m := recv(t, h.msgs); string(m.data) != "a€b" || m.pieces != 2 {
		t.Errorf("message %q in %d pieces, want %q in 2", m.data, m.pieces, "a€b")
	}
}
