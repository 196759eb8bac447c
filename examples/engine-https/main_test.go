package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/leaktest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

const testTimeout = 10 * time.Second

// startServer starts the server on a free loopback port with the test
// PKI's certificate, passed as files as -cert and -key would, and shuts
// it down when the test ends.
func startServer(t *testing.T) (net.Addr, tlstest.Files) {
	t.Helper()
	f, err := tlstest.Get().Files(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	config, err := tlsConfig(f.ServerCert, f.ServerKey)
	if err != nil {
		t.Fatal(err)
	}
	return startWith(t, config), f
}

func startWith(t *testing.T, config *tls.Config) net.Addr {
	t.Helper()
	e, addr, err := serve("127.0.0.1:0", config, engine.Options{Loops: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown = %v, want nil", err)
		}
	})
	return addr
}

// curlVersions are the TLS versions TestCurl asks for, with curl's flags
// and its name for the version it then reports.
var curlVersions = []struct {
	name  string
	flags []string
	want  string
}{
	{"TLS 1.2", []string{"--tlsv1.2", "--tls-max", "1.2"}, "TLSv1.2"},
	{"TLS 1.3", []string{"--tlsv1.3"}, "TLSv1.3"},
}

// Lines of curl's -v output (curl 7.88; older curls word them a little
// differently, hence the patterns).
var (
	curlALPN  = regexp.MustCompile(`ALPN.*server accepted.*http/1\.1`)
	curlReuse = regexp.MustCompile(`Re-using existing connection`)
)

// TestCurl: curl, trusting the test CA, fetches two URLs over one
// connection, with TLS 1.2 and with TLS 1.3, and ALPN http/1.1.
func TestCurl(t *testing.T) {
	curl := needTool(t, "curl")
	leaktest.Check(t)
	addr, f := startServer(t)
	port := addr.(*net.TCPAddr).Port
	url := "https://localhost:" + strconv.Itoa(port)
	for _, v := range curlVersions {
		t.Run(v.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			args := append([]string{"--silent", "--show-error", "--verbose", "--max-time", "5",
				"--http1.1", "--cacert", f.CA, "--resolve", "localhost:" + strconv.Itoa(port) + ":127.0.0.1"}, v.flags...)
			cmd := exec.CommandContext(ctx, curl, append(args, url+"/", url+"/again")...)
			cmd.WaitDelay = time.Second
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %v\n%s", cmd, err, stderr.Bytes())
			}
			if got := stdout.String(); got != body+body {
				t.Errorf("curl printed %q, want the body twice", got)
			}
			log := stderr.String()
			if !strings.Contains(log, "SSL connection using "+v.want) {
				t.Errorf("curl did not use %s:\n%s", v.want, log)
			}
			if !curlALPN.MatchString(log) {
				t.Errorf("curl did not report ALPN http/1.1:\n%s", log)
			}
			if !curlReuse.MatchString(log) {
				t.Errorf("curl did not keep the connection for the second URL:\n%s", log)
			}
		})
	}
}

// TestNetHTTPClient: net/http's client, with TLS 1.2 and with TLS 1.3,
// keeps one connection for GET and HEAD requests until one asks to close.
func TestNetHTTPClient(t *testing.T) {
	leaktest.Check(t)
	addr, _ := startServer(t)
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			cfg := &tls.Config{RootCAs: tlstest.Get().Roots, ServerName: "localhost",
				NextProtos: []string{"http/1.1"}, MaxVersion: v}
			tr := &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: testTimeout}
			url := "https://" + addr.String() + "/"
			for i, r := range []struct {
				method string
				close  bool
				reused bool
			}{
				{"GET", false, false},
				{"GET", false, true},
				{"HEAD", false, true},
				{"GET", true, true},
				{"GET", false, false}, // after the close
			} {
				resp, reused := do(t, client, r.method, url, r.close)
				if resp.TLS == nil || resp.TLS.Version != v || resp.TLS.NegotiatedProtocol != "http/1.1" {
					t.Fatalf("request %d: TLS state %+v, want %s and ALPN http/1.1", i, resp.TLS, tls.VersionName(v))
				}
				if reused != r.reused || resp.Close != r.close {
					t.Errorf("request %d (%s, close %v): connection reused %v, response closes %v; want %v, %v",
						i, r.method, r.close, reused, resp.Close, r.reused, r.close)
				}
			}
		})
	}
}

// do sends a request and checks the response's status and body; it
// returns the response and whether its connection was reused.
func do(t *testing.T, client *http.Client, method, url string, close bool) (resp *http.Response, reused bool) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Close = close
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
	}))
	resp, err = client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := body
	if method == "HEAD" {
		want = ""
	}
	if err != nil || resp.StatusCode != 200 || string(got) != want || resp.ContentLength != int64(len(body)) {
		t.Errorf("%s: %d %q (length %d), %v; want 200 %q (length %d)", method, resp.StatusCode, got, resp.ContentLength, err, want, len(body))
	}
	return resp, reused
}

// TestSelfSigned: without -cert and -key the server makes a certificate
// that a client trusting it verifies for localhost and 127.0.0.1.
func TestSelfSigned(t *testing.T) {
	leaktest.Check(t)
	config, err := tlsConfig("", "")
	if err != nil {
		t.Fatal(err)
	}
	addr := startWith(t, config)
	roots := x509.NewCertPool()
	roots.AddCert(config.Certificates[0].Leaf)
	for _, name := range []string{"localhost", "127.0.0.1"} {
		c := dialTLS(t, addr, &tls.Config{RootCAs: roots, ServerName: name})
		c.write("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
		c.response(200, body, true)
		c.expectEOF()
	}
	if _, err := tlsConfig("cert.pem", ""); err == nil {
		t.Errorf("tlsConfig with -cert and no -key: no error")
	}
	if _, err := tlsConfig("/nonexistent/cert.pem", "/nonexistent/key.pem"); err == nil {
		t.Errorf("tlsConfig with missing files: no error")
	}
}

// client is a TLS connection to the server, read as HTTP responses.
type client struct {
	t    *testing.T
	conn *tls.Conn
	r    *bufio.Reader
}

func dialTLS(t *testing.T, addr net.Addr, cfg *tls.Config) *client {
	t.Helper()
	d := &net.Dialer{Timeout: testTimeout}
	c, err := tls.DialWithDialer(d, "tcp", addr.String(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(testTimeout))
	return &client{t: t, conn: c, r: bufio.NewReader(c)}
}

func (c *client) write(s string) {
	c.t.Helper()
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatal(err)
	}
}

// response reads a response to a GET and checks its status, its body and
// whether it announces the connection's close.
func (c *client) response(status int, wantBody string, closes bool) {
	c.t.Helper()
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("reading a response: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("reading a body: %v", err)
	}
	if resp.StatusCode != status || string(got) != wantBody || resp.Close != closes {
		c.t.Fatalf("response %d %q, close %v; want %d %q, close %v", resp.StatusCode, got, resp.Close, status, wantBody, closes)
	}
}

// expectEOF checks that the server closed the connection with a
// close_notify: crypto/tls reports a TCP end without one as
// io.ErrUnexpectedEOF unless it falls between records.
func (c *client) expectEOF() {
	c.t.Helper()
	if b, err := c.r.ReadByte(); err != io.EOF {
		c.t.Fatalf("read after the last response: %q, %v; want io.EOF", b, err)
	}
}

const (
	get      = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	getClose = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
)

// TestPipelined: requests sent at once, one split across writes, get
// their responses in order; the one that asks to close is the last
// answered.
func TestPipelined(t *testing.T) {
	leaktest.Check(t)
	addr, _ := startServer(t)
	c := dialTLS(t, addr, tlstest.Get().ClientConfig())
	c.write(get + "HEAD / HTTP/1.1\r\nHost: x\r\n\r\n" + get[:10])
	c.write(get[10:] + getClose + get)
	c.response(200, body, false)
	resp, err := http.ReadResponse(c.r, &http.Request{Method: "HEAD"})
	if err != nil || resp.StatusCode != 200 || resp.ContentLength != int64(len(body)) {
		t.Fatalf("HEAD: %v, %v; want 200 with the body's length", resp, err)
	}
	c.response(200, body, false)
	c.response(200, body, true)
	c.expectEOF()

	// More requests than a record holds.
	c = dialTLS(t, addr, tlstest.Get().ClientConfig())
	const n = 2000
	go io.WriteString(c.conn, strings.Repeat(get, n-1)+getClose)
	for i := range n {
		c.response(200, body, i == n-1)
	}
	c.expectEOF()
}

const headStart = "GET / HTTP/1.1\r\nHost: x\r\nA: "

// TestRefused: requests the server refuses get their status, then the
// connection closes.
func TestRefused(t *testing.T) {
	leaktest.Check(t)
	addr, _ := startServer(t)
	for _, tc := range []struct {
		req    string
		status int
	}{
		{"GET / HTTP/1.1\r\n\r\n", 400}, // no Host
		{"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400},
		{"GET /\r\nHost: x\r\n\r\n", 400},
		{"GET / HTTP/2.0\r\nHost: x\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\nNo colon\r\n\r\n", 400},
		{"GET / HTTP/1.1\r\nHost: x\r\n folded: y\r\n\r\n", 400},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", 501},
		{"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
		// Exactly maxHead bytes, all read when the server refuses them:
		// bytes left unread in the socket would make its close a reset.
		{headStart + strings.Repeat("a", maxHead-len(headStart)), 431},
		{get + "BAD\r\n\r\n", 400}, // after a good request
	} {
		t.Logf("request %.40q", tc.req)
		c := dialTLS(t, addr, tlstest.Get().ClientConfig())
		c.write(tc.req)
		if strings.HasPrefix(tc.req, get) {
			c.response(200, body, false)
		}
		c.response(tc.status, statusText(tc.status)+"\n", true)
		c.expectEOF()
	}
}
