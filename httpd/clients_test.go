package httpd_test

// Real clients against the server, here net/http's (keep-alive, many at
// once, pipelining on a raw connection, TLS with ALPN); curl, wrk and
// Python's http.client are in clients_tools_test.go. Each test runs on
// every backend the machine has.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// toolTimeout bounds each run of an external client.
const toolTimeout = 30 * time.Second

const helloText = "Hello, World!"

// bigBody is /big's response: longer than a response buffers, so it goes
// out chunked (HTTP/1.1) or delimited by the close (HTTP/1.0), and not
// one byte repeated, so that a misplaced piece shows.
var bigBody = bytes.Repeat([]byte("0123456789abcdef"), 6250)

// clientsHandler is what the client tests serve:
//
//	/hello   helloText, text/plain
//	/echo    summary of the request: method, target, framing and body
//	/big     bigBody
//	/reject  413, without reading the body
//	/seq     the query's i, after sleeping for its sleep (a duration)
func clientsHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, helloText)
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		io.WriteString(w, summary(r.Method, r.URL.RequestURI(), r.ContentLength, r.TransferEncoding, b))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Write(bigBody)
	})
	mux.HandleFunc("/reject", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "too large", http.StatusRequestEntityTooLarge)
	})
	mux.HandleFunc("/seq", func(w http.ResponseWriter, r *http.Request) {
		if d, err := time.ParseDuration(r.URL.Query().Get("sleep")); err == nil {
			time.Sleep(d)
		}
		io.WriteString(w, r.URL.Query().Get("i"))
	})
	return mux
}

// summary describes a request as /echo answers it; a test computes the
// same from what it sent.
func summary(method, target string, length int64, te []string, body []byte) string {
	sum := sha256.Sum256(body)
	return fmt.Sprintf("%s %s length=%d te=%v n=%d sha256=%x", method, target, length, te, len(body), sum[:8])
}

// countConns sets srv's ConnState to count the connections it accepts.
func countConns(srv *httpd.Server) *atomic.Int64 {
	var n atomic.Int64
	srv.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			n.Add(1)
		}
	}
	return &n
}

// TestNetHTTPKeepAlive: net/http's client sends 200 requests one after
// the other, GETs, HEADs and POSTs with bodies, over the one connection
// it opened first: every later request reports it reused, from the same
// local address, and the server saw one connection.
func TestNetHTTPKeepAlive(t *testing.T) { backendtest.Run(t, testNetHTTPKeepAlive) }

func testNetHTTPKeepAlive(t *testing.T) {
	srv := &httpd.Server{}
	conns := countConns(srv)
	addr := start(t, srv, clientsHandler())
	cl := client(t)
	watch := watchConns(cl.Transport.(*http.Transport))
	var first string
	for i := range 200 {
		method, target, body := "GET", "/hello", ""
		switch i % 4 {
		case 1:
			method, target, body = "POST", "/echo?i="+strconv.Itoa(i), strings.Repeat("p", i*100)
		case 2:
			method = "HEAD"
		}
		req, err := http.NewRequest(method, "http://"+addr+target, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var info httptrace.GotConnInfo
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { info = ci },
		}))
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("request %d, %s %s: %v", i, method, target, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := helloText
		switch method {
		case "POST":
			want = summary(method, target, int64(len(body)), nil, []byte(body))
		case "HEAD":
			want = ""
		}
		if err != nil || resp.StatusCode != 200 || string(got) != want {
			t.Fatalf("request %d, %s %s = %d %q, %v; want 200 %q", i, method, target, resp.StatusCode, got, err, want)
		}
		local := info.Conn.LocalAddr().String()
		if i == 0 {
			first = local
			continue
		}
		if info.Reused && local == first {
			continue
		}
		if !watch.closedByClient(first) {
			t.Fatalf("request %d, %s %s: connection from %s, reused %v; want the first one (from %s) reused",
				i, method, target, local, info.Reused, first)
		}
		t.Logf("request %d: the client dropped its connection from %s (see connWatch) and dialed another", i, first)
		first = local
	}
	dialed, ended := watch.counts()
	if len(ended) > 0 {
		t.Errorf("the server ended connections from %v, want none ended", ended)
	}
	if n := conns.Load(); n != int64(dialed) {
		t.Errorf("the server saw %d connections, the client dialed %d; want the same", n, dialed)
	}
}

// TestNetHTTPConcurrent: 16 goroutines share one net/http client, each
// sending 50 requests (GETs, POSTs, chunked POSTs) as fast as it can;
// every response is right, the server ends none of the client's
// connections, and the connections the client dialed (at most 16, and
// one more for each the client dropped itself) are all the server saw.
func TestNetHTTPConcurrent(t *testing.T) { backendtest.Run(t, testNetHTTPConcurrent) }

func testNetHTTPConcurrent(t *testing.T) {
	const clients, requests = 16, 50
	srv := &httpd.Server{}
	conns := countConns(srv)
	addr := start(t, srv, clientsHandler())
	tr := &http.Transport{MaxConnsPerHost: clients, MaxIdleConnsPerHost: clients}
	watch := watchConns(tr)
	t.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for g := range clients {
		wg.Go(func() {
			for i := range requests {
				if err := concurrentRequest(cl, addr, g, i); err != nil {
					t.Errorf("client %d, request %d: %v", g, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	dialed, ended := watch.counts()
	if len(ended) > 0 {
		t.Errorf("the server ended connections from %v, want none ended", ended)
	}
	if n := conns.Load(); n < 1 || n != int64(dialed) {
		t.Errorf("the server saw %d connections, the client dialed %d; want the same, at least 1", n, dialed)
	}
}

// concurrentRequest sends client g's request i and checks its response.
func concurrentRequest(cl *http.Client, addr string, g, i int) error {
	target := fmt.Sprintf("/echo?g=%d&i=%d", g, i)
	body := strings.Repeat(strconv.Itoa(g), 1+i*37)
	var resp *http.Response
	var err error
	var want string
	switch i % 3 {
	case 0:
		target = fmt.Sprintf("/seq?i=%d-%d", g, i)
		want = fmt.Sprintf("%d-%d", g, i)
		resp, err = cl.Get("http://" + addr + target)
	case 1:
		want = summary("POST", target, int64(len(body)), nil, []byte(body))
		resp, err = cl.Post("http://"+addr+target, "text/plain", strings.NewReader(body))
	case 2: // a reader of unknown length: chunked
		want = summary("POST", target, -1, []string{"chunked"}, []byte(body))
		resp, err = cl.Post("http://"+addr+target, "text/plain", io.MultiReader(strings.NewReader(body)))
	}
	if err != nil {
		return err
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(got) != want {
		return fmt.Errorf("%s = %d %q, %v; want 200 %q", target, resp.StatusCode, got, err, want)
	}
	return nil
}

// TestNetHTTPUnreadBodies: net/http's client posts bodies a handler
// leaves unread, and gets what net/http's server gives: with Expect:
// 100-continue no 100 Continue, and a close; without, under 256 KiB, the
// connection kept. A handler that reads gets its 100 Continue and keeps
// the connection. Each request is followed by a GET that shows whether
// the connection was kept. (Past 256 KiB unread, see
// TestNetHTTPRefusedMidUpload.)
func TestNetHTTPUnreadBodies(t *testing.T) { backendtest.Run(t, testNetHTTPUnreadBodies) }

func testNetHTTPUnreadBodies(t *testing.T) {
	addr := start(t, nil, clientsHandler())
	tr := &http.Transport{ExpectContinueTimeout: time.Minute} // the test's Timeout comes first
	t.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for _, tc := range []struct {
		target string
		n      int
		expect bool
		status int
		got100 bool
		closes bool
	}{
		{"/reject", 10 << 20, true, 413, false, true},
		{"/reject", 200 << 10, false, 413, false, false},
		{"/echo", 10 << 20, true, 200, true, false},
	} {
		req, err := http.NewRequest("POST", "http://"+addr+tc.target, bytes.NewReader(make([]byte, tc.n)))
		if err != nil {
			t.Fatal(err)
		}
		if tc.expect {
			req.Header.Set("Expect", "100-continue")
		}
		var got100 bool
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			Got100Continue: func() { got100 = true },
		}))
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatalf("POST %s, %d bytes, Expect %v: %v", tc.target, tc.n, tc.expect, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || got100 != tc.got100 || resp.Close != tc.closes {
			t.Errorf("POST %s, %d bytes, Expect %v: %d, 100 Continue %v, close %v; want %d, %v, %v",
				tc.target, tc.n, tc.expect, resp.StatusCode, got100, resp.Close, tc.status, tc.got100, tc.closes)
		}
		var reused bool
		req, _ = http.NewRequest("GET", "http://"+addr+"/hello", nil)
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
		}))
		resp, err = cl.Do(req)
		if err != nil {
			t.Fatalf("GET after POST %s: %v", tc.target, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if reused == tc.closes {
			t.Errorf("GET after POST %s, %d bytes, Expect %v: connection reused %v, want %v", tc.target, tc.n, tc.expect, reused, !tc.closes)
		}
	}
}

// TestNetHTTPRefusedMidUpload: net/http's client is still sending when
// the server answers and closes: a 10 MiB body whose handler refuses it
// unread (413), and a 4 MiB header field (431). Closing a socket with
// unread input sends a reset, which can reach the client before it has
// read the answer, and its write then fails with "connection reset by
// peer" instead. net/http's server half-closes and waits 500 ms before it
// closes (closeWriteAndWait, rstAvoidanceDelay; go.dev/issue/3595, RFC
// 9112 section 9.6), and there its client reads the status every time;
// the test asks the same 30 times over.
func TestNetHTTPRefusedMidUpload(t *testing.T) { backendtest.Run(t, testNetHTTPRefusedMidUpload) }

func testNetHTTPRefusedMidUpload(t *testing.T) {
	const tries = 30
	addr := start(t, nil, clientsHandler())
	cl := client(t)
	body, big := make([]byte, 10<<20), strings.Repeat("h", 4<<20)
	var failed [2]int
	var first [2]error
	for range tries {
		for k, send := range []func() (*http.Response, error){
			func() (*http.Response, error) {
				return cl.Post("http://"+addr+"/reject", "application/octet-stream", bytes.NewReader(body))
			},
			func() (*http.Response, error) {
				req, err := http.NewRequest("GET", "http://"+addr+"/hello", nil)
				if err != nil {
					return nil, err
				}
				req.Header.Set("X-Big", big)
				return cl.Do(req)
			},
		} {
			resp, err := send()
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if want := [2]int{413, 431}[k]; resp.StatusCode != want || !resp.Close {
					err = fmt.Errorf("%d, close %v; want %d and a close", resp.StatusCode, resp.Close, want)
				}
			}
			if err != nil {
				if failed[k]++; first[k] == nil {
					first[k] = err
				}
			}
		}
	}
	for k, what := range []string{"POST /reject of 10 MiB (want 413)", "GET with a 4 MiB header (want 431)"} {
		if failed[k] > 0 {
			t.Errorf("%s: %d of %d tries failed; the first: %v", what, failed[k], tries, first[k])
		}
	}
}

// TestPipelinedClients: ten requests written at once on a raw
// connection, GETs whose handlers finish in the reverse order, POSTs
// with Content-Length and chunked bodies, are answered in order; then
// ten requests for /big, whose responses outgrow the socket's buffers
// while the client is still writing, and a last that asks to close.
func TestPipelinedClients(t *testing.T) { backendtest.Run(t, testPipelinedClients) }

func testPipelinedClients(t *testing.T) {
	addr := start(t, nil, clientsHandler())
	c, br := rawConn(t, addr)
	var reqs strings.Builder
	var want []string
	for i := range 10 {
		switch i % 3 {
		case 0: // the earlier, the slower
			fmt.Fprintf(&reqs, "GET /seq?i=%d&sleep=%dms HTTP/1.1\r\nHost: x\r\n\r\n", i, 2*(10-i))
			want = append(want, strconv.Itoa(i))
		case 1:
			body := strings.Repeat("c", 1000*i)
			fmt.Fprintf(&reqs, "POST /echo?i=%d HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", i, len(body), body)
			want = append(want, summary("POST", "/echo?i="+strconv.Itoa(i), int64(len(body)), nil, []byte(body)))
		case 2:
			fmt.Fprintf(&reqs, "POST /echo?i=%d HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+
				"3\r\nabc\r\n%x\r\n%s\r\n0\r\n\r\n", i, i, strings.Repeat("d", i))
			body := "abc" + strings.Repeat("d", i)
			want = append(want, summary("POST", "/echo?i="+strconv.Itoa(i), -1, []string{"chunked"}, []byte(body)))
		}
	}
	if _, err := io.WriteString(c, reqs.String()); err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		readResponse(t, br, fmt.Sprintf("pipelined response %d", i), 200, w, false)
	}

	// The client writes all of it before it reads a byte: the server
	// must go on reading requests while its responses wait.
	errc := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c, strings.Repeat("GET /big HTTP/1.1\r\nHost: x\r\n\r\n", 10)+
			"GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		errc <- err
	}()
	for i := range 10 {
		readResponse(t, br, fmt.Sprintf("pipelined /big %d", i), 200, string(bigBody), false)
	}
	readResponse(t, br, "the last, closing, response", 200, helloText, true)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if b, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("read after Connection: close = %q, %v; want EOF", b, err)
	}
}

// readResponse reads a response from br and checks it.
func readResponse(t *testing.T, br *bufio.Reader, what string, status int, body string, closes bool) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != status || string(got) != body || resp.Close != closes {
		t.Fatalf("%s = %d %.80q (%d bytes), close %v, %v; want %d %.80q (%d bytes), close %v",
			what, resp.StatusCode, got, len(got), resp.Close, err, status, body, len(body), closes)
	}
}

// startTLS serves h with ServeTLS on a loopback port, with the test PKI's
// server certificate read from files, and returns the address and the
// files (the CA's for clients). The server is shut down when the test
// ends.
func startTLS(t *testing.T, h http.Handler) (string, tlstest.Files) {
	t.Helper()
	f, err := tlstest.Get().Files(backendtest.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := &httpd.Server{}
	addr, done := listen(t, srv, h, func(srv *httpd.Server, ln net.Listener) error {
		return srv.ServeTLS(ln, f.ServerCert, f.ServerKey)
	})
	stopAtEnd(t, srv, done)
	return addr, f
}

// TestNetHTTPClientTLS: net/http's client, offering h2 and http/1.1 by
// ALPN, is given h2, and keeps its connection for the next request.
func TestNetHTTPClientTLS(t *testing.T) { backendtest.Run(t, testNetHTTPClientTLS) }

func testNetHTTPClientTLS(t *testing.T) {
	addr, _ := startTLS(t, clientsHandler())
	tr := &http.Transport{TLSClientConfig: tlstest.Get().ClientConfig(), ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i, target := range []string{"/hello", "/big", "/hello"} {
		req, err := http.NewRequest("GET", "https://"+addr+target, nil)
		if err != nil {
			t.Fatal(err)
		}
		var reused bool
		req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
			GotConn: func(ci httptrace.GotConnInfo) { reused = ci.Reused },
		}))
		resp, err := cl.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := helloText
		if target == "/big" {
			want = string(bigBody)
		}
		if err != nil || resp.StatusCode != 200 || string(got) != want {
			t.Fatalf("GET %s = %d %.80q, %v; want 200 %.80q", target, resp.StatusCode, got, err, want)
		}
		if resp.Proto != "HTTP/2.0" || resp.TLS == nil || resp.TLS.NegotiatedProtocol != "h2" {
			t.Errorf("GET %s: %s, TLS %+v; want HTTP/2.0 and ALPN h2", target, resp.Proto, resp.TLS)
		}
		if reused != (i > 0) {
			t.Errorf("GET %s (request %d): connection reused %v, want %v", target, i, reused, i > 0)
		}
	}
}
