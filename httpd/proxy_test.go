package httpd_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tooltest"
)

var trustLoopback = &engine.ProxyProtocol{Trusted: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}

// remoteAddr answers each request with its RemoteAddr.
var remoteAddr = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, r.RemoteAddr)
})

// getFrom GETs url and returns the body and the client's own address.
func getFrom(t *testing.T, c *http.Client, url string) (body, local string) {
	t.Helper()
	ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) { local = i.Conn.LocalAddr().String() },
	})
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b), local
}

// TestProxyProtocolHTTP checks Server.ProxyProtocol with hand-made
// headers, on a loop and on net/http's goroutine (ModeMixed), with TLS
// after the header too: the request's RemoteAddr is the header's source.
func TestProxyProtocolHTTP(t *testing.T) { backendtest.Run(t, testProxyHTTP) }

func testProxyHTTP(t *testing.T) {
	for _, mode := range []httpd.Mode{httpd.ModeLoop, httpd.ModeMixed} {
		t.Run(fmt.Sprint(mode), func(t *testing.T) {
			srv := &httpd.Server{ProxyProtocol: trustLoopback, Mode: mode}
			addr := start(t, srv, remoteAddr)
			for _, head := range []string{
				"PROXY TCP4 192.0.2.7 198.51.100.1 4242 80\r\n",
				"\r\n\r\n\x00\r\nQUIT\n\x21\x11\x00\x0c\xc0\x00\x02\x08\xc6\x33\x64\x01\x04\xd2\x00\x50",
			} {
				nc, br := rawConn(t, addr)
				io.WriteString(nc, head+"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
				resp, err := http.ReadResponse(br, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				if got := string(b); got != "192.0.2.7:4242" && got != "192.0.2.8:1234" {
					t.Errorf("RemoteAddr %q, want the header's source", got)
				}
			}
			nc, br := rawConn(t, addr)
			io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
			if _, err := http.ReadResponse(br, nil); err == nil {
				t.Errorf("a trusted peer without a header was answered, want it closed")
			}
		})
	}
}

// TestHAProxy puts Debian's haproxy in front of a Server, sending PROXY
// headers of version 1 (send-proxy) and 2 (send-proxy-v2, its health
// checks too): the handler sees the client's own address, and haproxy
// finds the server up.
func TestHAProxy(t *testing.T) { backendtest.Run(t, testHAProxy) }

func testHAProxy(t *testing.T) {
	haproxy := tooltest.Need(t, "haproxy", "the load balancer in front of the server")
	var checks atomic.Int64
	h := http.NewServeMux()
	h.Handle("/", remoteAddr)
	h.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.RemoteAddr, "127.") {
			checks.Add(1)
		}
	})
	addr := start(t, &httpd.Server{ProxyProtocol: trustLoopback}, h)
	fronts := map[string]string{"send-proxy": freePort(t), "send-proxy-v2": freePort(t)}
	cfg := "global\n  maxconn 100\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 10s\n  timeout server 10s\n"
	for opt, front := range fronts {
		name := strings.ReplaceAll(opt, "-", "")
		cfg += fmt.Sprintf("frontend f%s\n  bind %s\n  default_backend b%s\n", name, front, name)
		cfg += fmt.Sprintf("backend b%s\n  option httpchk GET /healthz\n  server s1 %s %s check-send-proxy check inter 100ms\n", name, addr, opt)
	}
	path := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, haproxy, "-db", "-f", path)
	out := &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	c := client(t)
	for opt, front := range fronts {
		waitListening(t, front, out)
		for range 3 {
			body, local := getFrom(t, c, "http://"+front+"/")
			if body != local {
				t.Errorf("%s: the handler saw %q, want the client's %q", opt, body, local)
			}
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for checks.Load() < 4 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := checks.Load(); n < 4 {
		t.Errorf("%d health checks answered, want haproxy's to come and parse:\n%s", n, out)
	}
}

// freePort returns a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitListening waits until addr accepts connections.
func waitListening(t *testing.T, addr string, out fmt.Stringer) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if nc, err := net.Dial("tcp", addr); err == nil {
			nc.Close()
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("nothing listens on %s:\n%s", addr, out)
}

// syncBuf is a strings.Builder a process writes to while the test reads.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
