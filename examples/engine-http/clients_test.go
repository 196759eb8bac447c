package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/internal/testkit/leaktest"
)

// The clients the doc comment suggests, curl and wrk, against the server.

// run runs the program at path with args under testTimeout and returns
// its standard output and error; the test fails if it fails.
func run(t *testing.T, path string, args ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.WaitDelay = time.Second
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\nstdout:\n%s\nstderr:\n%s", cmd, err, out.Bytes(), errOut.Bytes())
	}
	return out.String(), errOut.String()
}

var curlReuse = regexp.MustCompile(`(?m)^\* Re-using existing connection`)

// TestCurl: curl with HTTP/1.1 keeps the connection across URLs, HEAD
// included; with HTTP/1.0 it gets its answer and the close; a POST with
// a Content-Length body is answered and the body skipped; a chunked
// upload, which this server does not read, is refused with 501.
func TestCurl(t *testing.T) {
	curl := needTool(t, "curl")
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	url := "http://" + addr.String() + "/"
	flags := []string{"--silent", "--show-error", "--verbose", "--max-time", "10"}
	curlRun := func(args ...string) (string, string) {
		t.Helper()
		return run(t, curl, append(append([]string{}, flags...), args...)...)
	}

	out, log := curlRun("--http1.1", url, url+"again")
	if out != hello+hello || !curlReuse.MatchString(log) {
		t.Errorf("curl --http1.1, two URLs: printed %q, want %q, over one connection:\n%s", out, hello+hello, log)
	}
	out, log = curlRun("--http1.0", url)
	if out != hello || !strings.Contains(log, "< Connection: close") {
		t.Errorf("curl --http1.0: printed %q, want %q and Connection: close:\n%s", out, hello, log)
	}
	out, _ = curlRun("--head", url)
	if !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || !strings.Contains(out, "Content-Length: 13\r\n") {
		t.Errorf("curl --head printed %q, want 200 OK with Content-Length: 13", out)
	}

	path := filepath.Join(t.TempDir(), "upload")
	if err := os.WriteFile(path, bytes.Repeat([]byte("u"), 200_000), 0o600); err != nil {
		t.Fatal(err)
	}
	out, log = curlRun("--data-binary", "@"+path, "--header", "Expect:", "--write-out", " %{http_code}", url, url)
	if out != hello+" 200"+hello+" 200" || !curlReuse.MatchString(log) {
		t.Errorf("curl POST of 200,000 bytes, twice: printed %q, want %q, over one connection:\n%s", out, hello+" 200"+hello+" 200", log)
	}
	// Small, so that curl has sent it all before the refusal's close.
	out, _ = curlRun("--header", "Transfer-Encoding: chunked", "--data-binary", "chunks", "--write-out", "%{http_code}", url)
	if want := "Not Implemented\n501"; out != want {
		t.Errorf("curl, a chunked upload: printed %q, want %q", out, want)
	}
}

var (
	wrkRequests = regexp.MustCompile(`(?m)^\s*(\d+) requests in`)
	wrkTrouble  = regexp.MustCompile(`(?m)^\s*(Socket errors|Non-2xx or 3xx responses):.*$`)
)

// TestWrk loads the server with wrk for a second over ten connections:
// it must make requests, with no socket error and no response but 2xx.
func TestWrk(t *testing.T) {
	wrk := needTool(t, "wrk")
	leaktest.Check(t)
	_, addr := startServer(t, engine.Options{Loops: 2})
	out, _ := run(t, wrk, "-t1", "-c10", "-d1s", "http://"+addr.String()+"/")
	if m := wrkRequests.FindStringSubmatch(out); m == nil || m[1] == "0" {
		t.Errorf("wrk made no requests:\n%s", out)
	}
	if bad := wrkTrouble.FindAllString(out, -1); bad != nil {
		t.Errorf("wrk reported %q:\n%s", bad, out)
	}
}
