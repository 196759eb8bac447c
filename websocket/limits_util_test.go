package websocket_test

import (
	"bytes"
	"compress/flate"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/websocket"
)

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

// limitServer serves a limitHandler with o on httpd, from one loop (the
// hostile and the well-behaved clients share it), with srv's settings
// (nil for the defaults), and returns the handler and the ws:// URL.
func limitServer(t *testing.T, o websocket.Options, srv *httpd.Server) (*limitHandler, string) {
	t.Helper()
	h := &limitHandler{conns: make(chan *websocket.Conn, 1024)}
	o.Handler = h
	u := &websocket.Upgrader{Options: o}
	if srv == nil {
		srv = &httpd.Server{}
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
