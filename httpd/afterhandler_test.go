package httpd_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// TestAfterHandler checks that AfterHandler's functions run once the
// handler has returned, in order, after a panic too, and not before, even
// when the client's end canceled the request's context first; and that a
// ResponseWriter that is not a loop-served one is refused.
func TestAfterHandler(t *testing.T) { backendtest.Run(t, testAfterHandler) }

func testAfterHandler(t *testing.T) {
	events := make(chan string, 8)
	note := func(s string) func() { return func() { events <- s } }
	addr := start(t, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ended" {
			select {
			case <-r.Context().Done(): // the client half-closed
			case <-time.After(10 * time.Second):
			}
		}
		if !httpd.AfterHandler(w, note("after 1")) || !httpd.AfterHandler(w, note("after 2")) {
			events <- "refused"
		}
		if r.URL.Path == "/panic" {
			events <- "return"
			panic(http.ErrAbortHandler)
		}
		io.WriteString(w, "ok")
		events <- "return"
	}))
	expect := func(t *testing.T, want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case got := <-events:
				if got != w {
					t.Fatalf("event %q, want %q", got, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no event, want %q", w)
			}
		}
	}
	for _, name := range []string{"return", "panic", "ended"} {
		t.Run(name, func(t *testing.T) {
			path := "/" + name
			c, _ := rawConn(t, addr)
			io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\n\r\n")
			if path == "/ended" {
				c.(*net.TCPConn).CloseWrite()
			}
			expect(t, "return", "after 1", "after 2")
		})
	}
	if httpd.AfterHandler(httptest.NewRecorder(), note("never")) {
		t.Error("AfterHandler(httptest.ResponseRecorder) = true, want false")
	}
}
