package httpd_test

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
)

// start serves h with srv (a new Server when nil) on a loopback port and
// returns its address; the server is shut down when the test ends.
func start(t testing.TB, srv *httpd.Server, h http.Handler) string {
	t.Helper()
	if srv == nil {
		srv = &httpd.Server{}
	}
	addr, done := listen(t, srv, h, (*httpd.Server).Serve)
	stopAtEnd(t, srv, done)
	return addr
}

// listen serves h with srv on a loopback port through serve (Serve, or a
// ServeTLS) and returns the address and, once it returns, serve's result.
func listen(t testing.TB, srv *httpd.Server, h http.Handler, serve func(*httpd.Server, net.Listener) error) (string, chan error) {
	t.Helper()
	srv.Handler = h
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- serve(srv, ln) }()
	return ln.Addr().String(), done
}

// stopAtEnd shuts srv down when the test ends, and checks that its serve
// (whose result done gives) returned ErrServerClosed.
func stopAtEnd(t testing.TB, srv *httpd.Server, done chan error) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
			srv.Close()
		}
		if err := <-done; err != http.ErrServerClosed {
			t.Errorf("Serve returned %v, want ErrServerClosed", err)
		}
	})
}

// client returns an http.Client whose idle connections close when the
// test ends.
func client(t testing.TB) *http.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// rawConn dials addr for a test that writes requests by hand.
func rawConn(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c, bufio.NewReader(c)
}

// errDeadline is what a read past its deadline matches.
var errDeadline = os.ErrDeadlineExceeded
