package httpd_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// The behaviours in this file are net/http's where a handler or a client
// can see them; each was once different here.

// A trailer name carrying CR LF, whether declared in the Trailer field or
// set with http.TrailerPrefix, is dropped as net/http drops it, and a
// value's CR LF become spaces: neither can end the trailer and inject a
// response that would answer the next request on the connection.
func TestTrailerSplitting(t *testing.T) { backendtest.Run(t, testTrailerSplitting) }

func testTrailerSplitting(t *testing.T) {
	const injected = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nhacked"
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/second" {
			io.WriteString(w, "genuine")
			return
		}
		h := w.Header()
		h["Trailer"] = []string{"X-Declared\r\n\r\n" + injected, "X-Sum"}
		io.WriteString(w, "first")
		w.(http.Flusher).Flush() // chunked: the trailer follows the last chunk
		h["X-Declared\r\n\r\n"+injected] = []string{"v"}
		h[http.TrailerPrefix+"X-Late: v\r\n\r\n"+injected] = []string{"v"}
		h.Set("X-Sum", "1\r\n\r\n"+injected)
		h.Set(http.TrailerPrefix+"X-Ok", "yes")
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\n\r\nGET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil || string(body) != "first" {
		t.Fatalf("first body %q, %v", body, err)
	}
	want := http.Header{"X-Ok": {"yes"}, "X-Sum": {"1    " + strings.ReplaceAll(injected, "\r\n", "  ")}}
	for k := range want {
		if resp.Trailer.Get(k) != want.Get(k) {
			t.Errorf("trailer %s = %q, want %q", k, resp.Trailer.Get(k), want.Get(k))
		}
	}
	for k, vv := range resp.Trailer {
		if len(vv) > 0 && want[k] == nil { // declared in the head, it has no value
			t.Errorf("trailer %q: %q, want only %q", k, vv, want)
		}
	}
	readResponse(t, br, "second", 200, "genuine", false)
}

// Connection: close closes the connection in whichever of several
// Connection fields it comes (RFC 9112 section 9.6), as net/http's
// r.Close has it.
func TestConnectionCloseAnyField(t *testing.T) { backendtest.Run(t, testConnectionCloseAnyField) }

func testConnectionCloseAnyField(t *testing.T) {
	addr := start(t, nil, echoHandler())
	for _, fields := range []string{
		"Connection: keep-alive\r\nConnection: close\r\n",
		"Connection: keep-alive\r\nConnection: foo, close\r\n",
		"Connection: close\r\nConnection: keep-alive\r\n",
	} {
		c, br := rawConn(t, addr)
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n"+fields+"\r\n")
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", fields, err)
		}
		io.ReadAll(resp.Body)
		if !resp.Close {
			t.Errorf("%q: response without Connection: close", fields)
		}
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if b, err := br.ReadByte(); err != io.EOF && !isReset(err) {
			t.Errorf("%q: read after the response = %q, %v; want the connection closed", fields, b, err)
		}
	}
}

// Flush on a response that has no body (HEAD, 204, 304) sends its head
// at once, as net/http's does, not when the handler returns.
func TestFlushWithoutBody(t *testing.T) { backendtest.Run(t, testFlushWithoutBody) }

func testFlushWithoutBody(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(http.StatusNoContent)
		case "/304":
			w.WriteHeader(http.StatusNotModified)
		default:
			io.WriteString(w, "body a HEAD does not send")
		}
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/204", 204}, {"GET", "/304", 304}, {"HEAD", "/", 200}} {
		c, _ := rawConn(t, addr)
		io.WriteString(c, tc.method+" "+tc.path+" HTTP/1.1\r\nHost: x\r\n\r\n")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: tc.method})
		if err != nil || resp.StatusCode != tc.status {
			t.Fatalf("%s %s: %v, %v; want the head of a %d before the handler returns", tc.method, tc.path, resp, err, tc.status)
		}
		c.Close()
	}
}

// Deadlines a handler sets with http.ResponseController are its
// request's: the next request on the connection starts without them, as
// net/http resets both around every request.
func TestHandlerDeadlinesPerRequest(t *testing.T) { backendtest.Run(t, testHandlerDeadlinesPerRequest) }

func testHandlerDeadlinesPerRequest(t *testing.T) {
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/first" {
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
			rc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
		}
		io.WriteString(w, r.URL.Path)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET /first HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, br, "first", 200, "/first", false)
	time.Sleep(300 * time.Millisecond) // both deadlines pass while the connection is idle
	io.WriteString(c, "GET /second HTTP/1.1\r\nHost: x\r\n\r\n")
	readResponse(t, br, "second", 200, "/second", false)
}

// A read deadline set by the handler bounds Body.Read however the body
// trickles in: a byte before the deadline does not cancel it, as it does
// not for net/http's (whose connection Read fails at the deadline).
func TestHandlerReadDeadlineTrickle(t *testing.T) { backendtest.Run(t, testHandlerReadDeadlineTrickle) }

func testHandlerReadDeadlineTrickle(t *testing.T) {
	const deadline = 300 * time.Millisecond
	result := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		http.NewResponseController(w).SetReadDeadline(t0.Add(deadline))
		_, err := io.ReadAll(r.Body)
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
			result <- fmt.Errorf("Body.Read = %v, want a deadline error", err)
		} else if d := time.Since(t0); d > deadline+2*time.Second {
			result <- fmt.Errorf("Body.Read failed after %v, want about %v", d, deadline)
		} else {
			result <- nil
		}
		w.WriteHeader(http.StatusRequestTimeout)
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n")
	stop := time.After(5 * time.Second)
	for {
		select {
		case err := <-result:
			if err != nil {
				t.Fatal(err)
			}
			return
		case <-stop:
			t.Fatal("the handler's Body.Read did not fail within 5s of a trickled body")
		case <-time.After(20 * time.Millisecond):
			c.Write([]byte("x"))
		}
	}
}
