package engine_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestIdleHoldsNoInput checks that a connection whose handler once left
// a partial frame holds no input buffer once the frame was taken whole:
// an idle connection owns no buffer (a buffer of up to 4 KiB used to stay
// with every connection that ever left bytes, some 540 bytes per idle
// WebSocket connection on the benchmark).
func TestIdleHoldsNoInput(t *testing.T) { backendtest.Run(t, testIdleHoldsNoInput) }

func testIdleHoldsNoInput(t *testing.T) {
	for _, size := range []int{10, 300, 3000} {
		frames := make(chan string, 16)
		h := etNewHandler()
		h.data = etFramer(t, frames)
		_, c, peer := etServe(t, h, engine.Options{}, "tcp")
		msg := strings.Repeat("m", size)
		frame := etFrame([]byte(msg))
		half := len(frame) / 2
		peer.Write(frame[:half]) // a partial frame, left in c's input
		etWaitFor(t, "the partial frame kept", func() bool { return engine.InputHeld(c) > 0 })
		peer.Write(frame[half:])
		if got := etRecv(t, frames, "the frame"); got != msg {
			t.Fatalf("frame of %d bytes: got %d", size, len(got))
		}
		if n := engine.InputHeld(c); n != 0 {
			t.Errorf("frame of %d bytes: an idle connection holds an input buffer of %d bytes, want none", size, n)
		}
	}
}

// TestPartialFrameAllocs checks that a steady exchange of frames that
// each arrive in two pieces allocates nothing: the input buffer that
// holds the first piece comes from the engine's pool and goes back to it.
// The server answers "p" once it holds the first half and the frame
// itself once whole, so the client knows each half was handled apart.
func TestPartialFrameAllocs(t *testing.T) { backendtest.Run(t, testPartialFrameAllocs) }

func testPartialFrameAllocs(t *testing.T) {
	backendtest.SkipOnNet(t, "a worker goroutine and its record per operation")
	for _, size := range []int{100, 2000} {
		frame := etFrame(bytes.Repeat([]byte("f"), size))
		half := len(frame) / 2
		acked := false // loop-owned
		h := etNewHandler()
		h.data = func(c *engine.Conn, in *engine.Inbound) engine.Action {
			for {
				hdr, err := in.Peek(2)
				if err == nil && in.Len() >= 2+int(binary.BigEndian.Uint16(hdr)) {
					p, _ := in.Next(2 + int(binary.BigEndian.Uint16(hdr)))
					c.Write(p)
					acked = false
					continue
				}
				if in.Len() == half && !acked { // (the half may come in pieces)
					c.Write(partialAck)
					acked = true
				}
				return engine.None
			}
		}
		_, _, peer := etServe(t, h, engine.Options{}, "tcp")
		peer.SetDeadline(time.Now().Add(time.Minute))
		ack, echo := make([]byte, 1), make([]byte, len(frame))
		round := func() {
			peer.Write(frame[:half])
			if _, err := io.ReadFull(peer, ack); err != nil || ack[0] != 'p' {
				t.Fatalf("after half a frame: %q, %v; want \"p\"", ack, err)
			}
			peer.Write(frame[half:])
			if _, err := io.ReadFull(peer, echo); err != nil || !bytes.Equal(echo, frame) {
				t.Fatalf("after the frame's rest: %q, %v; want the frame %q", echo, err, frame)
			}
		}
		for range 100 {
			round()
		}
		if got := testing.AllocsPerRun(500, round); got != 0 {
			t.Errorf("frames of %d bytes in two pieces: %v allocations per frame, want 0", size, got)
		}
	}
}

var partialAck = []byte("p")

// TestIdleHoldsNoOutput checks that a connection whose queued output was
// all sent holds no output chunk. On io_uring every reply made in OnData
// is queued (and sent with the loop's next submission), and the last
// chunk, partly filled, stayed with its connection "open for writers":
// 1 KiB per idle connection, most of what an idle connection cost there.
func TestIdleHoldsNoOutput(t *testing.T) { backendtest.Run(t, testIdleHoldsNoOutput) }

func testIdleHoldsNoOutput(t *testing.T) {
	h := etEchoHandler()
	_, c, peer := etServe(t, h, engine.Options{}, "tcp")
	etEchoes(t, peer, "one echo")
	etWaitFor(t, "the echo sent", func() bool { return c.OutboundBuffered() == 0 })
	if n := engine.OutputHeld(c); n != 0 {
		t.Errorf("an idle connection holds %d bytes of output chunks, want none", n)
	}
}

// TestIdleHoldsNoQueue checks that a connection whose queued output was
// all sent gives its output queue back, unless a write deadline (which the
// queue holds) is set: every connection that ever replied on io_uring kept
// one, some 110 bytes per idle connection. A reply that fills the socket
// is queued on every backend; a WaitOutput made during the send must not
// keep the queue either.
func TestIdleHoldsNoQueue(t *testing.T) { backendtest.Run(t, testIdleHoldsNoQueue) }

func testIdleHoldsNoQueue(t *testing.T) {
	h := etEchoHandler()
	_, c, peer := etServe(t, h, engine.Options{}, "tcp")
	peer.SetDeadline(time.Now().Add(time.Minute))
	sent := func(what string) {
		t.Helper()
		etWaitFor(t, what+" sent", func() bool { return c.OutboundBuffered() == 0 })
		if engine.HoldsQueue(c) {
			t.Errorf("after %s: HoldsQueue = true, want false", what)
		}
	}
	etEchoes(t, peer, "one echo")
	sent("an echo")

	// fill writes until output is queued, then lets the peer read it all,
	// with wait running meanwhile.
	fill := func(wait func()) {
		t.Helper()
		total := 0
		for c.OutboundBuffered() < 256<<10 {
			if total > 64<<20 {
				t.Fatalf("%d bytes written and only %d queued", total, c.OutboundBuffered())
			}
			n, err := c.Write(etChunk64K)
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			wait()
		}()
		etReadFull(t, peer, total)
		etRecv(t, done, "the wait")
	}
	fill(func() {})
	sent("a queued write")
	fill(func() {
		if err := c.WaitOutput(0, nil); err != nil {
			t.Errorf("WaitOutput(0) = %v, want nil", err)
		}
	})
	sent("a queued write waited for")

	if err := c.SetWriteDeadline(time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	fill(func() {})
	etWaitFor(t, "the write sent", func() bool { return c.OutboundBuffered() == 0 })
	if !engine.HoldsQueue(c) {
		t.Errorf("with a write deadline: HoldsQueue = false, want true (it holds the deadline)")
	}
	if err := c.SetWriteDeadline(time.Time{}); err != nil {
		t.Fatal(err)
	}
	sent("a write deadline cleared")
	etEchoes(t, peer, "one more echo")
	sent("another echo")
}
