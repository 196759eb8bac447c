package httpd_test

// Stalled TLS handshakes against ServeTLS (issue 31): more connections
// that start a handshake and go silent than the engine's handshake
// workers must not delay a well-behaved client's request.

import (
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/galeio/gale/engine"
	"github.com/galeio/gale/httpd"
	"github.com/galeio/gale/internal/testkit/backendtest"
	"github.com/galeio/gale/internal/testkit/tlstest"
)

const (
	// stallEach is the stalled handshakes of each kind: many more than
	// the engine's default HandshakeWorkers (16 on up to 4 processors).
	stallEach = 100
	// stallBound bounds a well-behaved request beside them, handshake
	// included, under -race on a machine other tests load; before the fix
	// it waited for the whole HandshakeTimeout.
	stallBound = 2 * time.Second
)

// stallHello returns the first record a crypto/tls client sends: a
// ClientHello, whole.
func stallHello(t testing.TB) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go tls.Client(a, tlstest.Get().ClientConfig()).Handshake()
	b.SetReadDeadline(time.Now().Add(10 * time.Second))
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(b, hdr); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(hdr[3])<<8|int(hdr[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(hdr, body...)
}

// stallConns opens n connections to addr and writes first on each;
// they are closed at cleanup.
func stallConns(t testing.TB, addr string, n int, first []byte) []net.Conn {
	t.Helper()
	conns := make([]net.Conn, 0, n)
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		conns = append(conns, c)
		if _, err := c.Write(first); err != nil {
			t.Fatalf("write on %d: %v", i, err)
		}
	}
	return conns
}

// TestTLSStalledHandshakes serves ServeTLS with the engine's default
// handshake workers and a HandshakeTimeout of 30 s, opens stallEach
// connections whose ClientHello never comes whole (a 9-byte record
// announcing 256 bytes) and stallEach that send a whole ClientHello and
// then nothing, then makes requests with net/http's client on new
// connections: each must be answered within stallBound.
func TestTLSStalledHandshakes(t *testing.T) { backendtest.Run(t, testTLSStalledHandshakes) }

func testTLSStalledHandshakes(t *testing.T) {
	f, err := tlstest.Get().Files(backendtest.TempDir(t))
	if err != nil {
		t.Fatal(err)
	}
	srv := &httpd.Server{
		Engine:   engine.Options{HandshakeTimeout: 30 * time.Second},
		ErrorLog: log.New(io.Discard, "", 0), // each stalled handshake's end
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	addr, done := listen(t, srv, h, func(srv *httpd.Server, ln net.Listener) error {
		return srv.ServeTLS(ln, f.ServerCert, f.ServerKey)
	})
	stopAtEnd(t, srv, done)

	stallConns(t, addr, stallEach, []byte{22, 3, 1, 0, 4, 1, 0, 1, 0})
	hellos := stallConns(t, addr, stallEach, stallHello(t))
	// Wait for the server's answers to the whole ClientHellos, so that
	// the requests below do not queue behind their computation.
	wait := 10 * time.Second
	deadline := time.Now().Add(wait)
	answered := 0
	for _, c := range hellos {
		c.SetReadDeadline(deadline)
		if k, _ := c.Read(make([]byte, 1)); k == 1 {
			answered++
		}
	}

	for i := range 3 {
		tr := &http.Transport{TLSClientConfig: tlstest.Get().ClientConfig(), DisableKeepAlives: true}
		cl := &http.Client{Transport: tr, Timeout: stallBound}
		start := time.Now()
		resp, err := cl.Get("https://" + addr + "/")
		took := time.Since(start)
		if err != nil {
			t.Fatalf("GET %d beside %d stalled handshakes of each kind: %v after %v, want an answer within %v",
				i, stallEach, err, took.Round(time.Millisecond), stallBound)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		tr.CloseIdleConnections()
		if err != nil || resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("GET %d = %d %q, %v; want 200 \"ok\"", i, resp.StatusCode, body, err)
		}
		t.Logf("GET %d beside %d stalled handshakes of each kind: %v", i, stallEach, took.Round(time.Microsecond))
	}
	if answered != stallEach {
		t.Errorf("%d of %d whole ClientHellos answered within %v, want all", answered, stallEach, wait)
	}
}
