package netconn_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// httpServer is net/http's server on a netconn listener.
type httpServer struct {
	srv    *http.Server
	ln     net.Listener
	url    string
	conns  atomic.Int64 // connections accepted
	served chan error   // Serve's result
	logMu  sync.Mutex
	log    bytes.Buffer // what the server logged
}

// startHTTP serves testHandler on a netconn listener until t ends, then
// checks that Serve ended as it should and that the server logged
// nothing (an Accept error, a handler's panic).
func startHTTP(t *testing.T, opts ...func(*http.Server)) *httpServer {
	t.Helper()
	ln, err := netconn.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &httpServer{ln: ln, url: "http://" + ln.Addr().String(), served: make(chan error, 1)}
	s.srv = &http.Server{
		Handler:           testHandler(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          log.New(s, "", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}
	for _, o := range opts {
		o(s.srv)
	}
	go func() { s.served <- s.srv.Serve(ln) }()
	t.Cleanup(func() {
		s.srv.Close()
		if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve = %v, want http.ErrServerClosed", err)
		}
		s.logMu.Lock()
		defer s.logMu.Unlock()
		if s.log.Len() > 0 {
			t.Errorf("the server logged:\n%s", s.log.String())
		}
	})
	return s
}

// Write takes the server's log.
func (s *httpServer) Write(p []byte) (int, error) {
	s.logMu.Lock()
	defer s.logMu.Unlock()
	return s.log.Write(p)
}

// testHandler serves
//
//	/hello                 a greeting
//	/echo                  the request's body back
//	/data?seed=S&n=N       N bytes of stream S (chunked when chunked=1)
//	/check?seed=S&n=N      "ok" if the body is N bytes of stream S, else 400
func testHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello, world\n")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.Write(b)
	})
	mux.HandleFunc("/data", func(w http.ResponseWriter, r *http.Request) {
		seed, n := streamParams(r)
		if r.FormValue("chunked") == "" {
			w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		}
		io.Copy(w, newPattern(seed, n))
	})
	mux.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
		seed, n := streamParams(r)
		chk := newChecker(seed)
		io.Copy(chk, r.Body)
		if err := chk.check(n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, "ok")
	})
	return mux
}

func streamParams(r *http.Request) (seed uint64, n int64) {
	seed, _ = strconv.ParseUint(r.FormValue("seed"), 10, 64)
	n, _ = strconv.ParseInt(r.FormValue("n"), 10, 64)
	return seed, n
}

// newClient returns net/http's client with its own transport, whose
// idle connections close when t ends.
func newClient(t *testing.T, maxConns int) *http.Client {
	tr := &http.Transport{
		MaxConnsPerHost:     maxConns,
		MaxIdleConnsPerHost: maxConns,
		DisableCompression:  true,
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: time.Minute}
}

// get returns the body of a GET, failing on any error or a status other
// than 200.
func get(c *http.Client, url string) ([]byte, error) {
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s: %s", url, resp.Status, b)
	}
	return b, err
}

// httpBodySize is the size of the large upload and download.
const httpBodySize = 64 << 20

// TestHTTP serves net/http's client from net/http's server on a netconn
// listener: keep-alive, sequential and concurrent requests, large bodies
// both ways (sized and chunked) checked byte for byte, and Shutdown.
func TestHTTP(t *testing.T) {
	backendtest.Run(t, func(t *testing.T) {
		t.Run("keepalive", func(t *testing.T) {
			s := startHTTP(t)
			c := newClient(t, 1)
			for i := range 200 {
				b, err := get(c, s.url+"/hello")
				if err != nil || string(b) != "hello, world\n" {
					t.Fatalf("request %d = %q, %v", i, b, err)
				}
			}
			if n := s.conns.Load(); n != 1 {
				t.Errorf("200 sequential requests took %d connections, want 1 (keep-alive)", n)
			}
		})
		t.Run("concurrent", func(t *testing.T) {
			s := startHTTP(t)
			const workers, each = 16, 40
			c := newClient(t, workers)
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for i := range each {
						seed := uint64(w*each + i)
						body := make([]byte, int(seed*997%20000))
						fillPattern(body, seed, 0)
						resp, err := c.Post(s.url+"/echo", "application/octet-stream", bytes.NewReader(body))
						if err != nil {
							t.Errorf("worker %d request %d: %v", w, i, err)
							return
						}
						got, err := io.ReadAll(resp.Body)
						resp.Body.Close()
						if err != nil || !bytes.Equal(got, body) {
							t.Errorf("worker %d request %d: echo of %d bytes = %d bytes, %v", w, i, len(body), len(got), err)
							return
						}
					}
				})
			}
			wg.Wait()
			if n := s.conns.Load(); n > workers {
				t.Errorf("%d workers took %d connections, want at most %d", workers, n, workers)
			}
		})
		t.Run("upload", func(t *testing.T) {
			s := startHTTP(t)
			c := newClient(t, 1)
			for _, chunked := range []bool{false, true} {
				var body io.Reader = newPattern(3, httpBodySize)
				if chunked {
					body = struct{ io.Reader }{body} // no length: sent chunked
				}
				req, _ := http.NewRequest("POST", fmt.Sprintf("%s/check?seed=3&n=%d", s.url, httpBodySize), body)
				if !chunked {
					req.ContentLength = httpBodySize
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("upload (chunked %v): %v", chunked, err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK || string(got) != "ok" {
					t.Errorf("upload (chunked %v): %s: %s", chunked, resp.Status, got)
				}
			}
		})
		t.Run("download", func(t *testing.T) {
			s := startHTTP(t)
			c := newClient(t, 1)
			for _, chunked := range []string{"", "1"} {
				resp, err := c.Get(fmt.Sprintf("%s/data?seed=4&n=%d&chunked=%s", s.url, httpBodySize, chunked))
				if err != nil {
					t.Fatalf("download (chunked %q): %v", chunked, err)
				}
				chk := newChecker(4)
				_, err = io.Copy(chk, resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Errorf("download (chunked %q): %v", chunked, err)
				} else if err := chk.check(httpBodySize); err != nil {
					t.Errorf("download (chunked %q): %v", chunked, err)
				}
			}
		})
		t.Run("timeouts", testHTTPTimeouts)
		t.Run("shutdown", testHTTPShutdown)
	})
}

// testHTTPTimeouts: the server's IdleTimeout closes a keep-alive
// connection left idle, and its ReadHeaderTimeout one that stalls in a
// request's header; both are read deadlines on netconn conns.
func testHTTPTimeouts(t *testing.T) {
	const timeout = 200 * time.Millisecond
	s := startHTTP(t, func(srv *http.Server) {
		srv.IdleTimeout, srv.ReadHeaderTimeout = timeout, timeout
	})
	for _, tc := range []struct{ name, send string }{
		{"idle", "GET /hello HTTP/1.1\r\nHost: gale\r\n\r\n"},
		{"stalled header", "GET /hello HTTP/1.1\r\nHost: ga"},
	} {
		c, err := net.Dial("tcp", s.ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(hang))
		start := time.Now()
		io.WriteString(c, tc.send)
		_, err = io.Copy(io.Discard, c) // a response, if any, then the end
		if d := time.Since(start); err != nil || d < timeout*3/4 {
			t.Errorf("%s: the server closed after %v, %v; want after its %v timeout, cleanly", tc.name, d, err, timeout)
		}
	}
}

// testHTTPShutdown: Shutdown closes the listener and idle connections at
// once, waits for a request in progress, and returns nil; Serve returns
// http.ErrServerClosed and no new connection is taken.
func testHTTPShutdown(t *testing.T) {
	s := startHTTP(t)
	began := make(chan struct{})
	s.srv.RegisterOnShutdown(func() { close(began) })
	entered := make(chan struct{})
	mux := s.srv.Handler.(*http.ServeMux)
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-began
		time.Sleep(settle) // Shutdown is now waiting for us
		io.WriteString(w, "done")
	})

	// An idle keep-alive connection, which Shutdown must close.
	idle, err := net.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idle.SetDeadline(time.Now().Add(hang))
	io.WriteString(idle, "GET /hello HTTP/1.1\r\nHost: gale\r\n\r\n")
	br := bufio.NewReader(idle)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	c := newClient(t, 1)
	slow := make(chan error, 1)
	go func() {
		b, err := get(c, s.url+"/slow")
		if err == nil && string(b) != "done" {
			err = fmt.Errorf("body %q, want %q", b, "done")
		}
		slow <- err
	}()
	<-entered
	ctx, cancel := context.WithTimeout(context.Background(), hang)
	defer cancel()
	start := time.Now()
	if err := s.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown = %v, want nil", err)
	}
	if d := time.Since(start); d < settle {
		t.Errorf("Shutdown returned after %v, before the request in progress ended", d)
	}
	if err := <-slow; err != nil {
		t.Errorf("request in progress during Shutdown: %v", err)
	}
	if err := <-s.served; !errors.Is(err, http.ErrServerClosed) {
		t.Errorf("Serve = %v, want http.ErrServerClosed", err)
	}
	s.served <- http.ErrServerClosed // for the cleanup's check
	if n, err := br.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("idle connection after Shutdown: Read = %d, %v; want io.EOF", n, err)
	}
	if _, err := get(newClient(t, 1), s.url+"/hello"); err == nil {
		t.Errorf("request after Shutdown succeeded")
	}
}

// wrkDuration and wrkConns are the load TestHTTPWrk puts on the server.
const (
	wrkDuration = 2 * time.Second
	wrkConns    = 50
)

var (
	wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in `)
	wrkErrors   = regexp.MustCompile(`Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	wrkNon2xx   = regexp.MustCompile(`Non-2xx or 3xx responses: (\d+)`)
)

// TestHTTPWrk loads the netconn-served net/http server with wrk, 50
// keep-alive connections for 2 s: some requests must be served, and none
// may meet a socket error or a status other than 2xx.
func TestHTTPWrk(t *testing.T) {
	wrk := needTool(t, "wrk")
	backendtest.Run(t, func(t *testing.T) {
		s := startHTTP(t)
		ctx, cancel := context.WithTimeout(context.Background(), wrkDuration+30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, wrk, "-t2", fmt.Sprintf("-c%d", wrkConns),
			fmt.Sprintf("-d%ds", int(wrkDuration.Seconds())), "--timeout", "5s", s.url+"/hello")
		cmd.WaitDelay = time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", cmd, err, out)
		}
		t.Logf("wrk:\n%s", out)
		m := wrkRequests.FindSubmatch(out)
		if m == nil {
			t.Fatalf("no request count in wrk's output")
		}
		if n, _ := strconv.Atoi(string(m[1])); n == 0 {
			t.Errorf("wrk made 0 requests")
		}
		if m := wrkErrors.FindSubmatch(out); m != nil {
			for i, kind := range []string{"connect", "read", "write", "timeout"} {
				if n, _ := strconv.Atoi(string(m[i+1])); n != 0 {
					t.Errorf("wrk: %d %s errors", n, kind)
				}
			}
		}
		if m := wrkNon2xx.FindSubmatch(out); m != nil {
			t.Errorf("wrk: %s responses not 2xx or 3xx", m[1])
		}
		if strings.Contains(string(out), "Socket errors") && wrkErrors.Find(out) == nil {
			t.Errorf("wrk reported socket errors in a form not understood")
		}
		if n := s.conns.Load(); n < wrkConns {
			t.Errorf("server accepted %d connections, want at least %d", n, wrkConns)
		}
		ctx, cancel = context.WithTimeout(context.Background(), hang)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown after the load = %v", err)
		}
	})
}
