package tlsrec_test

import (
	"crypto/tls"
	"sync"
	"testing"

	"github.com/galeio/gale/internal/testkit/tlstest"
	"github.com/galeio/gale/internal/tlsrec"
)

// end is one side of an in-memory TLS connection: a tls.Conn over a
// Transport whose writes go to the peer's Feed during the handshake and
// to out afterwards, where a test takes them to Offer to the peer.
type end struct {
	tc  *tls.Conn
	tr  *tlsrec.Transport
	mu  sync.Mutex
	out []byte // records written since the handshake
	hs  bool   // handshake over: writes go to out
}

func (e *end) send(peer **end) func([]byte) (int, error) {
	return func(b []byte) (int, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.hs {
			e.out = append(e.out, b...)
		} else {
			(*peer).tr.Feed(b)
		}
		return len(b), nil
	}
}

// takeOut returns and clears what e wrote since the last call.
func (e *end) takeOut() []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	b := e.out
	e.out = nil
	return b
}

// pair completes a handshake between a server and a client over
// Transports and switches both to non-blocking reads. Bytes either side
// fed beyond its handshake are returned as the start of its out, so no
// byte is lost.
func pair(t testing.TB, server, client *tls.Config) (s, c *end) {
	t.Helper()
	s, c = &end{}, &end{}
	s.tr = tlsrec.New(s.send(&c), nil, nil)
	c.tr = tlsrec.New(c.send(&s), nil, nil)
	s.tc, c.tc = tls.Server(s.tr, server), tls.Client(c.tr, client)
	errs := make(chan error, 2)
	go func() { errs <- s.tc.Handshake() }()
	go func() { errs <- c.tc.Handshake() }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("handshake: %v", err)
		}
	}
	for _, e := range []*end{s, c} {
		e.mu.Lock()
		e.hs = true
		e.mu.Unlock()
	}
	// What one side wrote after the other's handshake ended (a TLS 1.3
	// server's session ticket) sits unread in the other's Transport.
	sRest, cRest := s.tr.EndHandshake(), c.tr.EndHandshake()
	c.mu.Lock()
	c.out = append(sRest, c.out...)
	c.mu.Unlock()
	s.mu.Lock()
	s.out = append(cRest, s.out...)
	s.mu.Unlock()
	return s, c
}

func configs() (server, client *tls.Config) {
	p := tlstest.Get()
	return p.ServerConfig(), p.ClientConfig()
}

// readAll offers raw (whole records) to e and reads plaintext until the
// Transport would block, returning the plaintext and the first other
// error.
func readAll(e *end, raw []byte) ([]byte, error) {
	e.tr.Offer(raw)
	var plain []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := e.tc.Read(buf)
		plain = append(plain, buf[:n]...)
		if tlsrec.IsWouldBlock(err) {
			return plain, nil
		}
		if err != nil {
			return plain, err
		}
	}
}
