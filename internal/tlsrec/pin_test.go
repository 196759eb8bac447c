package tlsrec_test

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/galeio/gale/internal/tlsrec"
)

// The behaviour of crypto/tls that gale's loop-driven TLS relies on,
// pinned so that a Go release that changes it fails here, loudly, before
// any connection misbehaves. CI runs this file on the Go version go.mod
// names and on the newest release (.ci/run).
//
// A tls.Conn's Read, after the handshake, must:
//   - return an error of the underlying Read that is a net.Error with
//     Temporary() true as it is, and not remember it (the next Read reads
//     again);
//   - keep the bytes of a record it had only partly read when that error
//     came, and finish the record on the next Read;
//   - handle post-handshake messages (session tickets, KeyUpdate) inside
//     Read and go on reading;
//   - return io.EOF after a close_notify.
//
// Its handshake must refuse a first message longer than
// tlsrec.MaxFirstMessage once it has read the message's header, and read
// on for one no longer.

func TestPinTemporaryReadErrorIsNotSticky(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		t.Run(tls.VersionName(v), func(t *testing.T) {
			sc, cc := configs()
			sc.MinVersion, sc.MaxVersion = v, v
			s, c := pair(t, sc, cc)
			buf := make([]byte, 100)
			for i := range 3 {
				n, err := s.tc.Read(buf)
				var ne net.Error
				//lint:ignore SA1019 Temporary is deprecated, but crypto/tls still asks it: that is what this pins.
				if n != 0 || !errors.As(err, &ne) || !ne.Temporary() || !tlsrec.IsWouldBlock(err) {
					t.Fatalf("%s: Read on an empty Transport (try %d) = %d, %v; want 0 and tlsrec.ErrWouldBlock as it is",
						runtime.Version(), i, n, err)
				}
			}
			msg := []byte("after three temporary errors")
			if _, err := c.tc.Write(msg); err != nil {
				t.Fatal(err)
			}
			got, err := readAll(s, c.takeOut())
			if err != nil || !bytes.Equal(got, msg) {
				t.Fatalf("%s: crypto/tls made a temporary read error sticky: read %q, %v; want %q",
					runtime.Version(), got, err, msg)
			}
		})
	}
}

func TestPinPartialRecordSurvivesTemporaryError(t *testing.T) {
	sc, cc := configs()
	s, c := pair(t, sc, cc)
	msg := bytes.Repeat([]byte("partial "), 100)
	if _, err := c.tc.Write(msg); err != nil {
		t.Fatal(err)
	}
	raw := c.takeOut()
	var got []byte
	buf := make([]byte, 4096)
	for i := 0; i < len(raw); i += 7 { // seven bytes at a time
		s.tr.Offer(raw[i:min(i+7, len(raw))])
		for {
			n, err := s.tc.Read(buf)
			got = append(got, buf[:n]...)
			if tlsrec.IsWouldBlock(err) {
				break
			}
			if err != nil {
				t.Fatalf("%s: Read after %d of %d bytes: %v", runtime.Version(), i, len(raw), err)
			}
		}
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("%s: a record read in pieces, with temporary errors between, decrypted to %d bytes, want %d",
			runtime.Version(), len(got), len(msg))
	}
}

// TestPinPostHandshakeMessageInRead pins that a post-handshake message (a
// TLS 1.3 session ticket) is handled inside Read, which then returns the
// temporary error with nothing read, and that records keep flowing. A
// KeyUpdate is the other such message: crypto/tls never sends one, so
// the engine's openssl interop test has s_client send it.
func TestPinPostHandshakeMessageInRead(t *testing.T) {
	sc, cc := configs()
	cc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	s, c := pair(t, sc, cc)
	// The server's NewSessionTicket is a post-handshake message the
	// client handles inside Read, with nothing else to return.
	if got, err := readAll(c, c.takeOut()); err != nil || len(got) != 0 {
		t.Fatalf("%s: client Read of the session ticket: %q, %v", runtime.Version(), got, err)
	}
	for i := range 50 {
		msg := bytes.Repeat([]byte{byte(i)}, 1000+i)
		c.tc.Write(msg)
		got, err := readAll(s, c.takeOut())
		if err != nil || !bytes.Equal(got, msg) {
			t.Fatalf("round %d: %v", i, err)
		}
		s.tc.Write(got)
		back, err := readAll(c, s.takeOut())
		if err != nil || !bytes.Equal(back, msg) {
			t.Fatalf("round %d back: %v", i, err)
		}
	}
}

func TestPinCloseNotifyIsEOF(t *testing.T) {
	sc, cc := configs()
	s, c := pair(t, sc, cc)
	readAll(c, c.takeOut()) // the session ticket
	if err := c.tc.CloseWrite(); err != nil {
		t.Fatal(err)
	}
	got, err := readAll(s, c.takeOut())
	if len(got) != 0 || err != io.EOF {
		t.Fatalf("%s: Read after close_notify = %q, %v; want io.EOF", runtime.Version(), got, err)
	}
	// Half-closed: the server may still write, and the client read it.
	s.tc.Write([]byte("last words"))
	if got, err := readAll(c, s.takeOut()); err != nil || string(got) != "last words" {
		t.Fatalf("write after the peer's close_notify: %q, %v", got, err)
	}
}

// TestPinFirstMessageLimit pins tlsrec.MaxFirstMessage, the longest first
// handshake message crypto/tls reads: a server refuses a ClientHello
// announcing one byte more as soon as it has read the header, and reads
// on, waiting for the rest, for one announcing exactly that. The engine
// holds a connection on its loop, with no goroutine, until its first
// message is whole, unless it announces more than that.
func TestPinFirstMessageLimit(t *testing.T) {
	for _, tc := range []struct {
		n       int
		refused bool
	}{
		{tlsrec.MaxFirstMessage, false},
		{tlsrec.MaxFirstMessage + 1, true},
	} {
		tr := tlsrec.New(func(b []byte) (int, error) { return len(b), nil }, nil, nil)
		waits := make(chan struct{}, 4)
		tr.SetWaitHooks(func() { waits <- struct{}{} }, func() {})
		n := tc.n
		tr.Feed([]byte{22, 3, 1, 0, 4, 1, byte(n >> 16), byte(n >> 8), byte(n)})
		done := make(chan error, 1)
		go func() { done <- tls.Server(tr, configsServer()).Handshake() }()
		select {
		case err := <-done:
			if !tc.refused {
				t.Errorf("%s: a ClientHello announcing %d bytes refused after its header: %v", runtime.Version(), n, err)
			} else if err == nil || !strings.Contains(err.Error(), "exceeds maximum") {
				t.Errorf("%s: a ClientHello announcing %d bytes: %v, want refused as too long", runtime.Version(), n, err)
			}
		case <-waits:
			if tc.refused {
				t.Errorf("%s: a ClientHello announcing %d bytes is read on, want refused after its header (tlsrec.MaxFirstMessage is %d)",
					runtime.Version(), n, tlsrec.MaxFirstMessage)
			}
			tr.Close()
			<-done
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the handshake neither ended nor waited for input within 10 s", runtime.Version())
		}
	}
}

func configsServer() *tls.Config {
	s, _ := configs()
	return s
}
