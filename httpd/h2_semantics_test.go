package httpd_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
	"golang.org/x/net/http2"
)

// TestH2ContextCanceledOnReset: RST_STREAM from the client cancels the
// handler's r.Context().
func TestH2ContextCanceledOnReset(t *testing.T) { backendtest.Run(t, testH2ContextCanceledOnReset) }

func testH2ContextCanceledOnReset(t *testing.T) {
	began, canceled := make(chan struct{}), make(chan error, 1)
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(began)
		select {
		case <-r.Context().Done():
			canceled <- r.Context().Err()
		case <-time.After(10 * time.Second):
			canceled <- nil
		}
	}))
	r := dialH2(t, addr)
	if err := r.request(1, "GET", "/", true); err != nil {
		t.Fatal(err)
	}
	<-began
	r.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	if err := <-canceled; err != context.Canceled {
		t.Fatalf("the handler's context: %v, want context.Canceled", err)
	}
}

// TestH2StreamingAndTrailers: Flush sends what was written while the
// handler runs, trailers (declared and with http.TrailerPrefix) reach
// the client, and a request's trailers reach the handler after its body.
func TestH2StreamingAndTrailers(t *testing.T) { backendtest.Run(t, testH2StreamingAndTrailers) }

func testH2StreamingAndTrailers(t *testing.T) {
	next := make(chan struct{})
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Trailer", "X-Sum")
		fmt.Fprintf(w, "got %s %s\n", b, r.Trailer.Get("X-Req-Trailer"))
		w.(http.Flusher).Flush()
		<-next
		io.WriteString(w, "second\n")
		w.Header().Set("X-Sum", "42")
		w.Header().Set(http.TrailerPrefix+"X-Late", "late")
	}))
	pr, pw := io.Pipe()
	req, _ := http.NewRequest("POST", "http://"+addr+"/", pr)
	req.Trailer = http.Header{"X-Req-Trailer": nil}
	go func() {
		io.WriteString(pw, "body")
		req.Trailer.Set("X-Req-Trailer", "tv")
		pw.Close()
	}()
	res, err := h2cClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	line, err := br.ReadString('\n')
	if err != nil || line != "got body tv\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	close(next) // the first line came before the handler went on: flushed
	rest, err := io.ReadAll(br)
	if err != nil || string(rest) != "second\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if res.Trailer.Get("X-Sum") != "42" || res.Trailer.Get("X-Late") != "late" {
		t.Fatalf("trailers %v", res.Trailer)
	}
}

// TestH2ShutdownDrains: Shutdown sends GOAWAY, lets the stream in
// progress finish, and returns once it has.
func TestH2ShutdownDrains(t *testing.T) { backendtest.Run(t, testH2ShutdownDrains) }

func testH2ShutdownDrains(t *testing.T) {
	srv := h2cServer()
	began, finish := make(chan struct{}), make(chan struct{})
	addr, done := listen(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(began)
		<-finish
		io.WriteString(w, "finished")
	}), (*httpd.Server).Serve)
	r := dialH2(t, addr)
	if err := r.request(1, "GET", "/", true); err != nil {
		t.Fatal(err)
	}
	<-began
	shut := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		shut <- srv.Shutdown(ctx)
	}()
	if code := r.goAway(); code != http2.ErrCodeNo {
		t.Fatalf("GOAWAY %v", code)
	}
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v with a stream in progress", err)
	case <-time.After(100 * time.Millisecond):
	}
	close(finish)
	if got := r.status(1); got != "200" {
		t.Fatalf("stream 1: %s", got)
	}
	if err := <-shut; err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != http.ErrServerClosed {
		t.Fatal(err)
	}
}

// TestH2CUpgrade: "Upgrade: h2c" switches the connection; the request
// is answered as stream 1 over HTTP/2, and the connection serves more.
func TestH2CUpgrade(t *testing.T) { backendtest.Run(t, testH2CUpgrade) }

func testH2CUpgrade(t *testing.T) {
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s", r.Proto, r.URL.Path)
	}))
	c, br := rawConn(t, addr)
	settings := base64.RawURLEncoding.EncodeToString(nil)
	fmt.Fprintf(c, "GET /first HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: %s\r\n\r\n", settings)
	status, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(status, "HTTP/1.1 101") {
		t.Fatalf("%q, %v", status, err)
	}
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if l == "\r\n" {
			break
		}
	}
	io.WriteString(c, http2.ClientPreface)
	r := &h2raw{t: t, c: c, fr: http2.NewFramer(c, br)}
	r.enc, r.dec = newHPACK(&r.buf)
	r.fr.WriteSettings()
	body := func(id uint32) string {
		var b strings.Builder
		for {
			switch f := r.read().(type) {
			case *http2.HeadersFrame:
				r.dec.DecodeFull(f.HeaderBlockFragment())
			case *http2.DataFrame:
				if f.StreamID == id {
					b.Write(f.Data())
					if f.StreamEnded() {
						return b.String()
					}
				}
			}
		}
	}
	if got := body(1); got != "HTTP/2.0 /first" {
		t.Fatalf("stream 1: %q", got)
	}
	r.request(3, "GET", "/second", true)
	if got := body(3); got != "HTTP/2.0 /second" {
		t.Fatalf("stream 3: %q", got)
	}
}

// TestH2IdleTimeout: a connection with no stream for IdleTimeout is told
// GOAWAY and closed, though its client PINGs it meanwhile.
func TestH2IdleTimeout(t *testing.T) { backendtest.Run(t, testH2IdleTimeout) }

func testH2IdleTimeout(t *testing.T) {
	srv := h2cServer()
	srv.IdleTimeout = 200 * time.Millisecond
	addr := start(t, srv, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	r := dialH2(t, addr)
	r.request(1, "GET", "/", true)
	if got := r.status(1); got != "200" {
		t.Fatalf("stream 1: %s", got)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if r.fr.WritePing(false, [8]byte{}) != nil {
					return
				}
			}
		}
	}()
	if code := r.goAway(); code != http2.ErrCodeNo {
		t.Fatalf("GOAWAY %v", code)
	}
}

// TestH2NothingAfterReset: once the client resets a stream, the
// handler's return sends nothing more on it (RFC 9113 §6.4): the PING
// sent after the handler returned is answered with no DATA before it.
func TestH2NothingAfterReset(t *testing.T) { backendtest.Run(t, testH2NothingAfterReset) }

func testH2NothingAfterReset(t *testing.T) {
	returned := make(chan struct{})
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done() // then its return would end the stream with END_STREAM
	}))
	r := dialH2(t, addr)
	r.request(1, "POST", "/", false)
	if got := r.status(1); got != "200" {
		t.Fatalf("stream 1: %s", got)
	}
	r.fr.WriteRSTStream(1, http2.ErrCodeCancel)
	<-returned
	r.fr.WritePing(false, [8]byte{7})
	for {
		switch f := r.read().(type) {
		case *http2.PingFrame:
			if f.IsAck() {
				return
			}
		case *http2.DataFrame, *http2.HeadersFrame:
			t.Fatalf("%v on stream %d after its reset", f.Header().Type, f.Header().StreamID)
		}
	}
}

// TestH2PingsWithResponses: a client that PINGs after every response,
// as grpc-go's flow-control estimator does under load, is not told to
// calm down, however many it sends.
func TestH2PingsWithResponses(t *testing.T) { backendtest.Run(t, testH2PingsWithResponses) }

func testH2PingsWithResponses(t *testing.T) {
	addr := start(t, h2cServer(), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	r := dialH2(t, addr)
	for id := uint32(1); id < 2*3000; id += 2 {
		if id%200 == 1 {
			// The bound is on each exchange, not on the 3,000: under Wine
			// on a busy machine they took more than the 20 s dialH2 sets.
			r.c.SetDeadline(time.Now().Add(20 * time.Second))
		}
		r.request(id, "GET", "/", true)
		if got := r.status(id); got != "200" {
			t.Fatalf("stream %d: %s", id, got)
		}
		r.fr.WritePing(false, [8]byte{1})
	}
	r.request(6001, "GET", "/", true)
	if got := r.status(6001); got != "200" {
		t.Fatalf("the last stream: %s", got)
	}
}
