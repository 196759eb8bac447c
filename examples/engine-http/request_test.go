package main

import (
	"bytes"
	"errors"
	"net/http"
	"testing"
)

var requestSeeds = []string{
	"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
	"HEAD / HTTP/1.1\r\nHost: x\r\n\r\n",
	"\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
	"GET / HTTP/2.0\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
}

// FuzzParseRequest checks that parseRequest never panics, and that no
// prefix of a head it accepts is reported complete or refused.
func FuzzParseRequest(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		req, n, err := parseRequest(b)
		if err != nil {
			var se statusError
			if !errors.As(err, &se) || http.StatusText(int(se)) == "" {
				t.Fatalf("parseRequest(%q) error = %v, want a statusError with a known status", b, err)
			}
			return
		}
		if n < 0 || n > len(b) || (n > 0 && n < 4) || req.bodyLen < 0 {
			t.Fatalf("parseRequest(%q) = %+v, %d, want 0 or 4 to %d bytes", b, req, n, len(b))
		}
		if n == 0 {
			return
		}
		if !bytes.HasSuffix(b[:n], crlf2) {
			t.Fatalf("parseRequest(%q) n = %d: the head does not end in CRLF CRLF", b, n)
		}
		for k := range min(n, 300) {
			if _, m, err := parseRequest(b[:k]); m != 0 || err != nil {
				t.Fatalf("parseRequest(%q) (a prefix of %q) n, err = %d, %v, want 0, nil", b[:k], b[:n], m, err)
			}
		}
	})
}

// feed runs the server over input arriving in chunks, the way the engine
// calls OnData: unconsumed bytes are presented again with the next
// chunk. It returns every response and whether the connection closed.
func feed(s *server, chunks ...[]byte) (out []byte, closed bool) {
	var pending []byte
	st := &connState{}
	for _, ch := range chunks {
		pending = append(pending, ch...)
		for {
			n, o, more, quit := s.handle(st, pending, out)
			out, pending = o, pending[n:]
			if quit {
				return out, true
			}
			if !more {
				break
			}
		}
	}
	return out, false
}

// FuzzHandle checks that the responses do not depend on how the requests
// are split across reads.
func FuzzHandle(f *testing.F) {
	for _, s := range requestSeeds {
		f.Add([]byte(s), uint16(len(s)/2))
		f.Add([]byte(s), uint16(len(s)-1))
	}
	s := newServer() // one Date for the whole run
	f.Fuzz(func(t *testing.T, b []byte, at uint16) {
		k := int(at) % (len(b) + 1)
		whole, wq := feed(s, b)
		split, sq := feed(s, b[:k], b[k:])
		if !bytes.Equal(whole, split) || wq != sq {
			t.Fatalf("responses to %q = %q (closed %v); split at %d: %q (closed %v)", b, whole, wq, k, split, sq)
		}
	})
}
