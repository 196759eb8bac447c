package httpd_test

// HTTP/2 against net/http's own HTTP/2 server as the oracle: the same
// requests, from Go's HTTP/2 client, to both servers serving the same
// handler; status, header (Date aside), body and trailers must agree.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
)

// diffH2Handler behaves in the ways a response can: sniffed and declared
// types and lengths, HEAD, bodiless statuses, streaming, trailers,
// errors, redirects, and echoes of what the request carried.
func diffH2Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/plain", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello, world\n") })
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<!DOCTYPE html><p>hi</p>") })
	mux.HandleFunc("/empty", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write(bytes.Repeat([]byte("0123456789abcdef"), 1<<16)) })
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 4096)) })
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "11")
		io.WriteString(w, "declared!\r\n")
	})
	mux.HandleFunc("/status/", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/status/"), "%d", &code)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(code)
		_, err := io.WriteString(w, "body?")
		w.Header().Set("X-Write-Error", fmt.Sprint(err)) // too late to be sent: checks nothing leaks
	})
	mux.HandleFunc("/trailers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Trailer", "X-One, X-Two")
		io.WriteString(w, "with trailers")
		w.Header().Set("X-One", "1")
		w.Header().Set(http.TrailerPrefix+"X-Three", "3")
	})
	mux.HandleFunc("/flush", func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "part %d\n", i)
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%d %v %d\n", len(b), err, r.ContentLength)
	})
	mux.HandleFunc("/request", func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Clone()
		json.NewEncoder(w).Encode(map[string]any{
			"method": r.Method, "proto": r.Proto, "major": r.ProtoMajor, "host": r.Host,
			"uri": r.RequestURI, "path": r.URL.Path, "query": r.URL.RawQuery, "header": h,
			"cl": r.ContentLength, "te": r.TransferEncoding, "close": r.Close, "trailer": r.Trailer,
			"remote": r.RemoteAddr != "", "tls": r.TLS != nil,
		})
	})
	mux.HandleFunc("/cookies", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "a", Value: "1"})
		http.SetCookie(w, &http.Cookie{Name: "b", Value: "2", Path: "/"})
		w.Header().Add("X-Multi", "one")
		w.Header().Add("X-Multi", "two")
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/plain", http.StatusFound) })
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "bad thing", http.StatusTeapot) })
	mux.HandleFunc("/twice", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(201)
		w.WriteHeader(202)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Keep-Alive", "timeout=5")
		w.Header().Set("Transfer-Encoding", "chunked")
		w.Header().Set("Upgrade", "foo")
		io.WriteString(w, "hop-by-hop fields dropped")
	})
	mux.HandleFunc("/early", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		io.WriteString(w, "after 103")
	})
	return mux
}

type diffReq struct {
	method, path string
	body         string
	header       http.Header
}

func TestH2Differential(t *testing.T) { backendtest.Run(t, testH2Differential) }

func testH2Differential(t *testing.T) {
	h := diffH2Handler()
	gale := start(t, h2cServer(), h)
	std := startStdH2C(t, h)
	c := h2cClient(t)
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	cases := []diffReq{
		{"GET", "/plain", "", nil}, {"HEAD", "/plain", "", nil}, {"GET", "/html", "", nil},
		{"GET", "/empty", "", nil}, {"HEAD", "/empty", "", nil}, {"GET", "/big", "", nil}, {"HEAD", "/big", "", nil},
		{"GET", "/exact", "", nil}, {"GET", "/declared", "", nil}, {"HEAD", "/declared", "", nil},
		{"GET", "/status/204", "", nil}, {"GET", "/status/304", "", nil}, {"GET", "/status/404", "", nil},
		{"GET", "/status/500", "", nil}, {"GET", "/trailers", "", nil}, {"GET", "/flush", "", nil},
		{"POST", "/echo", "", nil}, {"POST", "/echo", "short body", nil}, {"POST", "/echo", strings.Repeat("L", 3<<20), nil},
		{"PUT", "/echo", "x", http.Header{"Expect": {"100-continue"}}},
		{"GET", "/request?q=1&r=%20", "", http.Header{"Cookie": {"a=1", "b=2"}, "X-Many": {"1", "2"}, "User-Agent": {"diff"}}},
		{"POST", "/request", "abc", http.Header{"Trailer": {"X-T"}}},
		{"OPTIONS", "/request", "", nil}, {"DELETE", "/request", "", nil},
		{"GET", "/cookies", "", nil}, {"GET", "/redirect", "", nil}, {"GET", "/error", "", nil},
		{"GET", "/twice", "", nil}, {"GET", "/early", "", nil}, {"GET", "/missing", "", nil},
	}
	for _, dc := range cases {
		t.Run(dc.method+dc.path, func(t *testing.T) {
			want := fetchH2(t, c, std, dc)
			got := fetchH2(t, c, gale, dc)
			if got != want {
				t.Errorf("gale and net/http differ\n gale:    %s\n net/http: %s", got, want)
			}
		})
	}
}

// TestH2ConnectionFields: where net/http's HTTP/2 server sends the
// Keep-Alive and Upgrade fields a handler set, gale drops them with
// Transfer-Encoding and Connection, as RFC 9113 §8.2.2 asks (curl,
// nghttp and Chromium treat such a response as malformed).
func TestH2ConnectionFields(t *testing.T) { backendtest.Run(t, testH2ConnectionFields) }

func testH2ConnectionFields(t *testing.T) {
	addr := start(t, h2cServer(), diffH2Handler())
	res, err := h2cClient(t).Get("http://" + addr + "/hop")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	for _, k := range []string{"Keep-Alive", "Upgrade", "Transfer-Encoding", "Connection"} {
		if v, ok := res.Header[k]; ok {
			t.Errorf("%s: %q sent", k, v)
		}
	}
}

// fetchH2 makes the request to addr and describes the response.
func fetchH2(t *testing.T, c *http.Client, addr string, dc diffReq) string {
	var body io.Reader
	if dc.body != "" {
		body = strings.NewReader(dc.body)
	}
	req, err := http.NewRequest(dc.method, "http://"+addr+dc.path, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, vv := range dc.header {
		req.Header[k] = vv
	}
	res, err := c.Do(req)
	if err != nil {
		return "error " + strings.ReplaceAll(err.Error(), addr, "ADDR")
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	h := res.Header.Clone()
	delete(h, "Date")
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range h {
			if !yield(k) {
				return
			}
		}
	})
	var sb strings.Builder
	fmt.Fprintf(&sb, "%s %d cl=%d", res.Proto, res.StatusCode, res.ContentLength)
	for _, k := range keys {
		fmt.Fprintf(&sb, " %s=%q", k, h[k])
	}
	fmt.Fprintf(&sb, " body=%d:%.60q err=%v trailer=%v", len(b), b, err, res.Trailer)
	return sb.String()
}

// startStdH2C serves h with net/http's server, h2c beside HTTP/1.
func startStdH2C(t *testing.T, h http.Handler) string {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	srv := &http.Server{Handler: h, Protocols: p, ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}
