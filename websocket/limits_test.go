package websocket_test

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/websocket"
)

// TestLimits drives a hostile peer to each bound of websocket's part of
// the limits table (SECURITY.md), one
// sub-test per line, and checks that a well-behaved client of the same
// loop is served meanwhile. The dial- sub-tests turn it round: a hostile
// server, and a Dialer whose loop must go on serving its other
// connections.
func TestLimits(t *testing.T) {
	for _, l := range []struct {
		name string
		f    func(t *testing.T)
	}{
		{"message-size", limitMessageSize},
		{"declared-length", limitDeclaredLength},
		{"deflate-bomb", limitDeflateBomb},
		{"fragments", limitFragments},
		{"control-size", limitControlSize},
		{"partial-frame", limitPartialFrame},
		{"ping-flood", limitPingFlood},
		{"output-queue", limitOutputQueue},
		{"drop-when-full", limitDropWhenFull},
		{"held-behind-stream", limitHeldBehindStream},
		{"close-timeout", limitCloseTimeout},
		{"close-unread", limitCloseUnread},
		{"takeover-window", limitTakeoverWindow},
		{"idle", limitIdle},
		{"conn-cost", limitConnCost},
		{"upgrade-head", limitUpgradeHead},
		{"dial-head", limitDialHead},
		{"dial-slow", limitDialSlow},
		{"dial-read-limit", limitDialReadLimit},
		{"dial-close-wait", limitDialCloseWait},
	} {
		t.Run(l.name, func(t *testing.T) { backendtest.Run(t, l.f) })
	}
}

// message-size: a message is held as its bytes arrive, up to ReadLimit
// (1 MiB by default, after decompression); a frame that would pass it
// closes the connection with 1009 at its header, before its payload.
func limitMessageSize(t *testing.T) {
	if websocket.DefaultReadLimit != 1<<20 {
		t.Errorf("DefaultReadLimit = %d, want 1 MiB as documented", websocket.DefaultReadLimit)
	}
	h, url := limitServer(t, websocket.Options{}, nil)
	rc, sc := hostile(t, h, url)
	rc.frame(0x02, true, make([]byte, websocket.DefaultReadLimit-1)) // held: the message's first fragment
	served(t, url)
	rc.send(frameHeader(0x80, 2, true)) // two more bytes would pass the limit
	rc.expectClose(1009)
	if err := closeOf(t, sc, servedWithin); !errors.Is(err, websocket.ErrReadLimit) {
		t.Errorf("OnClose(%v), want ErrReadLimit", err)
	}
}

// declared-length: a frame's header declares its length, but the message
// is given room as its bytes arrive: a peer that declares 256 KiB frames
// and sends a byte of each holds a few bytes per connection, compressed
// (no decompressor is held for a message not yet whole) or not.
func limitDeclaredLength(t *testing.T) {
	h, url := limitServer(t, websocket.Options{Compression: websocket.CompressionEnabled}, nil)
	served(t, url) // the server's loop and buffers are made before the heap is measured
	const n = 64
	before := heap()
	for i := range n {
		b0, offer := byte(0x02), "X-Plain: 1" // binary, not final
		if i%2 == 1 {
			b0, offer = 0x42, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover"
		}
		rc, _ := hostile(t, h, url, offer)
		rc.send(append(frameHeader(b0, 256<<10, true), 0))
	}
	served(t, url)
	time.Sleep(50 * time.Millisecond) // the loop has read every hostile header by now
	if per := (heap() - before) / n; per > 16<<10 {
		t.Errorf("%d B of heap per connection that declared a 256 KiB frame and sent a byte of it (both ends), want at most 16 KiB", per)
	}
}

// deflate-bomb: ReadLimit applies after decompression: a few KiB that
// inflate past it close the connection with 1009, having allocated no
// more than the limit; below it, each message costs the loop inflating
// up to ReadLimit bytes, and the others are served meanwhile.
func limitDeflateBomb(t *testing.T) {
	h, url := limitServer(t, websocket.Options{Compression: websocket.CompressionEnabled}, nil)
	rc, sc := hostile(t, h, url, "Sec-WebSocket-Extensions: permessage-deflate; client_no_context_takeover")
	under := newDeflater(flate.BestCompression).message(make([]byte, websocket.DefaultReadLimit))
	for range 8 {
		rc.frame(0xc2, true, under)
	}
	served(t, url)
	for range 8 {
		if f, err := rc.read(); err != nil || string(f.payload) != fmt.Sprint("got ", websocket.DefaultReadLimit) {
			t.Fatalf("answer to a %d-byte message inflating to the limit: %s, %v", len(under), brief(f), err)
		}
	}
	bomb := newDeflater(flate.BestCompression).message(make([]byte, 16<<20))
	rc.frame(0xc2, true, bomb)
	rc.expectClose(1009)
	if err := closeOf(t, sc, servedWithin); !errors.Is(err, websocket.ErrReadLimit) {
		t.Errorf("OnClose(%v) after a %d-byte bomb of 16 MiB, want ErrReadLimit", err, len(bomb))
	}
}

// fragments: a message may come in any number of fragments, empty ones
// included: they cost the loop parsing, as any bytes do, and hold only
// the message's bytes, up to ReadLimit, past which 1009.
func limitFragments(t *testing.T) {
	h, url := limitServer(t, websocket.Options{ReadLimit: 4096}, nil)
	rc, sc := hostile(t, h, url)
	rc.frame(0x01, true, []byte("a")) // a text message begins
	empty := bytes.Repeat(rawFrame(0x00, true, nil), 10000)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- flood(rc.nc, empty, stop) }()
	time.Sleep(100 * time.Millisecond)
	served(t, url)
	close(stop)
	if err := recv(t, done); err != nil {
		t.Fatalf("empty continuation frames: %v", err)
	}
	rc.frame(0x80, true, []byte("z")) // and ends: delivered whole
	if f, err := rc.read(); err != nil || string(f.payload) != "az" {
		t.Fatalf("the message after its empty fragments: %s, %v; want \"az\"", brief(f), err)
	}
	var b bytes.Buffer
	b.Write(rawFrame(0x01, true, []byte("a")))
	for range 4095 {
		b.Write(rawFrame(0x00, true, []byte("a")))
	}
	b.Write(frameHeader(0x00, 1, true)) // byte 4097: refused at its header
	rc.send(b.Bytes())
	rc.expectClose(1009)
	if err := closeOf(t, sc, servedWithin); !errors.Is(err, websocket.ErrReadLimit) {
		t.Errorf("OnClose(%v), want ErrReadLimit", err)
	}
}

// control-size: a control frame is read whole, at most 125 bytes of
// payload; a longer or fragmented one closes the connection with 1002 at
// its header.
func limitControlSize(t *testing.T) {
	h, url := limitServer(t, websocket.Options{}, nil)
	for _, hdr := range [][]byte{
		frameHeader(0x89, 126, true), // a ping of 126 bytes
		frameHeader(0x09, 5, true),   // a ping without FIN
	} {
		rc, sc := hostile(t, h, url)
		rc.send(hdr)
		rc.expectClose(1002)
		var pe *websocket.ProtocolError
		if err := closeOf(t, sc, servedWithin); !errors.As(err, &pe) {
			t.Errorf("OnClose(%v), want a *ProtocolError", err)
		}
	}
	served(t, url)
}

// partial-frame: the loop keeps a partial frame header (at most 14 bytes)
// or control frame (131) in the connection's input until the rest comes;
// a data frame's payload goes into the message as it arrives. So no peer
// comes near the engine's MaxInputBuffer (4 MiB): one that stops mid-frame
// holds those bytes until the connection ends.
func limitPartialFrame(t *testing.T) {
	h, url := limitServer(t, websocket.Options{}, nil)
	rcH, _ := hostile(t, h, url)
	header := frameHeader(0x81, 3, true)
	header[1] = 0x80 | 127 // the 8-byte length form: a 14-byte header
	header = append(header[:2], append(binary.BigEndian.AppendUint64(nil, 3), header[2:]...)...)
	rcH.send(header[:13])
	rcC, _ := hostile(t, h, url)
	ping := rawFrame(0x89, true, bytes.Repeat([]byte("p"), 125))
	rcC.send(ping[:130])
	served(t, url)
	rcH.send(header[13:])
	rcH.send(rawFrame(0x81, true, []byte("abc"))[6:]) // the masked payload
	if f, err := rcH.read(); err != nil || string(f.payload) != "abc" {
		t.Errorf("the message whose header came in two parts: %s, %v", brief(f), err)
	}
	rcC.send(ping[130:])
	if f, err := rcC.read(); err != nil || f.op() != 0xa || len(f.payload) != 125 {
		t.Errorf("the ping that came in two parts: %s, %v; want its pong", brief(f), err)
	}
}

// ping-flood: pongs answer pings at once, queued like any output: a peer
// that pings and does not read has its reading paused once the engine's
// WriteHighWater (1 MiB) is queued, and TCP holds its pings back. The
// connection stays open and serves on once the peer reads.
func limitPingFlood(t *testing.T) {
	h, url := limitServer(t, websocket.Options{}, nil)
	rc, sc := hostile(t, h, url)
	pings := bytes.Repeat(rawFrame(0x89, true, make([]byte, 125)), 512)
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() { done <- flood(rc.nc, pings, stop) }()
	defer func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
	}()
	// The pause comes once the kernel's loopback buffers are full too,
	// after megabytes of pongs: under Wine, whose every socket call
	// takes several times Linux's, that takes longer than testTimeout.
	wait := testTimeout
	if backendtest.UnderWine() {
		wait *= 3
	}
	paused := false
	for end := time.Now().Add(wait); !paused && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		paused = sc.Engine().Stats().Total().Paused > 0
	}
	if !paused {
		t.Fatal("a peer that pings and does not read was never paused")
	}
	if q, most := sc.Buffered(), 1<<20+readAheadBound(); q > most {
		t.Errorf("%d bytes of pongs queued, want at most %d (WriteHighWater and a read's worth)", q, most)
	}
	served(t, url)
	// The peer reads again: the connection was paused, not closed.
	texts := make(chan string, 1)
	go func() {
		defer close(texts)
		for {
			f, err := rc.read()
			if err != nil {
				return
			}
			if f.op() == 1 {
				texts <- string(f.payload)
				return
			}
		}
	}()
	close(stop)
	if err := recv(t, done); err != nil {
		t.Fatalf("pings: %v", err)
	}
	rc.frame(0x81, true, []byte("after"))
	if got := recv(t, texts); got != "after" {
		t.Errorf("after the flood the echo was %q, want \"after\"", got)
	}
}

// output-queue: a peer that does not read has what is written to it
// queued up to MaxQueued (1 MiB); the write that finds it full fails with
// ErrQueueFull, and the connection is closed at once, its queue dropped.
func limitOutputQueue(t *testing.T) {
	if websocket.DefaultMaxQueued != 1<<20 {
		t.Errorf("DefaultMaxQueued = %d, want 1 MiB as documented", websocket.DefaultMaxQueued)
	}
	h, url := limitServer(t, websocket.Options{}, nil)
	rc, sc := hostile(t, h, url)
	msg := make([]byte, 64<<10)
	most := websocket.DefaultMaxQueued + len(msg) + 16 // MaxQueued and the last message
	write := func(i int) error {
		err := sc.WriteMessage(websocket.BinaryMessage, msg)
		if q := sc.Buffered(); q > most {
			t.Fatalf("write %d: %d bytes queued, want at most %d (MaxQueued and the last message)", i, q, most)
		}
		if i == 1000 {
			t.Fatalf("write %d: %v, with %d bytes queued", i, err, sc.Buffered())
		}
		return err
	}
	i := 0
	for ; sc.Buffered() < websocket.DefaultMaxQueued; i++ { // the socket's buffers fill first
		if err := write(i); err != nil {
			t.Fatalf("write %d (%d bytes queued): %v", i, sc.Buffered(), err)
		}
	}
	served(t, url)
	var err error
	for ; err == nil; i++ { // (the kernel may have taken more meanwhile)
		err = write(i)
	}
	if !errors.Is(err, websocket.ErrQueueFull) {
		t.Fatalf("a write to a full queue: %v, want ErrQueueFull", err)
	}
	if err := closeOf(t, sc, servedWithin); !errors.Is(err, websocket.ErrQueueFull) {
		t.Errorf("OnClose(%v), want ErrQueueFull", err)
	}
	rc.nc.SetReadDeadline(time.Now().Add(servedWithin))
	if _, err := io.Copy(io.Discard, rc.r); errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("the connection stayed open after its queue filled")
	}
}

// drop-when-full: with DropWhenFull, a write that finds the queue full
// fails with ErrQueueFull and only its message is dropped: the queue
// stays within MaxQueued, and the peer gets the rest once it reads.
func limitDropWhenFull(t *testing.T) {
	const maxQueued = 256 << 10
	h, url := limitServer(t, websocket.Options{MaxQueued: maxQueued, DropWhenFull: true}, nil)
	rc, sc := hostile(t, h, url)
	msg := make([]byte, 16<<10)
	sent, dropped := 0, 0
	for i := 0; dropped < 100; i++ {
		switch err := sc.WriteMessage(websocket.BinaryMessage, msg); {
		case errors.Is(err, websocket.ErrQueueFull):
			dropped++
		case err != nil || i == 10000:
			t.Fatalf("write %d: %v", i, err)
		default:
			sent++
		}
		if q, most := sc.Buffered(), maxQueued+len(msg)+16; q > most {
			t.Fatalf("%d bytes queued, want at most %d (MaxQueued and the last message)", q, most)
		}
	}
	served(t, url)
	for i := range sent {
		if f, err := rc.read(); err != nil || len(f.payload) != len(msg) {
			t.Fatalf("message %d of %d sent: %s, %v", i, sent, brief(f), err)
		}
	}
	rc.frame(0x81, true, []byte("still here"))
	if f, err := rc.read(); err != nil || string(f.payload) != "still here" {
		t.Errorf("after the drops: %s, %v; want the echo", brief(f), err)
	}
}

// held-behind-stream: messages begun while a stream is open are held
// behind it, counted with the queue against MaxQueued; the stream's own
// fragments see only the queue ahead of them. So a peer that does not
// read holds at most twice MaxQueued: then the stream's write fails with
// ErrQueueFull and, part of it sent, the connection is closed, even with
// DropWhenFull.
func limitHeldBehindStream(t *testing.T) {
	const maxQueued = 256 << 10
	h, url := limitServer(t, websocket.Options{MaxQueued: maxQueued, DropWhenFull: true}, nil)
	_, sc := hostile(t, h, url)
	w, err := sc.NextWriter(websocket.BinaryMessage)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	frag := make([]byte, 16<<10)
	if _, err := w.Write(frag); err != nil {
		t.Fatal(err)
	}
	most := 2*(maxQueued+len(frag)+16) + readAheadBound()
	for i := 0; ; i++ { // held behind the stream until the queue is full
		err := sc.WriteMessage(websocket.BinaryMessage, frag)
		if errors.Is(err, websocket.ErrQueueFull) {
			break
		}
		if err != nil || i == 10000 {
			t.Fatalf("held write %d: %v", i, err)
		}
	}
	served(t, url)
	for i := 0; ; i++ { // the stream's fragments, until the queue ahead of them is full
		_, err := w.Write(frag)
		if q := sc.Buffered(); q > most {
			t.Fatalf("%d bytes queued and held, want at most %d", q, most)
		}
		if errors.Is(err, websocket.ErrQueueFull) {
			break
		}
		if err != nil || i == 10000 {
			t.Fatalf("stream write %d: %v", i, err)
		}
	}
	if err := closeOf(t, sc, servedWithin); !errors.Is(err, websocket.ErrQueueFull) {
		t.Errorf("OnClose(%v), want ErrQueueFull", err)
	}
}
