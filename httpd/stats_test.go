package httpd_test

import (
	"io"
	"log"
	"net/http"
	"strings"
	"testing"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
)

// The requests the server refuses itself are counted by status in Stats,
// each answered with its status.
func TestStatsRefused(t *testing.T) { backendtest.Run(t, testStatsRefused) }

func testStatsRefused(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := &httpd.Server{MaxHandlers: 1, MaxHeaderBytes: 1024, ErrorLog: log.New(io.Discard, "", 0)}
	addr := start(t, srv, blockingHandler(release))
	busy, _ := rawConn(t, addr)
	io.WriteString(busy, "GET /wait HTTP/1.1\r\nHost: x\r\n\r\n")
	waitFor(t, "the handler running", func() bool { return srv.Stats().Handlers == 1 })
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 8<<10) + "\r\n\r\n", 431},
		{"GET / HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Many: 1\r\n", 600) + "\r\n", 431},
		{"GET / HTTP/1.1\r\nHost: x\r\nBad Field: 1\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"GET / HTTP/1.1\r\nHost: x\r\nExpect: something\r\n\r\n", 417},
		{"GET / HTTP/3.0\r\nHost: x\r\n\r\n", 505},
		{"GET /ok HTTP/1.1\r\nHost: x\r\n\r\n", 503},
	} {
		c, br := rawConn(t, addr)
		io.WriteString(c, tc.req)
		resp, err := http.ReadResponse(br, nil)
		if err != nil || resp.StatusCode != tc.status {
			t.Fatalf("%.60q: %v, %v; want %d", tc.req, resp, err, tc.status)
		}
		c.Close()
	}
	want := map[int]uint64{400: 1, 417: 1, 431: 2, 501: 1, 503: 1, 505: 1}
	got := srv.Stats().Refused
	for status, n := range want {
		if got[status] != n {
			t.Errorf("Stats().Refused[%d] = %d, want %d (all: %v)", status, got[status], n, got)
		}
	}
	if e := srv.Stats().Engine.Total(); e.Conns < 1 {
		t.Errorf("Stats().Engine.Total().Conns = %d with a handler running", e.Conns)
	}
}

// Stats counts the requests handed to handlers by protocol, the pool's
// goroutines and the open connections.
func TestStatsRequests(t *testing.T) { backendtest.Run(t, testStatsRequests) }

func testStatsRequests(t *testing.T) {
	srv := h2cServer()
	srv.MaxHandlers = 8
	addr := start(t, srv, http.HandlerFunc(echoH2))
	// One connection: without the bound, a request that comes before the
	// last one's connection is back in the idle pool dials another.
	h1 := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
	defer h1.Transport.(*http.Transport).CloseIdleConnections()
	get := func(c *http.Client, n int) {
		for range n {
			res, err := c.Get("http://" + addr + "/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
	}
	get(h1, 3)
	get(h2cClient(t), 2)
	s := srv.Stats()
	if want := (httpd.RequestStats{HTTP1: 3, HTTP2: 2}); s.Requests != want {
		t.Errorf("Stats().Requests = %+v, want %+v", s.Requests, want)
	}
	if s.Pool.Max != 8 || s.Pool.Busy+s.Pool.Idle < 1 || s.Pool.Busy != s.Handlers {
		t.Errorf("Stats().Pool = %+v (Handlers %d), want Max 8, a goroutine kept, Busy = Handlers", s.Pool, s.Handlers)
	}
	if s.Conns.Open != 2 || s.Conns.Upgraded != 0 {
		t.Errorf("Stats().Conns = %+v with a keep-alive HTTP/1 and an HTTP/2 connection, want 2 open", s.Conns)
	}
}
