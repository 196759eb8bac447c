package httpd_test

// External clients against the server: curl (HTTP/1.0 and 1.1, chunked
// and 100-continue uploads, HEAD, TLS), wrk and Python's http.client,
// each under a timeout.

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
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
)

// runTool runs the program at path with args, under toolTimeout, and
// returns what it wrote to its standard output and error; the test fails
// if it fails.
func runTool(t *testing.T, path string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout:\n%.2000s\nstderr:\n%s", cmd, err, out.Bytes(), errOut.Bytes())
	}
	return out.String(), errOut.String()
}

// Lines of curl's --verbose output (curl 7.88; older and newer curls word
// some a little differently, hence the patterns).
var (
	curlReuse     = regexp.MustCompile(`(?m)^\* Re-using existing connection`)
	curlALPN      = regexp.MustCompile(`(?m)^\* ALPN.*server accepted.*http/1\.1`)
	curlALPNH2    = regexp.MustCompile(`(?m)^\* ALPN.*server accepted.*h2`)
	curlOffersH2  = regexp.MustCompile(`(?m)^\* ALPN.*offers h2`)
	curlContinue  = regexp.MustCompile(`(?m)^< HTTP/1\.1 100 Continue`)
	curlHTTP10    = regexp.MustCompile(`(?m)^< HTTP/1\.0 200 OK`)
	curlSentBody  = regexp.MustCompile(`(?m)^\* We are completely uploaded and fine`)
	curlNewConn   = regexp.MustCompile(`(?m)^\* Connected to`)
	curlChunkedTE = regexp.MustCompile(`(?m)^> Transfer-Encoding: chunked`)
)

// curlFlags are every curl run's: quiet but for errors, the exchange on
// standard error, and a bound of curl's own below toolTimeout.
var curlFlags = []string{"--silent", "--show-error", "--verbose", "--max-time", "20"}

// TestCurl runs curl against the server: HTTP/1.0 with and without
// keep-alive, HTTP/1.1 keep-alive, chunked and Expect: 100-continue
// uploads (one the handler reads, one it refuses unread), HEAD, and
// HTTPS with ALPN.
func TestCurl(t *testing.T) {
	curl := needTool(t, "curl")
	backendtest.Run(t, func(t *testing.T) { testCurl(t, curl) })
}

func testCurl(t *testing.T, curl string) {
	addr := start(t, nil, clientsHandler())
	url := "http://" + addr
	dir := backendtest.TempDir(t)
	upload := func(name string, n int) (path string, data []byte) {
		data = bytes.Repeat([]byte("upload-"+name+"|"), n/(len(name)+8)+1)[:n]
		path = filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path, data
	}
	run := func(args ...string) (stdout, stderr string) {
		t.Helper()
		return runTool(t, curl, append(append([]string{}, curlFlags...), args...)...)
	}

	t.Run("HTTP1.0", func(t *testing.T) {
		out, log := run("--http1.0", url+"/hello", url+"/big")
		if want := helloText + string(bigBody); out != want {
			t.Errorf("curl printed %d bytes %.80q, want %d bytes %.80q", len(out), out, len(want), want)
		}
		if n := len(curlHTTP10.FindAllString(log, -1)); n != 2 {
			t.Errorf("%d HTTP/1.0 200 responses, want 2:\n%s", n, log)
		}
		if n := len(curlNewConn.FindAllString(log, -1)); n != 2 {
			t.Errorf("%d connections, want 2 (HTTP/1.0 without keep-alive closes):\n%s", n, log)
		}
	})
	t.Run("HTTP1.0KeepAlive", func(t *testing.T) {
		out, log := run("--http1.0", "--header", "Connection: keep-alive", url+"/hello", url+"/hello")
		if want := helloText + helloText; out != want {
			t.Errorf("curl printed %q, want %q", out, want)
		}
		if !curlReuse.MatchString(log) || !strings.Contains(log, "< Connection: keep-alive") {
			t.Errorf("curl did not keep the connection, or the server did not say keep-alive:\n%s", log)
		}
	})
	t.Run("HTTP1.1", func(t *testing.T) {
		out, log := run("--http1.1", url+"/hello", url+"/big", url+"/hello")
		if want := helloText + string(bigBody) + helloText; out != want {
			t.Errorf("curl printed %d bytes %.80q, want %d bytes %.80q", len(out), out, len(want), want)
		}
		if n := len(curlReuse.FindAllString(log, -1)); n != 2 || len(curlNewConn.FindAllString(log, -1)) != 1 {
			t.Errorf("curl reused its connection %d times, want one connection used 3 times:\n%s", n, log)
		}
	})
	t.Run("ChunkedUpload", func(t *testing.T) {
		// Without Expect, and with Expect: 100-continue (which curl
		// sends by itself past 1 MiB).
		path, data := upload("chunked", 300_000)
		for _, expect := range []bool{false, true} {
			hdr := "Expect:" // none
			if expect {
				hdr = "Expect: 100-continue"
			}
			out, log := run("--http1.1", "--header", "Transfer-Encoding: chunked", "--header", hdr,
				"--expect100-timeout", "60", "--data-binary", "@"+path, url+"/echo")
			if want := summary("POST", "/echo", -1, []string{"chunked"}, data); out != want {
				t.Errorf("Expect %v: curl printed %q, want %q", expect, out, want)
			}
			if !curlChunkedTE.MatchString(log) || curlContinue.MatchString(log) != expect {
				t.Errorf("Expect %v: curl did not send chunked, or a 100 Continue came %v:\n%s", expect, !expect, log)
			}
		}
	})
	t.Run("Expect100", func(t *testing.T) {
		// A long --expect100-timeout: a server that never says 100
		// Continue runs curl into --max-time.
		path, data := upload("expect", 4<<20)
		out, log := run("--http1.1", "--header", "Expect: 100-continue", "--expect100-timeout", "60",
			"--data-binary", "@"+path, url+"/echo")
		if want := summary("POST", "/echo", int64(len(data)), nil, data); out != want {
			t.Errorf("curl printed %q, want %q", out, want)
		}
		if !curlContinue.MatchString(log) || !curlSentBody.MatchString(log) {
			t.Errorf("no 100 Continue, or curl did not send the body:\n%s", log)
		}
	})
	t.Run("Expect100Refused", func(t *testing.T) {
		// curl sends the body to both URLs; neither handler reads it, so
		// neither may get a 100 Continue, and each connection closes.
		path, _ := upload("refused", 4<<20)
		out, log := run("--http1.1", "--header", "Expect: 100-continue", "--expect100-timeout", "60",
			"--write-out", "%{http_code}", "--data-binary", "@"+path, url+"/reject", url+"/hello")
		if want := "too large\n413" + helloText + "200"; out != want {
			t.Errorf("curl printed %q, want %q", out, want)
		}
		if curlContinue.MatchString(log) || curlSentBody.MatchString(log) {
			t.Errorf("a 100 Continue, or the body sent, for a handler that did not read it:\n%s", log)
		}
		if n := len(curlNewConn.FindAllString(log, -1)); n != 2 {
			t.Errorf("%d connections, want 2 (each closed after its refusal):\n%s", n, log)
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		out, _ := run("--head", url+"/hello")
		for _, want := range []string{"HTTP/1.1 200 OK\r\n", "Content-Length: 13\r\n", "Content-Type: text/plain\r\n", "Date: "} {
			if !strings.Contains(out, want) {
				t.Errorf("curl --head printed\n%s\nwant it to hold %q", out, want)
			}
		}
		// A HEAD whose handler writes more than a response buffers (a
		// GET of it is chunked): no body, and curl must not wait for
		// one before its next request.
		out, _ = run("--head", url+"/big", url+"/hello")
		if n := strings.Count(out, "HTTP/1.1 200 OK\r\n"); n != 2 || strings.Contains(out, "0123") {
			t.Errorf("curl --head /big /hello printed\n%s\nwant two heads and no body", out)
		}
	})
}

// TestCurlTLS: curl, trusting the test CA, fetches over HTTPS with ALPN:
// asked for --http1.1 (the server picks http/1.1), and offering h2 too
// (the server picks h2); both keep the connection for the next URL.
func TestCurlTLS(t *testing.T) {
	curl := needTool(t, "curl")
	backendtest.Run(t, func(t *testing.T) { testCurlTLS(t, curl) })
}

func testCurlTLS(t *testing.T, curl string) {
	addr, f := startTLS(t, clientsHandler())
	_, port, _ := net.SplitHostPort(addr)
	url := "https://localhost:" + port
	for _, tc := range []struct {
		name    string
		flags   []string
		offerH2 bool
	}{
		{"http1.1", []string{"--http1.1"}, false},
		{"offering h2", []string{"--http2"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string{}, curlFlags...), "--cacert", f.CA, "--resolve", "localhost:"+port+":127.0.0.1")
			args = append(append(args, tc.flags...), url+"/hello", url+"/big")
			out, log := runTool(t, curl, args...)
			if want := helloText + string(bigBody); out != want {
				t.Errorf("curl printed %d bytes %.80q, want %d bytes %.80q", len(out), out, len(want), want)
			}
			accepted := curlALPN
			if tc.offerH2 {
				accepted = curlALPNH2
			}
			if !accepted.MatchString(log) || curlOffersH2.MatchString(log) != tc.offerH2 {
				t.Errorf("curl did not offer what %v ask, or was not given what it offered first:\n%s", tc.flags, log)
			}
			if !curlReuse.MatchString(log) {
				t.Errorf("curl did not keep the connection for the second URL:\n%s", log)
			}
		})
	}
}

// wrkRequests and wrkTrouble read wrk's report: the requests made, and
// the lines it prints only when some failed.
var (
	wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in`)
	wrkTrouble  = regexp.MustCompile(`(?m)^\s*(Socket errors|Non-2xx or 3xx responses):.*$`)
)

// wrkPipeline is a wrk script that writes 16 requests at a time (wrk's
// own scripts/pipeline.lua).
const wrkPipeline = `
init = function(args)
	local r = {}
	for i = 1, 16 do
		r[i] = wrk.format(nil, "/hello")
	end
	req = table.concat(r)
end
request = function()
	return req
end
`

// TestWrk loads the server with wrk for a second over ten connections:
// in each mode (ModeMixed with half of them on net/http's goroutines),
// with 16 requests pipelined per write, and over TLS. wrk must make
// requests, with no socket error and no response but 2xx. (Over TLS
// the server logs a handshake that ended in EOF: wrk's first connection
// only tries the address and closes.)
func TestWrk(t *testing.T) {
	wrk := needTool(t, "wrk")
	script := filepath.Join(backendtest.TempDir(t), "pipeline.lua")
	if err := os.WriteFile(script, []byte(wrkPipeline), 0o600); err != nil {
		t.Fatal(err)
	}
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range []struct {
			name  string
			start func(t *testing.T) string // the URL
			args  []string
		}{
			{"loop", func(t *testing.T) string { return "http://" + start(t, nil, clientsHandler()) }, nil},
			{"mixed", func(t *testing.T) string {
				return "http://" + start(t, &httpd.Server{Mode: httpd.ModeMixed, MixedThreshold: 5}, clientsHandler())
			}, nil},
			{"pipelined", func(t *testing.T) string { return "http://" + start(t, nil, clientsHandler()) }, []string{"-s", script}},
			{"tls", func(t *testing.T) string {
				addr, _ := startTLS(t, clientsHandler())
				return "https://" + addr
			}, nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				url := tc.start(t) + "/hello"
				out, _ := runTool(t, wrk, append([]string{"-t1", "-c10", "-d1s"}, append(tc.args, url)...)...)
				m := wrkRequests.FindStringSubmatch(out)
				if m == nil || m[1] == "0" {
					t.Errorf("wrk made no requests:\n%s", out)
				}
				if bad := wrkTrouble.FindAllString(out, -1); bad != nil {
					t.Errorf("wrk reported %q:\n%s", bad, out)
				}
				t.Logf("wrk: %s requests", m[1])
			})
		}
	})
}

// pyResponse is a line of testdata/pyclient.py's output.
type pyResponse struct {
	Name             string  `json:"name"`
	Status           int     `json:"status"`
	Version          int     `json:"version"`
	Body             string  `json:"body"`
	ContentLength    *string `json:"content_length"`
	TransferEncoding *string `json:"transfer_encoding"`
	WillClose        bool    `json:"will_close"`
	Port             int     `json:"port"`
}

// TestPythonClient runs testdata/pyclient.py: Python's http.client, on
// one HTTPConnection, sends keep-alive GETs, a POST with a body, a POST
// whose 100,000-byte body the handler leaves unread (the server drops it
// and keeps the connection), a chunked POST (encode_chunked), a HEAD and
// a GET of a chunked response, all over one connection.
func TestPythonClient(t *testing.T) {
	python := needTool(t, "python3")
	backendtest.Run(t, func(t *testing.T) {
		addr := start(t, nil, clientsHandler())
		host, port, _ := net.SplitHostPort(addr)
		out, _ := runTool(t, python, filepath.Join("testdata", "pyclient.py"), host, port)
		str := func(s string) *string { return &s }
		post := bytes.Repeat([]byte("x"), 100000)
		chunked := []byte("abcdefg" + strings.Repeat("h", 70000))
		want := []pyResponse{
			{Name: "get0", Body: helloText, ContentLength: str("13")},
			{Name: "get1", Body: helloText, ContentLength: str("13")},
			{Name: "get2", Body: helloText, ContentLength: str("13")},
			{Name: "get3", Body: helloText, ContentLength: str("13")},
			{Name: "get4", Body: helloText, ContentLength: str("13")},
			{Name: "post", Body: summary("POST", "/echo", int64(len(post)), nil, post)},
			{Name: "reject", Status: 413, Body: "too large\n"},
			{Name: "chunked", Body: summary("POST", "/echo", -1, []string{"chunked"}, chunked)},
			{Name: "head", Body: "", ContentLength: str("13")},
			{Name: "big", Body: strconv.Itoa(len(bigBody)), TransferEncoding: str("chunked")},
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != len(want) {
			t.Fatalf("pyclient.py printed %d lines, want %d:\n%s", len(lines), len(want), out)
		}
		var port0 int
		for i, line := range lines {
			var got pyResponse
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("line %d %q: %v", i+1, line, err)
			}
			w := want[i]
			if w.Status == 0 {
				w.Status = 200
			}
			if got.Name != w.Name || got.Status != w.Status || got.Version != 11 || got.Body != w.Body || got.WillClose {
				t.Errorf("%s: status %d, version %d, body %.100q, will_close %v; want %s: %d, 11, %.100q, false",
					got.Name, got.Status, got.Version, got.Body, got.WillClose, w.Name, w.Status, w.Body)
			}
			if w.ContentLength != nil && (got.ContentLength == nil || *got.ContentLength != *w.ContentLength) {
				t.Errorf("%s: Content-Length %v, want %s", got.Name, deref(got.ContentLength), *w.ContentLength)
			}
			if w.TransferEncoding != nil && (got.TransferEncoding == nil || *got.TransferEncoding != *w.TransferEncoding) {
				t.Errorf("%s: Transfer-Encoding %v, want %s", got.Name, deref(got.TransferEncoding), *w.TransferEncoding)
			}
			if i == 0 {
				port0 = got.Port
			} else if got.Port != port0 {
				t.Errorf("%s: from local port %d, want %d: the first connection kept", got.Name, got.Port, port0)
			}
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return "none"
	}
	return strconv.Quote(*s)
}
