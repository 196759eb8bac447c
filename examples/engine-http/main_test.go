package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

const testTimeout = 10 * time.Second

func TestNetHTTPClient(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	tr := &http.Transport{MaxIdleConnsPerHost: 1}
	t.Cleanup(tr.CloseIdleConnections)
	client := &http.Client{Transport: tr, Timeout: testTimeout}
	url := "http://" + addr.String() + "/hello?x=1"

	do := func(method, body string, close bool) (reused bool) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, url, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Close = close
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		}))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, url, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("%s: reading body: %v", method, err)
		}
		want := hello
		if method == http.MethodHead {
			want = ""
		}
		if resp.StatusCode != 200 || string(got) != want {
			t.Errorf("%s: response = %d %q, want 200 %q", method, resp.StatusCode, got, want)
		}
		if resp.ContentLength != 13 {
			t.Errorf("%s: Content-Length = %d, want 13", method, resp.ContentLength)
		}
		if resp.Close != close {
			t.Errorf("%s: response closes the connection: %v, want %v", method, resp.Close, close)
		}
		date, err := http.ParseTime(resp.Header.Get("Date"))
		if d := time.Since(date); err != nil || d < -2*time.Second || d > testTimeout {
			t.Errorf("%s: Date %q: %v, %v from now, want a time within a second or so", method, resp.Header.Get("Date"), err, d)
		}
		return reused
	}

	do("GET", "", false)
	for i := range 5 {
		if !do("GET", "", false) {
			t.Errorf("request %d: a new connection, want the first one reused", i+2)
		}
	}
	if !do("POST", strings.Repeat("body", 10000), false) {
		t.Error("POST: a new connection, want the first one reused")
	}
	if !do("HEAD", "", false) {
		t.Error("HEAD: a new connection, want the first one reused")
	}
	if !do("GET", "", false) {
		t.Error("GET after POST: a new connection, want the first one reused")
	}
	if !do("GET", "", true) {
		t.Error("GET with Connection: close: a new connection, want the first one reused")
	}
	if do("GET", "", false) {
		t.Error("GET after Connection: close: connection reused, want a new one")
	}
}

type client struct {
	t    testing.TB
	conn net.Conn
	r    *bufio.Reader
}

func dial(t testing.TB, addr net.Addr) *client {
	t.Helper()
	c, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

func (c *client) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads a response and checks its status, body and whether it
// announces the connection's close.
func (c *client) response(status int, wantBody string, closes bool) {
	c.t.Helper()
	c.responseTo(nil, status, wantBody, closes)
}

// responseTo is response for the response to req (needed for HEAD, whose
// response has no body whatever its Content-Length).
func (c *client) responseTo(req *http.Request, status int, wantBody string, closes bool) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.r, req)
	if err != nil {
		c.t.Fatalf("reading response: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading body: %v", err)
	}
	if resp.StatusCode != status || string(got) != wantBody || resp.Close != closes {
		c.t.Fatalf("response = %d %q, close %v, want %d %q, close %v", resp.StatusCode, got, resp.Close, status, wantBody, closes)
	}
}

func (c *client) expectEOF() {
	c.t.Helper()
	if b, err := c.r.ReadByte(); err != io.EOF {
		c.t.Fatalf("read after the last response = %q, %v, want EOF", b, err)
	}
}

const (
	get      = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	getClose = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
	hello    = "Hello, World!"
)

func TestPipelined(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	c := dial(t, addr)
	c.write(get + "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"\r\n" + // an empty line before a request is ignored
		"HEAD / HTTP/1.1\r\nhost: x\r\n\r\n" + get + getClose + get)
	c.response(200, hello, false)
	c.response(200, hello, false)
	c.responseTo(&http.Request{Method: "HEAD"}, 200, "", false)
	c.response(200, hello, false)
	c.response(200, hello, true)
	c.expectEOF() // the request after the close is not answered

	// Many more requests than fit a read buffer, or a flushSize of
	// responses, in one write.
	c = dial(t, addr)
	const n = 3000
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.conn, strings.Repeat(get, n-1)+getClose)
		errc <- err
	}()
	for i := range n {
		c.response(200, hello, i == n-1)
	}
	c.expectEOF()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
}

func TestBodies(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 1})
	probe := dial(t, addr)
	// sync makes sure the loop has read what c wrote before: a round trip
	// on a second connection of the same loop.
	sync := func() {
		probe.write(get)
		probe.response(200, hello, false)
	}
	big := strings.Repeat("0123456789", 100000) // 1 MB: many reads

	c := dial(t, addr)
	c.write("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n" + big[:500])
	c.response(200, hello, false) // answered before the body is in
	c.write(big[500:700000])
	sync()
	c.write(big[700000:] + get)
	c.response(200, hello, false)

	// A request that asks to close is answered at once, and the
	// connection closes once its body has been read.
	c.write("PUT / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 10\r\n\r\n01234")
	c.response(200, hello, true)
	sync()
	c.write("56789" + get)
	c.expectEOF()

	// A body cut at every byte, with the next request.
	req := "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + getClose
	for k := range len(req) + 1 {
		c := dial(t, addr)
		c.write(req[:k])
		sync()
		c.write(req[k:])
		c.response(200, hello, false)
		c.response(200, hello, true)
		c.expectEOF()
		c.conn.Close()
	}
}

func TestHTTP10(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 1})
	c := dial(t, addr)
	c.write("GET / HTTP/1.0\r\n\r\n") // no Host needed
	c.response(200, hello, true)
	c.expectEOF()

	c = dial(t, addr)
	c.write("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	c.response(200, hello, false)
	c.response(200, hello, false)
	c.write("GET / HTTP/1.0\r\n\r\n")
	c.response(200, hello, true)
	c.expectEOF()

	c = dial(t, addr)
	c.write("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := resp.Header.Get("Connection"); got != "keep-alive" {
		t.Errorf("Connection = %q in the response to HTTP/1.0 keep-alive, want keep-alive", got)
	}
}

func TestMalformed(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\n\r\n", 400}, // no Host
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"GET  / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET / HTTP/1.1 \r\nHost: x\r\n\r\n", 400},
		{"GET /\r\nHost: x\r\n\r\n", 400},
		{"GET / FOO/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 505},
		{"G@T / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{" GET / HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET /a\x7f HTTP/1.1\r\nHost: x\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nBad Name: y\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost : x\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nA: b\r\n folded\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nA: b\nC: d\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nA: b\x00\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 1\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999999999999999\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
		{"GET / HTTP/1.1\r\nHost: x\r\nA: " + strings.Repeat("a", maxHead), 431},
		{strings.Repeat("\r\n", maxHead), 431},
		{get + "garbage\r\n\r\n", 400}, // after a good request
	} {
		c := dial(t, addr)
		c.write(tc.req)
		if strings.HasPrefix(tc.req, get) {
			c.response(200, hello, false)
		}
		resp, err := http.ReadResponse(c.r, nil)
		if err != nil {
			t.Fatalf("response to %.60q: %v", tc.req, err)
		}
		body, _ := io.ReadAll(resp.Body)
		wantBody := http.StatusText(tc.status) + "\n"
		if resp.StatusCode != tc.status || !resp.Close || string(body) != wantBody {
			t.Errorf("response to %.60q = %d %q, close %v, want %d %q, close true", tc.req, resp.StatusCode, body, resp.Close, tc.status, wantBody)
		}
		c.expectEOF()
		c.conn.Close()
	}
}

// TestRequestsAccepted checks heads that are unusual but valid.
func TestRequestsAccepted(t *testing.T) {
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 1})
	for _, req := range []string{
		"GET / HTTP/1.1\r\nHOST: x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost:x\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x \t\r\nX-Empty:\r\n\r\n",
		"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET http://x/a?b=c HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade, keep-alive\r\nA: \x80\xff\r\n\r\n",
		"\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
	} {
		c := dial(t, addr)
		c.write(req)
		c.response(200, hello, false)
		c.conn.Close()
	}
}

func TestDate(t *testing.T) {
	s := newServer()
	at := time.Date(2026, 1, 2, 3, 4, 5, 600e6, time.FixedZone("x", 3600))
	s.setDate(at)
	if got, want := string(*s.date.Load()), "Date: Fri, 02 Jan 2026 02:04:05 GMT\r\n"; got != want {
		t.Errorf("date line for %v = %q, want %q", at, got, want)
	}
	if d, _ := s.OnTick(); d <= 0 || d > time.Second {
		t.Errorf("OnTick delay = %v, want in (0, 1s]", d)
	}
}

// startServer starts the server on a free loopback port and shuts it down
// when the test ends.
func startServer(t testing.TB, opts engine.Options) (*engine.Engine, net.Addr) {
	t.Helper()
	e, addr, err := serve("127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown = %v, want nil", err)
		}
	})
	return e, addr
}
