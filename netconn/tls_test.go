package netconn_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/netconn"
)

// The tests of this file run TLS over netconn conns against OpenSSL's
// own client and server (openssl s_client, s_server), so that neither end
// of a handshake is Go's alone: crypto/tls's server with s_client, and
// crypto/tls's client with s_server.

// tlsCase is one protocol version and cipher suite, named for OpenSSL
// and for crypto/tls.
type tlsCase struct {
	version uint16
	openssl string // -cipher (TLS 1.2) or -ciphersuites (TLS 1.3) value
	suite   uint16
}

func (tc tlsCase) String() string {
	return tls.VersionName(tc.version) + "/" + tls.CipherSuiteName(tc.suite)
}

// opensslArgs restricts openssl's s_client or s_server to tc.
func (tc tlsCase) opensslArgs() []string {
	if tc.version == tls.VersionTLS13 {
		return []string{"-tls1_3", "-ciphersuites", tc.openssl}
	}
	return []string{"-tls1_2", "-cipher", tc.openssl}
}

var tlsCases = []tlsCase{
	{tls.VersionTLS12, "ECDHE-ECDSA-AES128-GCM-SHA256", tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256},
	{tls.VersionTLS12, "ECDHE-ECDSA-CHACHA20-POLY1305", tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256},
	{tls.VersionTLS13, "TLS_AES_128_GCM_SHA256", tls.TLS_AES_128_GCM_SHA256},
	{tls.VersionTLS13, "TLS_AES_256_GCM_SHA384", tls.TLS_AES_256_GCM_SHA384},
	{tls.VersionTLS13, "TLS_CHACHA20_POLY1305_SHA256", tls.TLS_CHACHA20_POLY1305_SHA256},
}

// opensslLimit bounds each openssl process.
const opensslLimit = 30 * time.Second

// testCert is a self-signed ECDSA certificate for localhost and
// 127.0.0.1, as a tls.Certificate and as PEM files for openssl.
type testCert struct {
	cert     tls.Certificate
	pool     *x509.CertPool
	certFile string
	keyFile  string
}

func newTestCert(t *testing.T) *testCert {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCert{
		cert:     tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf},
		pool:     x509.NewCertPool(),
		certFile: filepath.Join(backendtest.TempDir(t), "cert.pem"),
		keyFile:  filepath.Join(backendtest.TempDir(t), "key.pem"),
	}
	tc.pool.AddCert(leaf)
	writePEM(t, tc.certFile, "CERTIFICATE", der)
	writePEM(t, tc.keyFile, "PRIVATE KEY", keyDER)
	return tc
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// tlsRequestSize and tlsReplySize are what the client and the server of
// TestTLSServerOpenSSLClient send.
const (
	tlsRequestSize = 1 << 20
	tlsReplySize   = 3 << 20
)

// TestTLSServerOpenSSLClient: crypto/tls's server on netconn conns
// serves openssl s_client. The client sends tlsRequestSize bytes of a
// stream (its standard input), the server checks them and answers with
// tlsReplySize bytes of another, which the client prints and the test
// checks; then the server closes.
func TestTLSServerOpenSSLClient(t *testing.T) {
	openssl := needTool(t, "openssl")
	cert := newTestCert(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range tlsCases {
			t.Run(tc.String(), func(t *testing.T) {
				ln, err := netconn.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				defer ln.Close()
				served := make(chan error, 1)
				go func() { served <- serveOpenSSLClient(ln, cert, tc) }()

				ctx, cancel := context.WithTimeout(context.Background(), opensslLimit)
				defer cancel()
				args := append([]string{"s_client", "-connect", ln.Addr().String(),
					"-servername", "localhost", "-quiet", "-nocommands"}, tc.opensslArgs()...)
				cmd := exec.CommandContext(ctx, openssl, args...)
				cmd.WaitDelay = time.Second
				cmd.Stdin = newPattern(1, tlsRequestSize)
				chk := newChecker(2)
				cmd.Stdout = chk
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				runErr := cmd.Run()
				select {
				case err := <-served:
					if err != nil {
						t.Errorf("server: %v", err)
					}
				case <-time.After(hang): // s_client never came: unblock Accept
					ln.Close()
					t.Errorf("server: %v", <-served)
				}
				if runErr != nil {
					t.Errorf("%v: %v\n%s", cmd, runErr, stderr.Bytes())
				}
				if err := chk.check(tlsReplySize); err != nil {
					t.Errorf("s_client's output: %v\nstderr:\n%s", err, stderr.Bytes())
				}
			})
		}
	})
}

// serveOpenSSLClient accepts one connection on ln and runs the server's
// side of TestTLSServerOpenSSLClient on it.
func serveOpenSSLClient(ln net.Listener, cert *testCert, tc tlsCase) error {
	c, err := ln.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(opensslLimit))
	if _, ok := c.(*netconn.Conn); !ok {
		return fmt.Errorf("accepted a %T, want *netconn.Conn", c)
	}
	conf := &tls.Config{Certificates: []tls.Certificate{cert.cert}, MinVersion: tls.VersionTLS12}
	if tc.version == tls.VersionTLS12 {
		conf.CipherSuites = []uint16{tc.suite}
	}
	tc2 := tls.Server(c, conf)
	if err := tc2.Handshake(); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	st := tc2.ConnectionState()
	if st.Version != tc.version || st.CipherSuite != tc.suite {
		return fmt.Errorf("negotiated %s/%s, want %v", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), tc)
	}
	chk := newChecker(1)
	if n, err := io.CopyN(chk, tc2, tlsRequestSize); err != nil {
		return fmt.Errorf("request: read %d bytes: %w", n, err)
	}
	if _, err := io.Copy(tc2, newPattern(2, tlsReplySize)); err != nil {
		return fmt.Errorf("reply: %w", err)
	}
	return tc2.Close() // close_notify: s_client ends
}

// acceptWatcher takes s_server's standard output and reports the port
// of its "ACCEPT host:port" line.
type acceptWatcher struct {
	mu   sync.Mutex
	out  bytes.Buffer
	port chan string
	sent bool
}

var acceptLine = regexp.MustCompile(`(?m)^ACCEPT 127\.0\.0\.1:(\d+)\s*$`)

func (w *acceptWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.out.Write(p)
	if !w.sent {
		if m := acceptLine.FindSubmatch(w.out.Bytes()); m != nil {
			w.port <- string(m[1])
			w.sent = true
		}
	}
	return len(p), nil
}

func (w *acceptWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.out.String()
}

// revLines are the lines TestTLSClientOpenSSLServer sends: printable
// (s_server -rev works on lines), of every length up to 4000 bytes.
func revLines() []string {
	var lines []string
	for i := range 300 {
		b := make([]byte, 1+i*13%4000)
		fillPattern(b, uint64(i), 0)
		for j := range b {
			b[j] = 'A' + b[j]%58 // 'A'..'z', no newline
		}
		lines = append(lines, string(b))
	}
	return lines
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// TestTLSClientOpenSSLServer: crypto/tls's client on a netconn.Dial conn
// talks to openssl s_server -rev, which answers each line reversed; the
// client sends lines while it reads and checks the answers, then asks the
// server to close.
func TestTLSClientOpenSSLServer(t *testing.T) {
	openssl := needTool(t, "openssl")
	cert := newTestCert(t)
	backendtest.Run(t, func(t *testing.T) {
		for _, tc := range tlsCases {
			t.Run(tc.String(), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), opensslLimit)
				defer cancel()
				// Port 0: s_server binds where the kernel chooses and says
				// where, so no port can be taken in between.
				args := append([]string{"s_server", "-accept", "127.0.0.1:0", "-naccept", "1",
					"-cert", cert.certFile, "-key", cert.keyFile, "-rev"}, tc.opensslArgs()...)
				cmd := exec.CommandContext(ctx, openssl, args...)
				cmd.WaitDelay = time.Second
				out := &acceptWatcher{port: make(chan string, 1)}
				var stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = out, &stderr
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				exited := make(chan error, 1)
				go func() { exited <- cmd.Wait() }()
				var port string
				select {
				case port = <-out.port:
				case err := <-exited:
					t.Fatalf("%v exited before listening: %v\n%s%s", cmd, err, out, stderr.Bytes())
				}
				err := talkToRevServer(net.JoinHostPort("127.0.0.1", port), cert, tc)
				if err != nil {
					t.Error(err)
					cmd.Process.Kill()
				}
				if err := <-exited; err != nil {
					t.Errorf("%v: %v\n%s%s", cmd, err, out, stderr.Bytes())
				}
				if t.Failed() {
					t.Logf("s_server's output:\n%s%s", out, stderr.Bytes())
				}
			})
		}
	})
}

// talkToRevServer runs the client's side of TestTLSClientOpenSSLServer.
func talkToRevServer(addr string, cert *testCert, tc tlsCase) error {
	c, err := netconn.DialTimeout("tcp", addr, opensslLimit)
	if err != nil {
		return err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(opensslLimit))
	conf := &tls.Config{RootCAs: cert.pool, ServerName: "localhost", MinVersion: tc.version, MaxVersion: tc.version}
	if tc.version == tls.VersionTLS12 {
		conf.CipherSuites = []uint16{tc.suite}
	}
	tlc := tls.Client(c, conf)
	if err := tlc.Handshake(); err != nil {
		return fmt.Errorf("handshake: %w", err)
	}
	st := tlc.ConnectionState()
	if st.Version != tc.version || st.CipherSuite != tc.suite {
		return fmt.Errorf("negotiated %s/%s, want %v", tls.VersionName(st.Version), tls.CipherSuiteName(st.CipherSuite), tc)
	}
	lines := revLines()
	wrote := make(chan error, 1)
	go func() {
		var err error
		for _, l := range lines {
			if _, err = io.WriteString(tlc, l+"\n"); err != nil {
				break
			}
		}
		wrote <- err
	}()
	r := bufio.NewReaderSize(tlc, 8<<10)
	for i, l := range lines {
		got, err := r.ReadString('\n')
		if err != nil {
			return fmt.Errorf("answer %d: %q, %w", i, got, err)
		}
		if want := reverse(l) + "\n"; got != want {
			return fmt.Errorf("answer %d: %d bytes, want the %d of the line reversed", i, len(got), len(want))
		}
	}
	if err := <-wrote; err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if _, err := io.WriteString(tlc, "CLOSE\n"); err != nil {
		return fmt.Errorf("write CLOSE: %w", err)
	}
	if rest, err := io.ReadAll(r); err != nil || len(rest) > 0 {
		return fmt.Errorf("after CLOSE: read %q, %v; want the end of the stream", rest, err)
	}
	return nil
}
