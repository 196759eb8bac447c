package main

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestParseHead(t *testing.T) {
	for _, tc := range []struct {
		in        string
		n         int // 0: incomplete or refused
		status    int // 0: accepted or incomplete
		keepAlive bool
		body      bool
	}{
		{"GET / HTTP/1.1\r\nHost: x\r\n\r\nnext", 27, 0, true, false},
		{"GET / HTTP/1.1\r\nHost: x\r\n", 0, 0, false, false},
		{"GET / HTTP/1.0\r\n\r\n", 18, 0, false, false},
		{"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 42, 0, true, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, close\r\n\r\n", 58, 0, false, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", 47, 0, true, false},
		{"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab", 47, 0, true, true},
		{"GET / HTTP/1.1\r\n\r\n", 0, 400, false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 0, 400, false, false},
		{"GET  HTTP/1.1\r\nHost: x\r\n\r\n", 0, 400, false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nA : b\r\n\r\n", 0, 400, false, false},
		{strings.Repeat("a", maxHead), 0, 431, false, false},
	} {
		h, n, err := parseHead([]byte(tc.in))
		var se statusError
		status := 0
		if errors.As(err, &se) {
			status = int(se)
		} else if err != nil {
			t.Errorf("parseHead(%.40q) error %v, want a statusError", tc.in, err)
		}
		if n != tc.n || status != tc.status || (n > 0 && (h.keepAlive != tc.keepAlive || h.body != tc.body)) {
			t.Errorf("parseHead(%.40q) = %+v, %d, status %d; want keep-alive %v, body %v, %d, status %d",
				tc.in, h, n, status, tc.keepAlive, tc.body, tc.n, tc.status)
		}
	}
}

// FuzzParseHead checks that parseHead never panics, that a head it
// accepts ends with its empty line, and that no prefix of it is taken for
// a whole head or refused.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, err := parseHead(b)
		if err != nil {
			var se statusError
			if !errors.As(err, &se) || statusText(int(se)) == "Error" {
				t.Fatalf("parseHead(%q) error %v, want a statusError with a known status", b, err)
			}
			return
		}
		if n == 0 {
			return
		}
		if n > len(b) || !bytes.HasSuffix(b[:n], crlf2) {
			t.Fatalf("parseHead(%q) = %d: not a head ending in CRLF CRLF", b, n)
		}
		for k := range min(n, 200) {
			if _, m, err := parseHead(b[:k]); m != 0 || err != nil {
				t.Fatalf("parseHead(%q), a prefix of a %d-byte head, = %d, %v; want 0, nil", b[:k], n, m, err)
			}
		}
	})
}
