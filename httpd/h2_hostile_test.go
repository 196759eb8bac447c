package httpd_test

// The known HTTP/2 attacks, each driven to its bound while a
// well-behaved client is served (SECURITY.md's table lists them).

import (
	"bytes"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// hostileH2 serves h2c with maxStreams and a stall timeout of stall:
// "/ok" answers at once, "/hold" holds its handler (deaf to its
// context) until release, "/big" writes n bytes. It returns the address,
// the count of handlers running and their most at once, and release.
type hostileH2 struct {
	addr     string
	running  atomic.Int64
	most     atomic.Int64
	release  chan struct{}
	writeErr chan error // /big's Write error
	once     sync.Once
}

func startHostileH2(t *testing.T, maxStreams int, stall time.Duration, mutate func(*httpd.Server)) *hostileH2 {
	hs := &hostileH2{release: make(chan struct{}), writeErr: make(chan error, 16)}
	srv := h2cServer()
	srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: maxStreams, WriteByteTimeout: stall}
	srv.ErrorLog = log.New(io.Discard, "", 0)
	if mutate != nil {
		mutate(srv)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hs.running.Add(1)
		defer hs.running.Add(-1)
		for {
			m := hs.most.Load()
			if n <= m || hs.most.CompareAndSwap(m, n) {
				break
			}
		}
		switch r.URL.Path {
		case "/hold":
			<-hs.release
		case "/big":
			_, err := w.Write(make([]byte, 64<<20))
			hs.writeErr <- err
		case "/body":
			_, err := io.Copy(io.Discard, r.Body)
			hs.writeErr <- err
		}
		io.WriteString(w, "ok")
	})
	hs.addr = start(t, srv, h)
	t.Cleanup(hs.free)
	return hs
}

// writeFails checks that the handler's Write failed, within a bound.
func (hs *hostileH2) writeFails(t *testing.T) {
	t.Helper()
	select {
	case err := <-hs.writeErr:
		if err == nil {
			t.Fatal("Write succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler still waits to write")
	}
}

func (hs *hostileH2) free() { hs.once.Do(func() { close(hs.release) }) }

// served checks that a well-behaved client gets "/ok" on a connection
// of its own.
func (hs *hostileH2) served(t *testing.T) {
	t.Helper()
	res, err := h2cClient(t).Get("http://" + hs.addr + "/ok")
	if err != nil {
		t.Fatalf("a well-behaved client: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(b) != "ok" || res.ProtoMajor != 2 {
		t.Fatalf("a well-behaved client got %q over %s", b, res.Proto)
	}
}

// TestH2RapidReset: a client that opens streams and resets them at once
// (CVE-2023-44487) holds no more handlers than MaxConcurrentStreams,
// however many it opens, and is disconnected with ENHANCE_YOUR_CALM.
func TestH2RapidReset(t *testing.T) { backendtest.Run(t, testH2RapidReset) }

func testH2RapidReset(t *testing.T) {
	hs := startHostileH2(t, 10, 0, nil)
	r := dialH2(t, hs.addr)
	go func() {
		for id := uint32(1); id < 20000; id += 2 {
			if r.request(id, "GET", "/hold", true) != nil || r.fr.WriteRSTStream(id, http2.ErrCodeCancel) != nil {
				return
			}
		}
	}()
	if code := r.goAway(); code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
	hs.served(t)
	if most := hs.most.Load(); most > 11 {
		t.Fatalf("%d handlers ran at once; the bound is 10 (and the good client's)", most)
	}
}

// TestH2TooManyStreams: a stream past MaxConcurrentStreams is refused.
func TestH2TooManyStreams(t *testing.T) { backendtest.Run(t, testH2TooManyStreams) }

func testH2TooManyStreams(t *testing.T) {
	hs := startHostileH2(t, 3, 0, nil)
	r := dialH2(t, hs.addr)
	for id := uint32(1); id <= 7; id += 2 {
		if err := r.request(id, "GET", "/hold", true); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.status(7); got != "RST_STREAM REFUSED_STREAM" {
		t.Fatalf("the fourth stream: %s, want REFUSED_STREAM", got)
	}
	hs.served(t)
	hs.free()
	if got := r.status(1); got != "200" {
		t.Fatalf("the first stream: %s", got)
	}
}

// TestH2ContinuationFlood: a header block that never ends
// (CVE-2023-45288) is cut off once its bytes pass what its list may
// hold: the connection ends, having held no more.
func TestH2ContinuationFlood(t *testing.T) { backendtest.Run(t, testH2ContinuationFlood) }

func testH2ContinuationFlood(t *testing.T) {
	hs := startHostileH2(t, 0, 0, func(s *httpd.Server) { s.MaxHeaderBytes = 8 << 10 })
	r := dialH2(t, hs.addr)
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: r.block("GET", "/ok"), EndStream: true}); err != nil {
		t.Fatal(err)
	}
	var frag bytes.Buffer
	e := hpack.NewEncoder(&frag)
	for frag.Len() < 15<<10 {
		e.WriteField(hpack.HeaderField{Name: "x-flood", Value: strings.Repeat("a", 100), Sensitive: true})
	}
	sent := 0
	go func() {
		for sent < 64<<20 {
			if r.fr.WriteContinuation(1, false, frag.Bytes()) != nil {
				return
			}
			sent += frag.Len()
		}
	}()
	if code := r.goAway(); code != http2.ErrCodeEnhanceYourCalm {
		t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
	}
	hs.served(t)
}

// TestH2HPACKBomb: a small block that expands, through the dynamic
// table, past MAX_HEADER_LIST_SIZE is answered 431 without the list
// being held, and the connection goes on.
func TestH2HPACKBomb(t *testing.T) { backendtest.Run(t, testH2HPACKBomb) }

func testH2HPACKBomb(t *testing.T) {
	hs := startHostileH2(t, 0, 0, nil)
	r := dialH2(t, hs.addr)
	big := strings.Repeat("b", 4000)
	if err := r.request(1, "GET", "/ok", true, "x-big", big); err != nil { // enters the dynamic table
		t.Fatal(err)
	}
	if got := r.status(1); got != "200" {
		t.Fatalf("stream 1: %s", got)
	}
	block := r.block("GET", "/ok")
	// 62 is the first dynamic entry, x-big, and 0x80|62 indexes it: 10,000
	// bytes that decode to 40 MB.
	block = append(block, bytes.Repeat([]byte{0x80 | 62}, 10000)...)
	if err := r.fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block, EndStream: true, EndHeaders: true}); err != nil {
		t.Fatal(err)
	}
	if got := r.status(3); got != "431" {
		t.Fatalf("stream 3: %s, want 431", got)
	}
	if err := r.request(5, "GET", "/ok", true); err != nil {
		t.Fatal(err)
	}
	if got := r.status(5); got != "200" {
		t.Fatalf("stream 5, after the bomb: %s", got)
	}
	hs.served(t)
}

// TestH2Floods: frames that ask for work and do none — SETTINGS, PING,
// empty DATA (CVE-2019-9515, -9512, -9518) — run the connection out of
// its budget: ENHANCE_YOUR_CALM.
func TestH2Floods(t *testing.T) { backendtest.Run(t, testH2Floods) }

func testH2Floods(t *testing.T) {
	hs := startHostileH2(t, 0, 0, nil)
	floods := map[string]func(r *h2raw) error{
		"settings": func(r *h2raw) error { return r.fr.WriteSettings() },
		"ping":     func(r *h2raw) error { return r.fr.WritePing(false, [8]byte{1}) },
		"empty data": func(r *h2raw) error {
			return r.fr.WriteData(1, false, nil)
		},
	}
	for name, flood := range floods {
		t.Run(name, func(t *testing.T) {
			r := dialH2(t, hs.addr)
			if err := r.request(1, "POST", "/body", false); err != nil {
				t.Fatal(err)
			}
			go func() {
				for range 100000 {
					if flood(r) != nil {
						return
					}
				}
			}()
			if code := r.goAway(); code != http2.ErrCodeEnhanceYourCalm {
				t.Fatalf("GOAWAY %v, want ENHANCE_YOUR_CALM", code)
			}
			hs.served(t)
		})
	}
}

// TestH2ZeroWindow: a client that never opens its window holds the
// handler writing to it for the stall timeout only: the stream is reset
// and the Write fails.
func TestH2ZeroWindow(t *testing.T) { backendtest.Run(t, testH2ZeroWindow) }

func testH2ZeroWindow(t *testing.T) {
	hs := startHostileH2(t, 0, 300*time.Millisecond, nil)
	r := dialH2(t, hs.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 0})
	if err := r.request(1, "GET", "/big", true); err != nil {
		t.Fatal(err)
	}
	hs.writeFails(t)
	if got := r.status(1); got != "200" {
		t.Fatalf("stream 1: %s", got)
	}
	if got := r.status(1); !strings.HasPrefix(got, "RST_STREAM") {
		t.Fatalf("stream 1 after its head: %s, want RST_STREAM", got)
	}
	hs.served(t)
}

// TestH2UnreadOutput: a client that opens every window and reads
// nothing holds neither the server's memory (the handler waits in
// Write once the output passes its mark) nor the handler for longer
// than the stall timeout: the connection is closed.
func TestH2UnreadOutput(t *testing.T) { backendtest.Run(t, testH2UnreadOutput) }

func testH2UnreadOutput(t *testing.T) {
	hs := startHostileH2(t, 0, 300*time.Millisecond, nil)
	r := dialH2(t, hs.addr, http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1<<31 - 1})
	r.fr.WriteWindowUpdate(0, 1<<31-1-65535)
	if err := r.request(1, "GET", "/big", true); err != nil {
		t.Fatal(err)
	}
	hs.writeFails(t)
	if !r.closedWithin(10 * time.Second) {
		t.Fatal("the connection is still open")
	}
	hs.served(t)
}
