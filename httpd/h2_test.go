package httpd_test

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"

	"github.com/galeio/gale/httpd"
)

// h2cServer returns a Server that serves h2c beside HTTP/1.
func h2cServer() *httpd.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &httpd.Server{Protocols: p}
}

// h2cClient returns a client that speaks h2c with prior knowledge.
func h2cClient(t testing.TB) *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// echoH2 answers with what it was asked, and the body it was sent.
func echoH2(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Proto", r.Proto)
	w.Header().Set("X-Method", r.Method)
	b, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 500)
		return
	}
	w.Header().Set("X-Len", fmt.Sprint(len(b)))
	w.Write(b)
}

func TestH2CPriorKnowledge(t *testing.T) { backendtest.Run(t, testH2CPriorKnowledge) }

func testH2CPriorKnowledge(t *testing.T) {
	addr := start(t, h2cServer(), http.HandlerFunc(echoH2))
	c := h2cClient(t)
	for _, n := range []int{0, 10, 5000, 70000, 3 << 20} {
		body := bytes.Repeat([]byte("x"), n)
		res, err := c.Post("http://"+addr+"/", "text/plain", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if res.Proto != "HTTP/2.0" || res.Header.Get("X-Proto") != "HTTP/2.0" || !bytes.Equal(got, body) {
			t.Fatalf("n=%d: %s %q, %d bytes back", n, res.Proto, res.Header.Get("X-Proto"), len(got))
		}
	}
}

func TestH2CConcurrentStreams(t *testing.T) { backendtest.Run(t, testH2CConcurrentStreams) }

func testH2CConcurrentStreams(t *testing.T) {
	addr := start(t, h2cServer(), http.HandlerFunc(echoH2))
	c := h2cClient(t)
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for i := range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := strings.Repeat("y", i*997)
			res, err := c.Post("http://"+addr+"/", "text/plain", strings.NewReader(body))
			if err != nil {
				errs <- err
				return
			}
			got, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil || string(got) != body {
				errs <- fmt.Errorf("stream %d: %v, %d bytes of %d", i, err, len(got), len(body))
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestH2TLS(t *testing.T) { backendtest.Run(t, testH2TLS) }

func testH2TLS(t *testing.T) {
	srv := &httpd.Server{}
	ts := httptest.NewUnstartedServer(nil)
	cert := ts.Config.TLSConfig
	_ = cert
	ts.EnableHTTP2 = true
	ts.StartTLS()
	certs := ts.TLS.Certificates
	pool := ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	ts.Close()
	srv.TLSConfig = &tls.Config{Certificates: certs}
	addr, done := listen(t, srv, http.HandlerFunc(echoH2), func(s *httpd.Server, l net.Listener) error { return s.ServeTLS(l, "", "") })
	stopAtEnd(t, srv, done)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"}, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	res, err := c.Post("https://"+addr+"/", "text/plain", strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.Proto != "HTTP/2.0" || string(b) != "hello" {
		t.Fatalf("%s %q", res.Proto, b)
	}
}

// TestH2BodyCloseWakesRead: a Read waiting for DATA returns once the
// handler closes the body, as with HTTP/1 (http.ErrBodyReadAfterClose).
// grpc-go's ServeHTTP reads the body on a goroutine and, its response
// written, closes the body and waits for that goroutine: a Read left
// waiting held the response's trailers back until the client reset the
// stream.
func TestH2BodyCloseWakesRead(t *testing.T) { backendtest.Run(t, testH2BodyCloseWakesRead) }

func testH2BodyCloseWakesRead(t *testing.T) {
	h := func(w http.ResponseWriter, r *http.Request) {
		readErr := make(chan error, 1)
		go func() {
			_, err := r.Body.Read(make([]byte, 10))
			readErr <- err
		}()
		// Lets the Read start waiting first, the order that hung; the
		// other one passes too.
		time.Sleep(20 * time.Millisecond)
		r.Body.Close()
		select {
		case err := <-readErr:
			w.Header().Set("X-Read-Err", fmt.Sprint(err))
		case <-time.After(5 * time.Second):
			w.Header().Set("X-Read-Err", "still waiting 5 s after Close")
		}
	}
	addr := start(t, h2cServer(), http.HandlerFunc(h))
	pr, pw := io.Pipe() // a body that never comes
	defer pw.Close()
	res, err := h2cClient(t).Post("http://"+addr+"/", "text/plain", pr)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if got, want := res.Header.Get("X-Read-Err"), http.ErrBodyReadAfterClose.Error(); got != want {
		t.Errorf("Read waiting at Close returned %q, want %q", got, want)
	}
}
