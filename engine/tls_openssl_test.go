package engine_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

// The interop tests (tls_interop_test.go, tls_interop_dial_test.go) run
// the engine's TLS against OpenSSL's own client and server, openssl
// s_client and s_server, so that one end of each connection is not Go's
// crypto/tls. This file has what they share: the cipher suites, the
// certificate files, and an openssl process whose output a test can wait
// for.

// osslLimit bounds each openssl process. The tests' own waits (etWait)
// end first; this only stops a process a failed test left behind.
const osslLimit = 30 * time.Second

// osslSuite is a protocol version and cipher suite, named as OpenSSL and
// as crypto/tls name it.
type osslSuite struct {
	version uint16
	name    string // OpenSSL's: -ciphersuites (TLS 1.3) or -cipher (TLS 1.2)
	id      uint16
	rsa     bool // authenticated with the RSA certificate
}

var osslSuites = []osslSuite{
	{tls.VersionTLS13, "TLS_AES_128_GCM_SHA256", tls.TLS_AES_128_GCM_SHA256, false},
	{tls.VersionTLS13, "TLS_AES_256_GCM_SHA384", tls.TLS_AES_256_GCM_SHA384, false},
	{tls.VersionTLS13, "TLS_CHACHA20_POLY1305_SHA256", tls.TLS_CHACHA20_POLY1305_SHA256, false},
	{tls.VersionTLS12, "ECDHE-ECDSA-AES128-GCM-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, false},
	{tls.VersionTLS12, "ECDHE-RSA-AES256-GCM-SHA384", tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, true},
	{tls.VersionTLS12, "ECDHE-ECDSA-CHACHA20-POLY1305", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256, false},
}

func (s osslSuite) String() string { return tls.VersionName(s.version) + " " + s.name }

// args restricts s_client or s_server to s.
func (s osslSuite) args() []string {
	if s.version == tls.VersionTLS13 {
		return []string{"-tls1_3", "-ciphersuites", s.name}
	}
	return []string{"-tls1_2", "-cipher", s.name}
}

// osslVersion is the flag that restricts openssl to version v.
func osslVersion(v uint16) string {
	if v == tls.VersionTLS13 {
		return "-tls1_3"
	}
	return "-tls1_2"
}

// osslFiles writes the test PKI's PEM files into a directory removed at
// cleanup.
func osslFiles(t *testing.T) tlstest.Files {
	t.Helper()
	f, err := tlstest.Get().Files(backendtest.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// textLog collects what is written to it (an openssl process's output, a
// connection's input) and lets a test wait for text to appear.
type textLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	grew chan struct{} // closed and replaced at each Write
}

func newTextLog() *textLog { return &textLog{grew: make(chan struct{})} }

func (l *textLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	close(l.grew)
	l.grew = make(chan struct{})
	return len(p), nil
}

func (l *textLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// await waits until ok holds for the text so far, for at most etWait,
// or until ended is closed (no more text will come). It reports whether
// ok held.
func (l *textLog) await(ok func(string) bool, ended <-chan struct{}) bool {
	timeout := time.NewTimer(etWait)
	defer timeout.Stop()
	for {
		l.mu.Lock()
		held, grew := ok(l.buf.String()), l.grew
		l.mu.Unlock()
		if held {
			return true
		}
		select {
		case <-grew:
		case <-ended:
			return ok(l.String())
		case <-timeout.C:
			return false
		}
	}
}

// osslProc is a running openssl command: its standard input, its two
// outputs and its end.
type osslProc struct {
	cmd         *exec.Cmd
	stdin       io.WriteCloser
	out, errOut *textLog
	exited      chan struct{} // closed once the process ended and its output is in
	err         error         // the process's end, once exited is closed
}

// startOpenSSL runs openssl with args. The cleanup closes its input and
// waits for it to end; it kills it first if the test failed, or if it
// does not end within etWait.
func startOpenSSL(t *testing.T, args ...string) *osslProc {
	t.Helper()
	path := needTool(t, "openssl")
	ctx, cancel := context.WithTimeout(context.Background(), osslLimit)
	p := &osslProc{
		cmd:    exec.CommandContext(ctx, path, args...),
		out:    newTextLog(),
		errOut: newTextLog(),
		exited: make(chan struct{}),
	}
	p.cmd.WaitDelay = time.Second
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.errOut
	stdin, err := p.cmd.StdinPipe()
	if err == nil {
		err = p.cmd.Start()
	}
	if err != nil {
		cancel()
		t.Fatalf("openssl %s: %v", strings.Join(args, " "), err)
	}
	p.stdin = stdin
	go func() {
		p.err = p.cmd.Wait()
		cancel()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stdin.Close()
		if t.Failed() {
			p.cmd.Process.Kill()
		}
		select {
		case <-p.exited:
		case <-time.After(etWait):
			p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// send writes s to the process's standard input. Interactive s_client
// and s_server take their command letters from the start of a read, so
// a caller sends a command only once the process has acted on what it
// sent before.
func (p *osslProc) send(t *testing.T, s string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, s); err != nil {
		t.Fatalf("writing %q to openssl: %v\n%s", s, err, p)
	}
}

// expect waits until the log l (p.out or p.errOut) holds text.
func (p *osslProc) expect(t *testing.T, l *textLog, text string) {
	t.Helper()
	if !l.await(func(s string) bool { return strings.Contains(s, text) }, p.exited) {
		t.Fatalf("openssl did not print %q\n%s", text, p)
	}
}

// expectCount waits until the log l holds re n times.
func (p *osslProc) expectCount(t *testing.T, l *textLog, re *regexp.Regexp, n int) {
	t.Helper()
	if !l.await(func(s string) bool { return len(re.FindAllString(s, -1)) >= n }, p.exited) {
		t.Fatalf("openssl did not print %d times %q\n%s", n, re, p)
	}
}

// wait waits for the process to end, for at most etWait, and returns
// how it ended (nil: exit status 0).
func (p *osslProc) wait(t *testing.T) error {
	t.Helper()
	select {
	case <-p.exited:
		return p.err
	case <-time.After(etWait):
		t.Fatalf("openssl did not end within %v\n%s", etWait, p)
		return nil
	}
}

// String returns the command and what it printed so far, for failure
// messages.
func (p *osslProc) String() string {
	return "$ " + strings.Join(p.cmd.Args, " ") + "\n--- stdout:\n" + p.out.String() + "\n--- stderr:\n" + p.errOut.String()
}
