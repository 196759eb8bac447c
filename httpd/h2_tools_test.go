package httpd_test

// External HTTP/2 clients against the server: h2spec's 145 cases (h2c
// and TLS), curl (prior knowledge and ALPN), nghttp (prior knowledge,
// Upgrade: h2c and ALPN) and headless Chromium over TLS.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// h2Handler serves the tools: "/page" is an HTML page that writes the
// protocol its navigation used; anything else echoes the method, the
// protocol and the body's length and digest-free bytes count.
func h2Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/page" {
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, `<html><body><p id="p">none</p><script>
document.getElementById("p").textContent = "proto=" + performance.getEntriesByType("navigation")[0].nextHopProtocol;
</script></body></html>`)
			return
		}
		n, _ := io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s %s %d\n", r.Method, r.Proto, n)
	})
}

// h2OnlyServer serves HTTP/2 alone: in the clear when clear, else over
// TLS (h2spec's preface case wants a connection that is not HTTP/2
// closed, not answered as HTTP/1).
func h2OnlyServer(clear bool) *httpd.Server {
	p := new(http.Protocols)
	p.SetHTTP2(!clear)
	p.SetUnencryptedHTTP2(clear)
	return &httpd.Server{Protocols: p}
}

var h2specSummary = regexp.MustCompile(`(?m)^(\d+) tests, (\d+) passed, (\d+) skipped, (\d+) failed`)

// TestH2Spec runs every h2spec case, on h2c and on TLS.
func TestH2Spec(t *testing.T) {
	h2spec := needTool(t, "h2spec")
	backendtest.Run(t, func(t *testing.T) {
		t.Run("h2c", func(t *testing.T) {
			addr := start(t, h2OnlyServer(true), h2Handler())
			runH2Spec(t, h2spec, addr)
		})
		t.Run("tls", func(t *testing.T) {
			srv := h2OnlyServer(false)
			addr := startTLSWith(t, srv, h2Handler())
			runH2Spec(t, h2spec, addr, "-t", "-k")
		})
	})
}

func runH2Spec(t *testing.T, h2spec, addr string, flags ...string) {
	host, port, _ := net.SplitHostPort(addr)
	args := append([]string{"-h", host, "-p", port, "-o", "5"}, flags...)
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, h2spec, args...)
	cmd.WaitDelay = time.Second
	b, err := cmd.CombinedOutput() // it exits 1 when a case fails: the summary says which
	out := string(b)
	m := h2specSummary.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("%v: %v, and no summary in its output:\n%s", cmd, err, out)
	}
	total, _ := strconv.Atoi(m[1])
	if m[4] != "0" || m[3] != "0" || total < 145 {
		failures := out
		if i := strings.Index(out, "Failures"); i >= 0 {
			failures = out[i:]
		}
		t.Fatalf("h2spec: %s\n%s", m[0], failures)
	}
}

// startTLSWith serves h with srv over TLS with the test PKI's
// certificate, and returns the address.
func startTLSWith(t *testing.T, srv *httpd.Server, h http.Handler) string {
	t.Helper()
	f, err := tlstest.Get().Files(backendtest.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	addr, done := listen(t, srv, h, func(srv *httpd.Server, ln net.Listener) error {
		return srv.ServeTLS(ln, f.ServerCert, f.ServerKey)
	})
	stopAtEnd(t, srv, done)
	return addr
}

var curlH2 = regexp.MustCompile(`(?m)^< HTTP/2 200`)

// TestH2Curl: curl speaks HTTP/2 with prior knowledge, and over TLS by
// ALPN, uploads included.
func TestH2Curl(t *testing.T) {
	curl := needTool(t, "curl")
	backendtest.Run(t, func(t *testing.T) {
		clearAddr := start(t, h2cServer(), h2Handler())
		tlsAddr, f := startTLS(t, h2Handler())
		_, port, _ := net.SplitHostPort(tlsAddr)
		upload := filepath.Join(backendtest.TempDir(t), "upload")
		os.WriteFile(upload, bytes.Repeat([]byte("u"), 300000), 0o600)
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"prior knowledge", []string{"--http2-prior-knowledge", "http://" + clearAddr + "/"}, "GET HTTP/2.0 0\n"},
			{"prior knowledge upload", []string{"--http2-prior-knowledge", "--data-binary", "@" + upload, "http://" + clearAddr + "/"}, "POST HTTP/2.0 300000\n"},
			{"tls", []string{"--http2", "--cacert", f.CA, "--resolve", "localhost:" + port + ":127.0.0.1", "https://localhost:" + port + "/"}, "GET HTTP/2.0 0\n"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, log := runTool(t, curl, append(append([]string{}, curlFlags...), tc.args...)...)
				if out != tc.want || !curlH2.MatchString(log) {
					t.Fatalf("curl printed %q, want %q:\n%s", out, tc.want, log)
				}
			})
		}
	})
}

// TestH2Nghttp: nghttp (nghttp2's client) with prior knowledge, by
// Upgrade: h2c, and over TLS.
func TestH2Nghttp(t *testing.T) {
	nghttp := needTool(t, "nghttp")
	backendtest.Run(t, func(t *testing.T) {
		clearAddr := start(t, h2cServer(), h2Handler())
		tlsAddr, _ := startTLS(t, h2Handler())
		for _, tc := range []struct {
			name string
			args []string
		}{
			{"prior knowledge", []string{"http://" + clearAddr + "/"}},
			{"upgrade", []string{"--upgrade", "http://" + clearAddr + "/"}},
			{"tls", []string{"https://" + tlsAddr + "/"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, _ := runTool(t, nghttp, append([]string{"--timeout=20"}, tc.args...)...)
				if out != "GET HTTP/2.0 0\n" {
					t.Fatalf("nghttp printed %q", out)
				}
			})
		}
	})
}

// TestH2Chromium: headless Chromium loads a page over TLS and reports
// that its navigation went over h2.
func TestH2Chromium(t *testing.T) { backendtest.Run(t, testH2Chromium) }

func testH2Chromium(t *testing.T) {
	chromium := needTool(t, "chromium")
	addr, _ := startTLS(t, h2Handler())
	_, port, _ := net.SplitHostPort(addr)
	profile := filepath.Join(backendtest.TempDir(t), "profile")
	out, _ := runTool(t, chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--user-data-dir="+profile, "--ignore-certificate-errors", "--dump-dom",
		"https://localhost:"+port+"/page")
	if !strings.Contains(out, "proto=h2") {
		t.Fatalf("Chromium's page says:\n%s", out)
	}
}
