package engine_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/engine"
)

// etFrame encodes p with a 2-byte big-endian length prefix.
func etFrame(p []byte) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(len(p))), p...)
}

// etFramer is OnData for the length-prefixed protocol: it takes each
// whole frame with Peek and Next, reports it, answers it, and leaves a
// partial frame for the next call.
func etFramer(t testing.TB, frames chan<- string) func(c *engine.Conn, in *engine.Inbound) engine.Action {
	return func(c *engine.Conn, in *engine.Inbound) engine.Action {
		for {
			hdr, err := in.Peek(2)
			if err != nil {
				if !errors.Is(err, io.ErrShortBuffer) || len(hdr) != in.Len() {
					t.Errorf("Peek(2) = %q, %v with Len %d", hdr, err, in.Len())
				}
				return engine.None
			}
			n := int(binary.BigEndian.Uint16(hdr))
			if in.Len() < 2+n {
				if p, err := in.Next(2 + n); p != nil || !errors.Is(err, io.ErrShortBuffer) {
					t.Errorf("Next(%d) with Len %d = %q, %v", 2+n, in.Len(), p, err)
				}
				return engine.None
			}
			in.Next(2)
			p, _ := in.Next(n)
			frames <- string(p)
			c.Write(etFrame(bytes.ToUpper(p)))
		}
	}
}

// TestInboundFrames checks that a length-prefixed protocol written with
// Peek and Next gets whole frames when the peer writes them byte by byte,
// or many at once.
func TestInboundFrames(t *testing.T) { backendtest.Run(t, testInboundFrames) }

func testInboundFrames(t *testing.T) {
	msgs := []string{"", "a", "hello", strings.Repeat("frame", 300), "x"}
	var stream []byte
	for _, m := range msgs {
		stream = append(stream, etFrame([]byte(m))...)
	}
	var reply []byte
	for _, m := range msgs {
		reply = append(reply, etFrame([]byte(strings.ToUpper(m)))...)
	}
	etForStreams(t, func(t *testing.T, network string) {
		for _, mode := range []string{"bytewise", "whole"} {
			t.Run(mode, func(t *testing.T) {
				frames := make(chan string, len(msgs))
				h := etNewHandler()
				h.data = etFramer(t, frames)
				_, _, peer := etServe(t, h, engine.Options{}, network)
				if mode == "whole" {
					peer.Write(stream)
				} else {
					for i := range stream {
						if _, err := peer.Write(stream[i : i+1]); err != nil {
							t.Fatal(err)
						}
					}
				}
				for i, want := range msgs {
					if got := etRecv(t, frames, "frame"); got != want {
						t.Fatalf("frame %d = %q, want %q", i, etHead([]byte(got)), etHead([]byte(want)))
					}
				}
				etExpect(t, peer, string(reply))
			})
		}
	})
}

// TestInboundBigFrame checks that a frame far larger than the read buffer
// is assembled from many reads.
func TestInboundBigFrame(t *testing.T) { backendtest.Run(t, testInboundBigFrame) }

func testInboundBigFrame(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		frames := make(chan string, 1)
		h := etNewHandler()
		h.data = etFramer(t, frames)
		_, _, peer := etServe(t, h, engine.Options{ReadBufferSize: 1024}, network)
		msg := etPattern(60000)
		go peer.Write(etFrame(msg))
		if got := etRecv(t, frames, "frame"); got != string(msg) {
			t.Fatalf("frame of %d bytes, first difference at %d; want %d bytes", len(got), etCheckPattern([]byte(got)), len(msg))
		}
		etReadFull(t, peer, 2+len(msg))
	})
}

// TestInboundReadUntil checks a line protocol with ReadUntil.
func TestInboundReadUntil(t *testing.T) { backendtest.Run(t, testInboundReadUntil) }

func testInboundReadUntil(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		lines := make(chan string, 16)
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			for {
				line, err := in.ReadUntil('\n')
				if err != nil {
					if !errors.Is(err, io.ErrShortBuffer) || bytes.IndexByte(in.Bytes(), '\n') >= 0 {
						t.Errorf("ReadUntil = %q, %v with %q left", line, err, in.Bytes())
					}
					return engine.None
				}
				lines <- string(line)
				c.Write(line)
			}
		}
		_, _, peer := etServe(t, h, engine.Options{}, network)
		input := "hello\nwor" + "ld\n\nlast line\n"
		for _, part := range []string{"hel", "lo\nwor", "ld\n", "\nlast", " line", "\n"} {
			peer.Write([]byte(part))
		}
		for _, want := range []string{"hello\n", "world\n", "\n", "last line\n"} {
			if got := etRecv(t, lines, "line"); got != want {
				t.Fatalf("line %q, want %q", got, want)
			}
		}
		etExpect(t, peer, input)
	})
}

// TestInboundLeftover checks that bytes OnData leaves are presented again,
// first, at the next call: a handler that takes one byte per call (and
// wakes itself while bytes are left) sees each call's input begin with
// the previous call's rest, and takes every byte once, in order.
func TestInboundLeftover(t *testing.T) { backendtest.Run(t, testInboundLeftover) }

func testInboundLeftover(t *testing.T) {
	etForStreams(t, func(t *testing.T, network string) {
		const input = "the quick brown fox"
		type call struct{ seen, took string }
		calls := make(chan call, 1024)
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			seen := string(in.Bytes())
			b, err := in.Next(1)
			if err != nil {
				calls <- call{seen, ""}
				return engine.None
			}
			calls <- call{seen, string(b)}
			if in.Len() > 0 {
				c.Wake()
			}
			return engine.None
		}
		_, _, peer := etServe(t, h, engine.Options{}, network)
		for i := 0; i < len(input); i += 5 {
			peer.Write([]byte(input[i:min(i+5, len(input))]))
		}
		var took strings.Builder
		prev := ""
		for took.Len() < len(input) {
			cl := etRecv(t, calls, "OnData")
			if !strings.HasPrefix(cl.seen, prev) {
				t.Fatalf("OnData saw %q after leaving %q", cl.seen, prev)
			}
			if cl.took != "" {
				prev = cl.seen[1:]
			} else {
				prev = cl.seen
			}
			took.WriteString(cl.took)
		}
		if took.String() != input {
			t.Fatalf("bytes taken in order: %q, want %q", took.String(), input)
		}
	})
}

// TestInboundMethods checks the Inbound methods against each other on a
// known input.
func TestInboundMethods(t *testing.T) { backendtest.Run(t, testInboundMethods) }

func testInboundMethods(t *testing.T) {
	var errs atomic.Pointer[string]
	fail := func(format string, args ...any) {
		s := fmt.Sprintf(format, args...)
		errs.CompareAndSwap(nil, &s)
	}
	done := make(chan struct{})
	h := etNewHandler()
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if in.Len() < 10 {
			return engine.None // wait for all of it
		}
		if in.From() != nil {
			fail("From() = %v on a stream, want nil", in.From())
		}
		if p, err := in.Peek(3); string(p) != "012" || err != nil {
			fail("Peek(3) = %q, %v", p, err)
		}
		if p, err := in.Peek(11); string(p) != "0123456789" || !errors.Is(err, io.ErrShortBuffer) {
			fail("Peek(11) = %q, %v, want everything and io.ErrShortBuffer", p, err)
		}
		if p, err := in.Next(11); p != nil || !errors.Is(err, io.ErrShortBuffer) || in.Len() != 10 {
			fail("Next(11) = %q, %v leaving %d, want nil, io.ErrShortBuffer leaving 10", p, err, in.Len())
		}
		if n := in.Discard(-1); n != 0 {
			fail("Discard(-1) = %d", n)
		}
		if n := in.Discard(2); n != 2 || string(in.Bytes()) != "23456789" {
			fail("Discard(2) = %d leaving %q", n, in.Bytes())
		}
		buf := make([]byte, 3)
		if n, err := in.Read(buf); n != 3 || err != nil || string(buf) != "234" {
			fail("Read(3) = %d, %v, %q", n, err, buf)
		}
		if p, err := in.ReadUntil('7'); string(p) != "567" || err != nil {
			fail("ReadUntil('7') = %q, %v", p, err)
		}
		if p, err := in.ReadUntil('x'); p != nil || !errors.Is(err, io.ErrShortBuffer) || in.Len() != 2 {
			fail("ReadUntil('x') = %q, %v leaving %d", p, err, in.Len())
		}
		if n, err := in.Read(nil); n != 0 || err != nil {
			fail("Read(nil) = %d, %v with bytes left, want 0, nil", n, err)
		}
		if n, err := in.Read(make([]byte, 10)); n != 2 || err != nil {
			fail("Read(10) = %d, %v, want 2, nil", n, err)
		}
		if n, err := in.Read(buf); n != 0 || err != io.EOF {
			fail("Read when empty = %d, %v, want 0, io.EOF", n, err)
		}
		if n := in.Discard(5); n != 0 || in.Len() != 0 {
			fail("Discard(5) when empty = %d", n)
		}
		close(done)
		return engine.None
	}
	_, _, peer := etServe(t, h, engine.Options{}, "tcp")
	peer.Write([]byte("0123"))
	peer.Write([]byte("456789"))
	etRecv(t, done, "OnData with 10 bytes")
	if s := errs.Load(); s != nil {
		t.Fatal(*s)
	}
}

// TestInputCap checks that the input a handler leaves unconsumed is
// capped by Options.MaxInputBuffer: past it the connection closes with
// ErrInputBufferFull. It used to grow without bound (a handler waiting
// for a frame that never ends held everything the peer sent).
func TestInputCap(t *testing.T) { backendtest.Run(t, testInputCap) }

func testInputCap(t *testing.T) {
	const limit = 1 << 20
	h := etNewHandler()
	var most atomic.Int64
	h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
		if n := int64(in.Len()); n > most.Load() {
			most.Store(n)
		}
		return engine.None // waits for a delimiter that never comes
	}
	o := engine.Options{Loops: 1, MaxInputBuffer: limit, ReadBufferSize: 16 << 10}
	_, _, peer := etServe(t, h, o, "tcp")
	go func() {
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		peer.SetWriteDeadline(time.Now().Add(etWait))
		for range 128 { // 8 MiB
			if _, err := peer.Write(chunk); err != nil {
				return
			}
		}
	}()
	ev := etClosed(t, h)
	if !errors.Is(ev.err, engine.ErrInputBufferFull) {
		t.Fatalf("OnClose error = %v, want ErrInputBufferFull", ev.err)
	}
	if m := most.Load(); m > int64(limit+o.ReadBufferSize) {
		t.Errorf("OnData saw %d unconsumed bytes, more than MaxInputBuffer %d and one read", m, limit)
	}
}
