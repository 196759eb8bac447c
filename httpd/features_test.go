package httpd_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
)

func TestFlusherStreams(t *testing.T) { backendtest.Run(t, testFlusherStreams) }

func testFlusherStreams(t *testing.T) {
	step := make(chan struct{})
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-step
		io.WriteString(w, "second")
	}))
	resp, err := client(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != "first" {
		t.Fatalf("before the handler returned: %q, %v", buf, err)
	}
	close(step)
	rest, _ := io.ReadAll(resp.Body)
	if string(rest) != "second" || len(resp.TransferEncoding) == 0 {
		t.Fatalf("rest %q, TE %v", rest, resp.TransferEncoding)
	}
}

func TestTrailersOut(t *testing.T) { backendtest.Run(t, testTrailersOut) }

func testTrailersOut(t *testing.T) {
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-Sum")
		io.WriteString(w, "body")
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "yes")
	}))
	resp, err := client(t).Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Trailer.Get("X-Sum") != "42" || resp.Trailer.Get("X-Late") != "yes" {
		t.Fatalf("trailer %v", resp.Trailer)
	}
}

func TestHead(t *testing.T) { backendtest.Run(t, testHead) }

func testHead(t *testing.T) {
	addr := start(t, nil, echoHandler())
	c, br := rawConn(t, addr)
	io.WriteString(c, "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.ContentLength != 13 {
		t.Fatalf("HEAD Content-Length %d, want 13", resp.ContentLength)
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "Hello, World!" {
		t.Fatalf("GET after HEAD: %q", b)
	}
}

func TestExpectContinue(t *testing.T) { backendtest.Run(t, testExpectContinue) }

func testExpectContinue(t *testing.T) {
	addr := start(t, nil, echoHandler())
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	line, err := br.ReadString('\n')
	if err != nil || line != "HTTP/1.1 100 Continue\r\n" {
		t.Fatalf("got %q, %v; want 100 Continue", line, err)
	}
	br.ReadString('\n')
	io.WriteString(c, "hello")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "POST /echo 5:hello trailer=map[]" {
		t.Fatalf("got %q", b)
	}
	// An expectation the server cannot meet.
	c2, br2 := rawConn(t, addr)
	io.WriteString(c2, "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 5\r\n\r\n")
	resp, err = http.ReadResponse(br2, nil)
	if err != nil || resp.StatusCode != http.StatusExpectationFailed {
		t.Fatalf("got %v, %v; want 417", resp, err)
	}
}

// A handler that answers without reading the body it was promised
// 100 Continue for: the connection closes after the response, since the
// client may or may not send the body.
func TestExpectContinueUnread(t *testing.T) { backendtest.Run(t, testExpectContinueUnread) }

func testExpectContinueUnread(t *testing.T) {
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusForbidden || !resp.Close {
		t.Fatalf("got %+v, %v; want 403 with Connection: close", resp, err)
	}
}

func TestPanicRecovered(t *testing.T) { backendtest.Run(t, testPanicRecovered) }

func testPanicRecovered(t *testing.T) {
	var logged bytes.Buffer
	var mu sync.Mutex
	srv := &httpd.Server{ErrorLog: log.New(lockedWriter{&mu, &logged}, "", 0)}
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/abort" {
			panic(http.ErrAbortHandler)
		}
		panic("boom")
	}))
	for _, path := range []string{"/boom", "/abort"} {
		_, err := client(t).Get("http://" + addr + path)
		if err == nil {
			t.Fatalf("%s: a response, want the connection cut", path)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if s := logged.String(); !strings.Contains(s, "http: panic serving") || !strings.Contains(s, "boom") || strings.Count(s, "panic serving") != 1 {
		t.Fatalf("log: %q; want one panic logged (ErrAbortHandler is silent)", s)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func TestHijack(t *testing.T) { backendtest.Run(t, testHijack) }

func testHijack(t *testing.T) {
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, brw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer nc.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\n\r\n")
		brw.Flush()
		line, err := brw.ReadString('\n') // sent with the request: was buffered
		if err != nil {
			t.Error(err)
			return
		}
		brw.WriteString("echo:" + line)
		brw.Flush()
		line, _ = brw.ReadString('\n') // sent later
		brw.WriteString("echo:" + line)
		brw.Flush()
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\nearly\n")
	if line, _ := br.ReadString('\n'); line != "HTTP/1.1 101 Switching Protocols\r\n" {
		t.Fatalf("got %q", line)
	}
	br.ReadString('\n')
	if line, _ := br.ReadString('\n'); line != "echo:early\n" {
		t.Fatalf("got %q", line)
	}
	io.WriteString(c, "late\n")
	if line, _ := br.ReadString('\n'); line != "echo:late\n" {
		t.Fatalf("got %q", line)
	}
}

func TestResponseController(t *testing.T) { backendtest.Run(t, testResponseController) }

func testResponseController(t *testing.T) {
	done := make(chan struct{})
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		rc := http.NewResponseController(w)
		if err := rc.EnableFullDuplex(); err != nil {
			t.Error(err)
		}
		if err := rc.SetWriteDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Error(err)
		}
		if err := rc.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
			t.Error(err)
		}
		io.WriteString(w, "started\n")
		if err := rc.Flush(); err != nil {
			t.Error(err)
		}
		_, err := io.ReadAll(r.Body) // the client never sends it
		if !errors.Is(err, errDeadline) {
			t.Errorf("body read: %v, want a deadline error", err)
		}
	}))
	c, br := rawConn(t, addr)
	io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(resp.Body).ReadString('\n')
	if line != "started\n" {
		t.Fatalf("got %q", line)
	}
	<-done
}

func TestRequestContextCanceled(t *testing.T) { backendtest.Run(t, testRequestContextCanceled) }

func testRequestContextCanceled(t *testing.T) {
	canceled := make(chan error, 1)
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
			canceled <- r.Context().Err()
		case <-time.After(5 * time.Second):
			canceled <- errors.New("not canceled")
		}
	}))
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	time.Sleep(20 * time.Millisecond)
	c.Close()
	if err := <-canceled; !errors.Is(err, context.Canceled) {
		t.Fatalf("context: %v, want canceled when the client left", err)
	}
}
