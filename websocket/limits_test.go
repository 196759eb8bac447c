package websocket_test

import (
	"bufio"
	"bytes"
	"compress/flate"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/http1"
	"github.com/galeio/gale/internal/backendtest"
	"github.com/galeio/gale/internal/leaktest"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/tlstest"
	"github.com/galeio/gale/websocket"
)

// TestLimits drives a hostile peer to each bound of websocket's part of
// the limits table (docs/limits/websocket.md, for SECURITY.md), one
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

// servedWithin bounds a well-behaved client's round trip beside a
// hostile one.
const servedWithin = 2 * time.Second

// limitHandler is the limit servers' Handler. It echoes messages up to
// 1 KiB and answers a longer one with "got N" (its length); the message
// "flood" makes it write a binary message of flood bytes, and "close"
// makes it Close. It hands each connection over on open, and each
// connection's OnClose error goes to closeOf(c).
type limitHandler struct {
	websocket.BaseHandler
	conns chan *websocket.Conn
	flood atomic.Int64
}

func (h *limitHandler) OnOpen(c *websocket.Conn) {
	c.SetContext(make(chan error, 1))
	h.conns <- c
}

func (h *limitHandler) OnMessage(c *websocket.Conn, typ websocket.MessageType, data []byte) {
	switch {
	case string(data) == "flood":
		c.WriteMessage(websocket.BinaryMessage, make([]byte, h.flood.Load()))
	case string(data) == "close":
		c.Close(websocket.StatusNormalClosure, "bye")
	case len(data) > 1024:
		c.WriteMessage(websocket.TextMessage, []byte("got "+strconv.Itoa(len(data))))
	default:
		c.WriteMessage(typ, data)
	}
}

func (h *limitHandler) OnClose(c *websocket.Conn, err error) { c.Context().(chan error) <- err }

// closeOf returns the error c's OnClose got, failing the test if it has
// not run within within.
func closeOf(t *testing.T, c *websocket.Conn, within time.Duration) error {
	t.Helper()
	select {
	case err := <-c.Context().(chan error):
		return err
	case <-time.After(within):
		t.Fatalf("the connection did not close within %v", within)
		return nil
	}
}

// limitServer serves a limitHandler with o on http1, from one loop (the
// hostile and the well-behaved clients share it), with srv's settings
// (nil for the defaults), and returns the handler and the ws:// URL.
func limitServer(t *testing.T, o websocket.Options, srv *http1.Server) (*limitHandler, string) {
	t.Helper()
	h := &limitHandler{conns: make(chan *websocket.Conn, 1024)}
	o.Handler = h
	u := &websocket.Upgrader{Options: o}
	if srv == nil {
		srv = &http1.Server{}
	}
	srv.Engine.Loops = 1
	srv.ErrorLog = log.New(io.Discard, "", 0)
	srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { u.Upgrade(w, r, nil) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return h, "ws://" + ln.Addr().String() + "/ws"
}

// hostile connects to url as a client that will misbehave, and returns
// the server's side of the connection too. (Its receive buffer is left
// as it is: shrunk once connected, it would drop what the window it had
// advertised let the server send, and stall the server's sends in
// retransmission backoff.)
func hostile(t *testing.T, h *limitHandler, url string, extra ...string) (*rawConn, *websocket.Conn) {
	t.Helper()
	rc, resp := rawDialWith(t, url, rawOptions{}, extra...)
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("hostile client's upgrade: status %d", resp.StatusCode)
	}
	for { // (skipping the well-behaved clients' connections)
		if c := recv(t, h.conns); c.RemoteAddr().String() == rc.nc.LocalAddr().String() {
			return rc, c
		}
	}
}

// served checks that a well-behaved client of url has a message echoed
// within servedWithin, handshake included.
func served(t *testing.T, url string) {
	t.Helper()
	servedWith(t, url, nil)
}

// servedWith is served with the TLS configuration of a wss:// url.
func servedWith(t *testing.T, url string, cfg *tls.Config) {
	t.Helper()
	start := time.Now()
	rc, resp := rawDialWith(t, url, rawOptions{tls: cfg})
	defer rc.nc.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("a well-behaved client's upgrade: status %d", resp.StatusCode)
	}
	rc.nc.SetDeadline(start.Add(servedWithin))
	rc.frame(0x81, true, []byte("well-behaved"))
	for {
		f, err := rc.read()
		if err != nil {
			t.Fatalf("a well-behaved client was not served within %v: %v", servedWithin, err)
		}
		if f.op() == 1 {
			if string(f.payload) != "well-behaved" {
				t.Fatalf("a well-behaved client got %q back", f.payload)
			}
			break
		}
	}
	rc.frame(0x88, true, closePayload(1000, ""))
}

// brief describes f without all of its payload.
func brief(f rawFrameIn) string {
	return fmt.Sprintf("frame %#x of %d bytes %.40q", f.b0, len(f.payload), f.payload)
}

// send writes b, which holds whole or partial frames, as it is.
func (rc *rawConn) send(b []byte) {
	rc.t.Helper()
	if _, err := rc.nc.Write(b); err != nil {
		rc.t.Fatalf("write: %v", err)
	}
}

// frameHeader returns a frame header declaring n bytes of payload,
// masked with rawFrame's key when mask is set; the payload is the
// caller's to send.
func frameHeader(b0 byte, n int, mask bool) []byte {
	h := []byte{b0, 0}
	switch {
	case n <= 125:
		h[1] = byte(n)
	case n <= 0xffff:
		h[1] = 126
		h = binary.BigEndian.AppendUint16(h, uint16(n))
	default:
		h[1] = 127
		h = binary.BigEndian.AppendUint64(h, uint64(n))
	}
	if mask {
		h[1] |= 0x80
		h = append(h, 0x12, 0x34, 0x56, 0x78)
	}
	return h
}

// deflater compresses messages as a permessage-deflate peer does (RFC
// 7692 §7.2.1: each a sync flush, its 4-byte tail removed), keeping its
// context from one message to the next (context takeover).
type deflater struct {
	out bytes.Buffer
	fw  *flate.Writer
}

func newDeflater(level int) *deflater {
	d := new(deflater)
	d.fw, _ = flate.NewWriter(&d.out, level)
	return d
}

func (d *deflater) message(p []byte) []byte {
	d.out.Reset()
	d.fw.Write(p)
	d.fw.Flush()
	return bytes.Clone(bytes.TrimSuffix(d.out.Bytes(), []byte{0, 0, 0xff, 0xff}))
}

// readAheadBound is what a connection whose reading is paused may have
// taken in beyond the bound that paused it: one receive (64 KiB) on
// epoll; on io_uring what the multishot receive brought before it was
// cancelled, up to its batch (the loop's buffer ring, 2 MiB, at most).
func readAheadBound() int {
	if os.Getenv(poller.EnvBackend) == poller.IOURing.String() {
		return 4 << 20
	}
	return 1 << 20
}

// steadyGoroutines returns the goroutine count once it stays put for
// 100 ms (within 5 s).
func steadyGoroutines() int {
	g, still := runtime.NumGoroutine(), 0
	for end := time.Now().Add(5 * time.Second); still < 10 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if ng := runtime.NumGoroutine(); ng != g {
			g, still = ng, 0
		} else {
			still++
		}
	}
	return g
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

// flood writes batch to nc again and again until stop is closed, then
// ends the batch it is in (so that the stream stays framed) and returns.
// Each write is bounded, so that stop is seen while the peer holds the
// stream back.
func flood(nc net.Conn, batch []byte, stop <-chan struct{}) error {
	p := batch
	for {
		nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		n, err := nc.Write(p)
		if p = p[n:]; len(p) == 0 {
			select {
			case <-stop:
				nc.SetWriteDeadline(time.Time{})
				return nil
			default:
			}
			p = batch
		}
		if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			return err
		}
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
	paused := false
	for end := time.Now().Add(testTimeout); !paused && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
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
	for i := 0; sc.Buffered() < websocket.DefaultMaxQueued; i++ { // the socket's buffers fill first
		if err := sc.WriteMessage(websocket.BinaryMessage, msg); err != nil || i == 1000 {
			t.Fatalf("write %d (%d bytes queued): %v", i, sc.Buffered(), err)
		}
	}
	if q, most := sc.Buffered(), websocket.DefaultMaxQueued+len(msg)+16; q > most {
		t.Errorf("%d bytes queued, want at most %d (MaxQueued and the last message)", q, most)
	}
	served(t, url)
	if err := sc.WriteMessage(websocket.BinaryMessage, msg); !errors.Is(err, websocket.ErrQueueFull) {
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

// close-timeout: after Close, a connection waits for the peer's close
// frame for CloseTimeout (5 s by default), whatever else the peer sends
// meanwhile, on a timer of its loop's; then it is cut, with
// ErrCloseTimeout.
func limitCloseTimeout(t *testing.T) {
	if websocket.DefaultCloseTimeoutForTest != 5*time.Second {
		t.Errorf("the default CloseTimeout is %v, want 5s as documented", websocket.DefaultCloseTimeoutForTest)
	}
	const timeout = 300 * time.Millisecond
	h, url := limitServer(t, websocket.Options{CloseTimeout: timeout}, nil)
	rc, sc := hostile(t, h, url)
	start := time.Now()
	rc.frame(0x81, true, []byte("close"))
	if f, err := rc.read(); err != nil || f.op() != 8 {
		t.Fatalf("read %s, %v; want the server's close frame", brief(f), err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // pings, never the close frame
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if _, err := rc.nc.Write(rawFrame(0x89, true, nil)); err != nil {
				return
			}
		}
	}()
	timer := false // the wait's, armed on the loop once Close's task ran
	for end := time.Now().Add(servedWithin); !timer && time.Now().Before(end); time.Sleep(time.Millisecond) {
		timer = sc.Engine().Stats().Total().Timers > 0
	}
	if !timer {
		t.Error("no timer on the loop during the close handshake, want its one")
	}
	served(t, url)
	if err := closeOf(t, sc, 10*timeout); !errors.Is(err, websocket.ErrCloseTimeout) {
		t.Errorf("OnClose(%v), want ErrCloseTimeout", err)
	}
	if d := time.Since(start); d < timeout {
		t.Errorf("closed after %v, before CloseTimeout (%v)", d, timeout)
	}
}

// close-unread: a connection the peer ends (a close frame, a protocol
// error, the end of its stream) closes once its queued output is
// written: a peer that does not read holds that output for CloseTimeout
// at most, then the connection is cut. (WriteHighWater is raised here so
// that the peer is read while the queue holds megabytes.)
func limitCloseUnread(t *testing.T) {
	const timeout = 300 * time.Millisecond
	srv := &http1.Server{Engine: engine.Options{WriteHighWater: 32 << 20, MaxWriteBuffer: 64 << 20}}
	h, url := limitServer(t, websocket.Options{CloseTimeout: timeout}, srv)
	h.flood.Store(8 << 20) // more than the kernel's socket buffers take
	for _, tc := range []struct {
		name string
		end  func(rc *rawConn)
	}{
		{"close frame", func(rc *rawConn) { rc.frame(0x88, true, closePayload(1000, "")) }},
		{"protocol error", func(rc *rawConn) { rc.frame(0x83, true, nil) }},
		{"end of stream", func(rc *rawConn) { rc.nc.(*net.TCPConn).CloseWrite() }},
	} {
		rc, sc := hostile(t, h, url)
		rc.frame(0x81, true, []byte("flood"))
		for by := time.Now().Add(testTimeout); sc.Buffered() < 1<<20; time.Sleep(time.Millisecond) {
			if time.Now().After(by) {
				t.Fatalf("%s: %d bytes queued for a peer that does not read", tc.name, sc.Buffered())
			}
		}
		tc.end(rc)
		served(t, url)
		closeOf(t, sc, 10*timeout) // fails the test if the connection stays
		if q := sc.Buffered(); q != 0 {
			t.Errorf("%s: %d bytes still queued after the close", tc.name, q)
		}
	}
}

// takeover-window: a connection keeps a window of what it received only
// with CompressionContextTakeover, and the peer's: 2^client_max_window_bits
// bytes (32 KiB at most), however much it is sent.
func limitTakeoverWindow(t *testing.T) {
	h, url := limitServer(t, websocket.Options{Compression: websocket.CompressionContextTakeover}, nil)
	for _, tc := range []struct {
		offer string
		level int
		want  int
	}{
		{"permessage-deflate", flate.BestSpeed, 32 << 10},
		{"permessage-deflate; client_max_window_bits=10", flate.HuffmanOnly, 1 << 10}, // (HuffmanOnly never refers back)
	} {
		rc, sc := hostile(t, h, url, "Sec-WebSocket-Extensions: "+tc.offer)
		d := newDeflater(tc.level)
		for i := range 8 {
			msg := bytes.Repeat([]byte(fmt.Sprintf("message %d; ", i)), 1500)
			rc.frame(0xc2, true, d.message(msg))
			if f, err := rc.read(); err != nil || string(f.payload) != fmt.Sprint("got ", len(msg)) {
				t.Fatalf("%s: message %d: %s, %v", tc.offer, i, brief(f), err)
			}
		}
		if n := websocket.WindowCapForTest(sc); n != tc.want {
			t.Errorf("%s: window of %d bytes after 8 x 16 KiB, want %d", tc.offer, n, tc.want)
		}
	}
	served(t, url)
	h, url = limitServer(t, websocket.Options{Compression: websocket.CompressionEnabled}, nil)
	rc, sc := hostile(t, h, url, "Sec-WebSocket-Extensions: permessage-deflate")
	rc.frame(0xc2, true, newDeflater(flate.BestSpeed).message(make([]byte, 4096)))
	rc.read()
	if n := websocket.WindowCapForTest(sc); n != -1 {
		t.Errorf("CompressionEnabled: window of %d bytes, want none", n)
	}
}

// idle: nothing closes a connection that sends nothing, or stops
// mid-frame (no ping, no timeout, as with gorilla's and net/http's
// hijacked connections); the engine's ReadIdleTimeout, when set, does.
func limitIdle(t *testing.T) {
	h, url := limitServer(t, websocket.Options{}, nil)
	_, sc := hostile(t, h, url)
	served(t, url)
	select {
	case err := <-sc.Context().(chan error):
		t.Fatalf("an idle connection closed (%v) with no timeout set", err)
	case <-time.After(300 * time.Millisecond):
	}
	const timeout = 300 * time.Millisecond
	h, url = limitServer(t, websocket.Options{}, &http1.Server{Engine: engine.Options{ReadIdleTimeout: timeout}})
	rc, sc := hostile(t, h, url)
	rc.send([]byte{0x81}) // a frame begun
	served(t, url)
	if err := closeOf(t, sc, 10*timeout); !errors.Is(err, engine.ErrIdleTimeout) {
		t.Errorf("OnClose(%v), want engine.ErrIdleTimeout", err)
	}
}

// conn-cost: an upgraded connection costs no goroutine, its descriptor
// (two on the net backend, whose package net keeps a duplicate) and no
// timer, on http1 and (plain) under net/http alike; a TLS connection that
// net/http terminated is relayed by two goroutines through a socket pair.
func limitConnCost(t *testing.T) {
	const n = 50
	onNet := 0
	if backendtest.OnNet() {
		onNet = 1 // package net's goroutine reading each connection
	}
	refs := backendtest.SocketRefs()
	for _, tc := range []struct {
		name            string
		goroutines, fds int // per connection, the server's
	}{
		{"http1 ws", onNet, refs},
		{"http1 wss", onNet, refs},
		{"net/http ws", onNet, refs},
		{"net/http wss", 2 + onNet, 1 + refs + 1}, // the TLS socket, the pair's end on the loop, its other end
	} {
		url, tlsConf, stats := connCostServer(t, tc.name)
		servedWith(t, url, tlsConf) // the server's goroutines and buffers are made
		g0 := steadyGoroutines()
		fds0, fdsOK := openFDs()
		timers0 := stats().Timers
		for range n {
			rawDialWith(t, url, rawOptions{tls: tlsConf})
		}
		servedWith(t, url, tlsConf)
		if g := steadyGoroutines() - g0; g > n*tc.goroutines+n/10 {
			t.Errorf("%s: %d connections made %d goroutines, want %d each", tc.name, n, g, tc.goroutines)
		}
		if fds, ok := openFDs(); ok && fdsOK && fds-fds0 > n*(1+tc.fds)+5 {
			t.Errorf("%s: %d connections opened %d descriptors, want %d each (and the client's)", tc.name, n, fds-fds0, tc.fds)
		}
		if timers := stats().Timers; timers > timers0 {
			t.Errorf("%s: %d connections armed %d timers, want none", tc.name, n, timers-timers0)
		}
	}
}

// connCostServer serves a limitHandler for conn-cost's case name (http1
// or net/http, ws or wss) and returns its URL, the TLS configuration of
// its clients and its connections' engine's counters.
func connCostServer(t *testing.T, name string) (url string, cfg *tls.Config, stats func() engine.LoopStats) {
	h := &limitHandler{conns: make(chan *websocket.Conn, 1024)}
	u := &websocket.Upgrader{Options: websocket.Options{Handler: h}}
	var e atomic.Pointer[engine.Engine]
	h2 := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := u.Upgrade(w, r, nil); err == nil {
			e.Store(c.Engine())
		}
	})
	stats = func() engine.LoopStats { // once a connection was served
		if e := e.Load(); e != nil {
			return e.Stats().Total()
		}
		t.Fatal("no connection served yet")
		return engine.LoopStats{}
	}
	switch name {
	case "http1 ws", "http1 wss":
		srv := &http1.Server{Handler: h2, Engine: engine.Options{Loops: 1}, ErrorLog: log.New(io.Discard, "", 0)}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		url = "ws://" + ln.Addr().String() + "/ws"
		if name == "http1 wss" {
			srv.TLSConfig = tlstest.Get().ServerConfig()
			cfg = tlstest.Get().ClientConfig()
			url = "wss://" + ln.Addr().String() + "/ws"
			go srv.ServeTLS(ln, "", "")
		} else {
			go srv.Serve(ln)
		}
		t.Cleanup(func() { srv.Close() })
		return url, cfg, stats
	}
	eng, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Stop() })
	u.Engine = eng
	var hs *httptest.Server
	if name == "net/http wss" {
		hs = httptest.NewTLSServer(h2)
		pool := x509.NewCertPool()
		pool.AddCert(hs.Certificate())
		cfg = &tls.Config{RootCAs: pool, ServerName: "example.com"} // httptest's certificate names it
		url = "wss://" + hs.Listener.Addr().String() + "/ws"
	} else {
		hs = httptest.NewServer(h2)
		url = "ws://" + hs.Listener.Addr().String() + "/ws"
	}
	t.Cleanup(hs.Close)
	return url, cfg, stats
}

// openFDs counts the process's open descriptors, where it can.
func openFDs() (int, bool) {
	fds, ok := leaktest.OpenFDs()
	return len(fds), ok
}

// upgrade-head: the upgrade request is read by http1 (or net/http) before
// Upgrade sees it: a head past MaxHeaderBytes (1 MiB, and 4 KiB of
// slack) is answered 431 and closed, and one that trickles is held, on
// the loop, until ReadHeaderTimeout (none by default, as in net/http).
func limitUpgradeHead(t *testing.T) {
	const timeout = 300 * time.Millisecond
	_, url := limitServer(t, websocket.Options{}, &http1.Server{ReadHeaderTimeout: timeout})
	host := strings.TrimSuffix(strings.TrimPrefix(url, "ws://"), "/ws")
	head := "GET /ws HTTP/1.1\r\nHost: " + host + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
	big, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(testTimeout))
	go func() {
		io.WriteString(big, head)
		line := "X-Pad: " + strings.Repeat("p", 1000) + "\r\n"
		for range 2048 { // 2 MiB
			if _, err := io.WriteString(big, line); err != nil {
				return
			}
		}
	}()
	slow, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close()
	slow.SetDeadline(time.Now().Add(testTimeout))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			if _, err := slow.Write([]byte{head[i%len(head)]}); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	served(t, url)
	resp, err := http.ReadResponse(bufio.NewReader(big), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("a 2 MiB upgrade request: %v, %v; want 431", resp, err)
	}
	start := time.Now()
	if _, err := io.Copy(io.Discard, slow); err != nil || time.Since(start) > 10*timeout {
		t.Errorf("an upgrade request that trickles: %v after %v, want closed after ReadHeaderTimeout", err, time.Since(start))
	}
}

// dialEngine returns an engine of one loop for a test's Dialers.
func dialEngine(t *testing.T) *engine.Engine {
	t.Helper()
	e, err := websocket.NewEngine(engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Stop() })
	return e
}

// dialServed checks that a Dialer on e dials a well-behaved server and
// has a message echoed within servedWithin.
func dialServed(t *testing.T, e *engine.Engine) {
	t.Helper()
	_, url := limitServer(t, websocket.Options{}, nil)
	cli := &signal{got: make(chan int, 1)}
	d := &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e}}
	ctx, cancel := context.WithTimeout(context.Background(), servedWithin)
	defer cancel()
	c, _, err := d.Dial(ctx, url)
	if err != nil {
		t.Fatalf("a Dialer beside the hostile server: %v", err)
	}
	defer c.CloseNow()
	c.WriteMessage(websocket.TextMessage, []byte("well-behaved"))
	select {
	case <-cli.got:
	case <-ctx.Done():
		t.Fatalf("a Dialer beside the hostile server was not served within %v", servedWithin)
	}
}

// dial-head: a Dialer reads the server's response head up to 16 KiB; a
// longer one, or one that never ends, fails Dial with ErrBadHandshake.
func limitDialHead(t *testing.T) {
	if websocket.MaxResponseHeadForTest != 16<<10 {
		t.Errorf("the response head's cap is %d, want 16 KiB as documented", websocket.MaxResponseHeadForTest)
	}
	e := dialEngine(t)
	pad := "X-Pad: " + strings.Repeat("p", 40<<10)
	for _, tc := range []struct {
		name    string
		respond func(string) string
	}{
		{"40 KiB 101", ok101(pad)},
		{"endless head", func(string) string {
			return "HTTP/1.1 101 Switching Protocols\r\n" + strings.Repeat("X-Pad: p\r\n", 20000)
		}},
	} {
		url, _ := rawServer(t, tc.respond)
		d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: e}}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		c, _, err := d.Dial(ctx, url)
		cancel()
		if !errors.Is(err, websocket.ErrBadHandshake) {
			t.Errorf("%s: Dial = %v, want ErrBadHandshake", tc.name, err)
		}
		if c != nil {
			c.CloseNow()
		}
	}
	dialServed(t, e)
}

// dial-slow: a server that trickles its response holds a Dialer's
// connection until HandshakeTimeout (10 s by default) or the Dial's
// context ends, whichever is first; its loop serves others meanwhile.
func limitDialSlow(t *testing.T) {
	if websocket.DefaultHandshakeTimeoutForTest != 10*time.Second {
		t.Errorf("the default HandshakeTimeout is %v, want 10s as documented", websocket.DefaultHandshakeTimeoutForTest)
	}
	const timeout = 500 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		nc, err := ln.Accept()
		if err != nil {
			return
		}
		defer nc.Close()
		resp := "HTTP/1.1 101 Switching Protocols\r\n" + strings.Repeat("X-Slow: s\r\n", 1000)
		for i := 0; i < len(resp); i++ {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := nc.Write([]byte{resp[i]}); err != nil {
				return
			}
		}
	}()
	e := dialEngine(t)
	d := &websocket.Dialer{Options: websocket.Options{Handler: newRecorder(false), Engine: e}, HandshakeTimeout: timeout}
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		c, _, err := d.Dial(context.Background(), "ws://"+ln.Addr().String()+"/")
		if c != nil {
			c.CloseNow()
		}
		done <- err
	}()
	dialServed(t, e)
	if err := recv(t, done); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial = %v, want the handshake timeout", err)
	}
	if d := time.Since(start); d > 10*timeout {
		t.Errorf("Dial took %v, with HandshakeTimeout %v", d, timeout)
	}
}

// dial-read-limit: a Dialer's connection has the server's bounds, the
// read limit among them: a hostile server's frame declaring more than
// ReadLimit closes the connection with 1009 at its header.
func limitDialReadLimit(t *testing.T) {
	e := dialEngine(t)
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e}}, url)
	rc := recv(t, conns)
	defer rc.nc.Close() // (and keeps it from the garbage collector, whose finalizer would close it)
	cli.expect(t, "open")
	rc.send(frameHeader(0x82, websocket.DefaultReadLimit+1, false))
	rc.expectClose(1009)
	if ev := cli.expect(t, "close"); !errors.Is(ev.err, websocket.ErrReadLimit) {
		t.Errorf("OnClose(%v), want ErrReadLimit", ev.err)
	}
	dialServed(t, e)
}

// dial-close-wait: once the close frames are exchanged, a client waits
// for the server to close the TCP connection (RFC 6455 §7.1.1), for
// CloseTimeout at most.
func limitDialCloseWait(t *testing.T) {
	const timeout = 300 * time.Millisecond
	e := dialEngine(t)
	url, conns := rawServer(t, ok101())
	cli := newRecorder(false)
	c := dial(t, &websocket.Dialer{Options: websocket.Options{Handler: cli, Engine: e, CloseTimeout: timeout}}, url)
	rc := recv(t, conns)
	defer rc.nc.Close() // (and keeps it from the garbage collector, whose finalizer would close it)
	cli.expect(t, "open")
	start := time.Now()
	c.Close(websocket.StatusNormalClosure, "")
	if f, err := rc.read(); err != nil || f.op() != 8 {
		t.Fatalf("read %s, %v; want the client's close frame", brief(f), err)
	}
	rc.frame(0x88, false, closePayload(1000, "")) // answered, and the TCP connection kept open
	dialServed(t, e)
	ev := cli.expect(t, "close")
	if websocket.CloseStatus(ev.err) != websocket.StatusNormalClosure {
		t.Errorf("OnClose(%v), want the server's 1000", ev.err)
	}
	if d := time.Since(start); d < timeout || d > 10*timeout {
		t.Errorf("closed after %v, want CloseTimeout (%v)", d, timeout)
	}
}
