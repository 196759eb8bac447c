package httpd_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/poller"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestLimits drives a hostile client to each bound of httpd's part of
// the limits table (SECURITY.md), one sub-test per line, and checks that
// a well-behaved client of the same loop is served meanwhile.
func TestLimits(t *testing.T) {
	for _, l := range []struct {
		name string
		f    func(t *testing.T)
	}{
		{"head-size", limitHeadSize},
		{"header-count", limitHeaderCount},
		{"slow-head", limitSlowHead},
		{"handlers", limitHandlers},
		{"handlers-cap", limitHandlersCap},
		{"body-buffer", limitBodyBuffer},
		{"slow-upload", limitSlowUpload},
		{"unread-body", limitUnreadBody},
		{"chunked-framing", limitChunkedFraming},
		{"pipelined", limitPipelined},
		{"response-queue", limitResponseQueue},
		{"linger", limitLinger},
		{"idle", limitIdle},
		{"hijacked", limitHijacked},
	} {
		t.Run(l.name, func(t *testing.T) { backendtest.Run(t, l.f) })
	}
}

// limitServer serves limitHandler from one loop (the hostile and the
// well-behaved client share it) with srv's settings, and returns the
// address; release, once closed, ends the handlers that wait.
func limitServer(t *testing.T, srv *httpd.Server) (addr string, release chan struct{}) {
	t.Helper()
	if srv == nil {
		srv = &httpd.Server{}
	}
	srv.Engine.Loops = 1
	srv.ErrorLog = log.New(io.Discard, "", 0)
	release = make(chan struct{})
	addr = start(t, srv, limitHandler(release))
	t.Cleanup(func() { close(release) })
	return addr, release
}

// limitHandler serves
//
//	/ok      "ok"
//	/wait    nothing, once release is closed or the client went
//	/read    the body, read whole; its length, or the read's error (400)
//	/hold    the body read once release is closed
//	/ignore  "ignored", leaving the body unread
//	/big     64 MiB
//	/hijack  an echo of lines on the hijacked connection
func limitHandler(release chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			io.WriteString(w, "ok")
		case "/read":
			n, err := io.Copy(io.Discard, r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprint(w, n)
		case "/hold":
			select {
			case <-release:
			case <-r.Context().Done():
			}
			io.Copy(io.Discard, r.Body)
		case "/ignore":
			io.WriteString(w, "ignored")
		case "/big":
			chunk := make([]byte, 64<<10)
			for range 1024 {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		default:
			blockingHandler(release).ServeHTTP(w, r)
		}
	})
}

// served checks that a well-behaved client is answered within 2 s.
func served(t *testing.T, addr string) {
	t.Helper()
	getWithin(t, addr, 2*time.Second)
}

// dialN opens n connections to addr and sends req on each; they close
// when the test ends.
func dialN(t *testing.T, addr string, n int, req string) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if req != "" {
			io.WriteString(c, req)
		}
	}
	return conns
}

// readAheadBound is what a connection whose reading is paused may hold
// beyond what its owner has: one receive (64 KiB) on epoll; on io_uring
// also what the multishot receive brought before it was cancelled, up to
// its batch (the loop's buffer ring, 2 MiB, at most).
func readAheadBound() int64 {
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

// head-size: a head longer than MaxHeaderBytes (1 MiB) plus net/http's
// 4 KiB of slack is answered 431 and its connection closed; the loop held
// at most that much of it.
func limitHeadSize(t *testing.T) {
	addr, _ := limitServer(t, nil)
	c, br := rawConn(t, addr)
	go func() {
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n")
		line := "X-Pad: " + strings.Repeat("p", 1000) + "\r\n"
		for range 2048 { // 2 MiB
			if _, err := io.WriteString(c, line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge || !resp.Close {
		t.Fatalf("a 2 MiB head: %v, %v; want 431 and close", resp, err)
	}
	served(t, addr)
}

// header-count: a head of more field lines than MaxHeaderValueCount (500,
// Go 1.27's net/http's), each value one and Host included, is answered
// 431 and its connection closed; one at the bound is served.
func limitHeaderCount(t *testing.T) {
	addr, _ := limitServer(t, nil)
	for _, tc := range []struct {
		fields int
		status int
	}{{httpd.DefaultMaxHeaderValueCount, 200}, {httpd.DefaultMaxHeaderValueCount + 1, 431}} {
		c, br := rawConn(t, addr)
		head := "GET /ok HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Many: 1\r\n", tc.fields-1) + "\r\n"
		io.WriteString(c, head)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != tc.status || resp.Close != (tc.status == 431) {
			t.Fatalf("a head of %d field lines: %v, %v; want %d", tc.fields, resp, err, tc.status)
		}
	}
	served(t, addr)
}

// slow-head: heads that never end cost no goroutine (the loop holds their
// bytes), and others are served; ReadHeaderTimeout, when set, ends them.
func limitSlowHead(t *testing.T) {
	addr, _ := limitServer(t, &httpd.Server{})
	g0 := steadyGoroutines()
	const n = 200
	dialN(t, addr, n, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	served(t, addr)
	if g := steadyGoroutines(); g > g0+n/10 && !backendtest.OnNet() { // net: package net's goroutine per connection
		t.Errorf("%d heads that never end made %d goroutines", n, g-g0)
	}
	testSlowlorisHeadTimesOut(t)
}

// handlers: at default settings every request gets a goroutine at once,
// however many wait on their clients.
func limitHandlers(t *testing.T) {
	addr, _ := limitServer(t, nil)
	dialN(t, addr, 200, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	dialN(t, addr, 200, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx")
	served(t, addr)
}

// handlers-cap: with MaxHandlers, a request beyond them is answered 503
// at once, never queued.
func limitHandlersCap(t *testing.T) {
	testHandlerCapRefusesAtOnce(t)
}

// body-buffer: a body sent faster than its handler reads waits in the
// socket once BodyBufferSize bytes (128 KiB) are buffered: the server's
// heap holds no more of it.
func limitBodyBuffer(t *testing.T) {
	addr, _ := limitServer(t, nil)
	heap0 := heapInUse()
	c, _ := rawConn(t, addr)
	const size = 64 << 20
	fmt.Fprintf(c, "POST /hold HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	var sent atomic.Int64
	go func() {
		chunk := make([]byte, 64<<10)
		for sent.Load() < size {
			n, err := c.Write(chunk)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	served(t, addr)
	if grew := heapInUse() - heap0; grew > readAheadBound() {
		t.Errorf("the heap grew %d KiB under a 64 MiB upload its handler does not read", grew>>10)
	}
	if n := sent.Load(); n >= 32<<20 {
		t.Errorf("the client sent %d MiB to a handler that reads nothing", n>>20)
	}
}

// slow-upload: a body that trickles holds a buffer of what came, not
// BodyBufferSize, and no handler slot of anyone else's.
func limitSlowUpload(t *testing.T) {
	addr, _ := limitServer(t, nil)
	const n = 200
	heap0 := heapInUse()
	dialN(t, addr, n, "POST /read HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx")
	served(t, addr)
	time.Sleep(50 * time.Millisecond)
	if per := (heapInUse() - heap0) / n; per > 32<<10 {
		t.Errorf("%d B of heap per slow upload, want well under BodyBufferSize", per)
	}
}

// unread-body: a body the handler leaves unread is read and dropped up to
// 256 KiB, then the connection closes after the response.
func limitUnreadBody(t *testing.T) {
	addr, _ := limitServer(t, nil)
	c, br := rawConn(t, addr)
	const size = 64 << 20
	fmt.Fprintf(c, "POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n", size)
	go func() {
		chunk := make([]byte, 64<<10)
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	readResponse(t, br, "unread body", 200, "ignored", true)
	if _, err := br.ReadByte(); err == nil {
		t.Fatal("the connection stayed open after 64 MiB of unread body")
	}
	served(t, addr)
}

// chunked-framing: a chunk-size line over 4 KiB, or framing 16 KiB beyond
// the data it carries, fails the body's read and closes the connection,
// as net/http's reader does.
func limitChunkedFraming(t *testing.T) {
	addr, _ := limitServer(t, nil)
	for _, body := range []string{
		"1;" + strings.Repeat("e", 5000) + "\r\nx\r\n0\r\n\r\n",
		strings.Repeat("1;"+strings.Repeat("e", 100)+"\r\nx\r\n", 200) + "0\r\n\r\n",
	} {
		c, br := rawConn(t, addr)
		io.WriteString(c, "POST /read HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+body)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != http.StatusBadRequest || !resp.Close {
			t.Fatalf("hostile chunked framing: %v, %v; want the handler's 400 and close", resp, err)
		}
		c.Close()
	}
	served(t, addr)
}

// pipelined: requests pipelined behind a handler that waits stay in the
// socket once a receive's worth (ReadBufferSize, 64 KiB) is held.
func limitPipelined(t *testing.T) {
	addr, _ := limitServer(t, nil)
	heap0 := heapInUse()
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	var sent atomic.Int64
	go func() {
		req := strings.Repeat("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 2000)
		for sent.Load() < 64<<20 {
			n, err := io.WriteString(c, req)
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	time.Sleep(300 * time.Millisecond)
	served(t, addr)
	if grew := heapInUse() - heap0; grew > readAheadBound() {
		t.Errorf("the heap grew %d KiB under pipelined requests behind a waiting handler", grew>>10)
	}
	if n := sent.Load(); n >= 32<<20 {
		t.Errorf("the client pipelined %d MiB behind a waiting handler", n>>20)
	}
}

// response-queue: a client that never reads its response holds its
// handler in Write once 256 KiB are queued on the connection.
func limitResponseQueue(t *testing.T) {
	addr, _ := limitServer(t, nil)
	heap0 := heapInUse()
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET /big HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(300 * time.Millisecond)
	served(t, addr)
	if grew := heapInUse() - heap0; grew > 2<<20 {
		t.Errorf("the heap grew %d KiB for a 64 MiB response its client does not read", grew>>10)
	}
	testNeverReadingClient(t)
}

// linger: a connection closed with its client's bytes unread reads and
// drops them for at most 500 ms, then closes, however the client goes
// on sending.
func limitLinger(t *testing.T) {
	addr, _ := limitServer(t, nil)
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /ignore HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000\r\nConnection: close\r\n\r\nx")
	readResponse(t, br, "closing response", 200, "ignored", true)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := c.Write([]byte("x")); err != nil {
				return
			}
		}
	}()
	t0 := time.Now()
	c.SetReadDeadline(t0.Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || time.Since(t0) > 3*time.Second {
		t.Fatalf("lingering connection: read %v after %v, want closed after about 500ms", err, time.Since(t0))
	}
	served(t, addr)
}

// idle: keep-alive connections between requests hold no goroutine and
// about a kilobyte each; IdleTimeout (or ReadTimeout), when set, ends
// them.
func limitIdle(t *testing.T) {
	addr, _ := limitServer(t, nil)
	const n = 300
	heap0 := heapInUse()
	g0 := steadyGoroutines()
	conns := dialN(t, addr, n, "")
	for _, c := range conns { // one at a time: no burst of handler goroutines kept idle
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		io.ReadAll(resp.Body)
	}
	served(t, addr)
	if g := steadyGoroutines(); g > g0+n/10 && !backendtest.OnNet() { // net: package net's goroutine per connection
		t.Errorf("%d idle keep-alive connections kept %d goroutines", n, g-g0)
	}
	if per := (heapInUse() - heap0) / n; per > 4<<10 {
		t.Errorf("%d B of heap per idle keep-alive connection (and its client)", per)
	}
}

// hijacked: a hijacked connection is its handler's, outside the server's
// bounds (as in net/http): it does not count against MaxHandlers.
func limitHijacked(t *testing.T) {
	testHijackGivesSlotBack(t)
}
