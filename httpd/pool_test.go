package httpd_test

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
)

// blockingHandler serves /wait by waiting until release is closed (or
// the client goes), /hijack by taking the connection and echoing lines
// on it until the client closes it, and anything else with "ok".
func blockingHandler(release chan struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wait":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "/hijack":
			nc, brw, err := w.(http.Hijacker).Hijack()
			if err != nil {
				return
			}
			defer nc.Close()
			for {
				line, err := brw.ReadString('\n')
				if err != nil {
					return
				}
				brw.WriteString(line)
				brw.Flush()
			}
		default:
			io.WriteString(w, "ok")
		}
	})
}

// getWithin sends a GET on a new connection and fails the test unless
// "ok" comes back within d.
func getWithin(t *testing.T, addr string, d time.Duration) time.Duration {
	t.Helper()
	t0 := time.Now()
	c, br := rawConn(t, addr)
	defer c.Close()
	c.SetDeadline(t0.Add(d))
	io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET beside the busy handlers: %v (after %v)", err, time.Since(t0))
	}
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "ok" || err != nil {
		t.Fatalf("GET beside the busy handlers = %d %q, %v", resp.StatusCode, body, err)
	}
	return time.Since(t0)
}

// With MaxHandlers set, a request that finds them all running is
// answered 503 at once, not queued behind them; once one returns, the
// next request is served.
func TestHandlerCapRefusesAtOnce(t *testing.T) { backendtest.Run(t, testHandlerCapRefusesAtOnce) }

func testHandlerCapRefusesAtOnce(t *testing.T) {
	release := make(chan struct{})
	srv := &httpd.Server{MaxHandlers: 2, ErrorLog: log.New(io.Discard, "", 0)}
	addr := start(t, srv, blockingHandler(release))
	for i := 0; i < 2; i++ {
		c, _ := rawConn(t, addr)
		io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	waitFor(t, "two handlers running", func() bool { return httpd.RunningHandlers(srv) == 2 })
	c, br := rawConn(t, addr)
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
		t.Fatalf("third request: %v, %v; want 503 at once, closing", resp, err)
	}
	close(release)
	waitFor(t, "the handlers to return", func() bool { return httpd.RunningHandlers(srv) == 0 })
	getWithin(t, addr, 5*time.Second)
}

// A handler that hijacks its connection stops counting against
// MaxHandlers: hijacked connections (WebSockets read by a gorilla loop,
// CONNECT tunnels) never crowd out requests.
func TestHijackGivesSlotBack(t *testing.T) { backendtest.Run(t, testHijackGivesSlotBack) }

func testHijackGivesSlotBack(t *testing.T) {
	srv := &httpd.Server{MaxHandlers: 2, ErrorLog: log.New(io.Discard, "", 0)}
	addr := start(t, srv, blockingHandler(nil))
	for i := 0; i < 4; i++ {
		c, br := rawConn(t, addr)
		fmt.Fprintf(c, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\nhello %d\n", i)
		if line, err := br.ReadString('\n'); err != nil || line != fmt.Sprintf("hello %d\n", i) {
			t.Fatalf("hijacked connection %d echoed %q, %v", i, line, err)
		}
	}
	if n := httpd.RunningHandlers(srv); n != 0 {
		t.Errorf("handlers running = %d with only hijacked handlers running, want 0", n)
	}
	getWithin(t, addr, 5*time.Second)
}

// Two heads that a loop handles in one batch go to two goroutines: a
// request never waits for an unrelated handler while it could run.
func TestNoWaitBehindOtherHandler(t *testing.T) { backendtest.Run(t, testNoWaitBehindOtherHandler) }

func testNoWaitBehindOtherHandler(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one P: the loop sees both heads at once
	release := make(chan struct{})
	defer close(release)
	srv := &httpd.Server{Engine: engine.Options{Loops: 1}}
	addr := start(t, srv, blockingHandler(release))
	for trial := 0; trial < 10; trial++ {
		a, _ := rawConn(t, addr)
		b, br := rawConn(t, addr)
		getWithin(t, addr, 5*time.Second) // leaves one goroutine idle
		io.WriteString(a, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
		io.WriteString(b, "GET /ok HTTP/1.1\r\nHost: x\r\n\r\n")
		b.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("trial %d: GET sent with a long poll: %v, %v", trial, resp, err)
		}
		a.Close()
		b.Close()
	}
}

// Slow uploads and long polls, many of them, leave the server answering
// a new request at once, at default settings: no handler pool to fill,
// no queue. Each slow upload holds a small buffer, not BodyBufferSize.
func TestDefaultsServeBesideHostiles(t *testing.T) {
	backendtest.Run(t, testDefaultsServeBesideHostiles)
}

func testDefaultsServeBesideHostiles(t *testing.T) {
	const n = 200 // of each kind
	release := make(chan struct{})
	srv := &httpd.Server{}
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			io.Copy(io.Discard, r.Body)
		}
		blockingHandler(release).ServeHTTP(w, r)
	}))
	defer close(release)
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := 0; i < n; i++ {
		up, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		poll, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, up, poll)
		io.WriteString(up, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx")
		io.WriteString(poll, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	waitFor(t, "every hostile request in its handler", func() bool { return httpd.RunningHandlers(srv) == 2*n })
	var worst time.Duration
	for i := 0; i < 5; i++ {
		worst = max(worst, getWithin(t, addr, 5*time.Second))
	}
	t.Logf("worst of 5 GETs beside %d slow uploads and %d long polls: %v", n, n, worst)
	if worst > time.Second {
		t.Errorf("a GET took %v beside the hostile clients, want well under a second", worst)
	}
}

// waitFor polls cond until it holds, for at most 10 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A slow upload (a head, one byte of body, then nothing) costs the
// server's heap about what it costs net/http's, not BodyBufferSize: the
// body's buffer grows with what came and is given back once read.
func TestSlowUploadHeap(t *testing.T) { backendtest.Run(t, testSlowUploadHeap) }

func testSlowUploadHeap(t *testing.T) {
	const n = 300
	var reading atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != "POST" {
			io.WriteString(w, "ok")
			return
		}
		reading.Add(1)
		io.Copy(io.Discard, r.Body)
		reading.Add(-1)
	})
	gale := heapPerUpload(t, n, &reading, func() (string, func()) {
		srv := &httpd.Server{}
		addr, done := listen(t, srv, h, (*httpd.Server).Serve)
		return addr, func() { srv.Close(); <-done }
	})
	std := heapPerUpload(t, n, &reading, func() (string, func()) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h}
		go srv.Serve(ln)
		return ln.Addr().String(), func() { srv.Close() }
	})
	t.Logf("heap per slow upload: gale %d B, net/http %d B", gale, std)
	if gale > 2*std {
		t.Errorf("heap per slow upload %d B, more than twice net/http's %d B", gale, std)
	}
}

// heapPerUpload returns the heap that one more slow upload costs the
// server serve starts (and the test's client side, alike for every
// server): the growth from n uploads open to 2n, so that what the first
// requests make once, and what earlier tests leave to collect, cancel out.
func heapPerUpload(t *testing.T, n int, reading *atomic.Int64, serve func() (string, func())) int64 {
	addr, stop := serve()
	defer stop()
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var heap [2]int64
	for round := range heap {
		for i := 0; i < n; i++ {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, c)
			io.WriteString(c, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1048576\r\n\r\nx")
		}
		waitFor(t, "every upload in its handler", func() bool { return reading.Load() == int64(len(conns)) })
		time.Sleep(50 * time.Millisecond) // the one byte read
		heap[round] = heapInUse()
	}
	return (heap[1] - heap[0]) / int64(n)
}

func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The janitor ends the goroutines a burst left idle once they stayed so
// for a whole round, and keeps those used since.
func TestPoolRetiresIdle(t *testing.T) {
	release := make(chan struct{})
	srv := &httpd.Server{}
	addr := start(t, srv, blockingHandler(release))
	for range 5 {
		c, _ := rawConn(t, addr)
		io.WriteString(c, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	}
	waitFor(t, "five handlers running", func() bool { return httpd.RunningHandlers(srv) == 5 })
	close(release)
	waitFor(t, "the handlers to return", func() bool { return httpd.RunningHandlers(srv) == 0 })
	if n := httpd.RetireIdle(srv); n != 5 {
		t.Fatalf("after the first round %d goroutines idle, want the burst's 5 (idle less than a round)", n)
	}
	getWithin(t, addr, 5*time.Second) // one of them serves again
	// The response can reach the client before its handler's goroutine
	// is idle again.
	waitFor(t, "the handler to return", func() bool { return httpd.RunningHandlers(srv) == 0 })
	if n := httpd.RetireIdle(srv); n != 1 {
		t.Fatalf("after the second round %d goroutines idle, want the 1 used since the first", n)
	}
	if n := httpd.RetireIdle(srv); n != 0 {
		t.Fatalf("after the third round %d goroutines idle, want none", n)
	}
}
