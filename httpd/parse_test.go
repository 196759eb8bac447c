package httpd

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// simpleHeads are heads of the common shape, which parseSimple takes.
var simpleHeads = []string{
	"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
	"GET /a/b.c?x=1&y=%20z#f HTTP/1.1\r\nHost: example.com:8080\r\nUser-Agent: wrk\r\nAccept: */*\r\n\r\n",
	"POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 0012\r\nContent-Type: text/plain\r\n\r\n",
	"GET /q? HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET /q?a? HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET //double/;p=1/@x:y HTTP/1.1\r\nHost: h\r\n\r\n",
	"GET / HTTP/1.0\r\n\r\n",
	"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade, close\r\n\r\n",
	"GET / HTTP/1.1\r\nhost: h\r\nx-custom-thing: a\r\nX-CUSTOM-THING:  b \t\r\nsec-ch-ua: \"x\"\r\n\r\n",
	"GET / HTTP/1.1\r\nHost:\r\nEmpty:\r\n\r\n",
	"M-SEARCH * HTTP/1.1\r\nHost: h\r\n\r\n",
	"PROPFIND /dav HTTP/1.1\r\nHost: h\r\nDepth: 1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n",
}

// otherHeads are heads parseSimple leaves to net/http's parser.
var otherHeads = []string{
	"GET http://h/ HTTP/1.1\r\nHost: h\r\n\r\n",       // absolute form
	"GET /%41 HTTP/1.1\r\nHost: h\r\n\r\n",            // an escape
	"GET /a!b HTTP/1.1\r\nHost: h\r\n\r\n",            // RawPath would be set
	"GET / HTTP/1.1\nHost: h\n\n",                     // bare LFs
	"GET / HTTP/1.1\r\nHost: h\r\nA: b\r\n c\r\n\r\n", // obs-fold
	"GET / HTTP/1.1\r\n\r\n",                          // no Host: 400
	"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",    // two Hosts: 400
	"GET / HTTP/1.1\r\nHost: a b\r\n\r\n",             // a bad Host: 400
	"GET / HTTP/2.0\r\nHost: h\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
	"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nPragma: no-cache\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nTrailer: X\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nBad Name: x\r\n\r\n",
	"GET / HTTP/1.1\r\nHost: h\r\nX: caf\xc3\xa9\r\n\r\n",
	"CONNECT h:443 HTTP/1.1\r\nHost: h:443\r\n\r\n",
	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
	"GET  / HTTP/1.1\r\nHost: h\r\n\r\n",
}

// simple is parseSimple for a connection of its own, without the
// context.
func simple(head []byte, maxValues int) *http.Request {
	r, _ := parseSimple(head, maxValues, &conn{ctx: context.Background()})
	return r
}

func TestParseSimple(t *testing.T) {
	for _, head := range simpleHeads {
		if head == simpleHeads[11] {
			continue // "*" is no origin-form target: left to net/http
		}
		got := simple([]byte(head), 100)
		if got == nil {
			t.Errorf("%q: left to net/http's parser, want parsed", head)
			continue
		}
		sameAsStd(t, []byte(head), got)
	}
	if simple([]byte(simpleHeads[11]), 100) != nil {
		t.Errorf("%q parsed, want it left to net/http's parser", simpleHeads[11])
	}
	for _, head := range otherHeads {
		if got := simple([]byte(head), 100); got != nil {
			t.Errorf("%q parsed, want it left to net/http's parser", head)
		}
	}
	many := "GET / HTTP/1.1\r\nHost: h\r\n" + strings.Repeat("A: b\r\n", 3) + "\r\n"
	if simple([]byte(many), 3) != nil {
		t.Errorf("4 field lines parsed with a cap of 3, want it left to net/http's parser (431)")
	}
}

// FuzzParseSimple holds parseSimple to net/http's parser and the
// server's checks: where it parses a head, they accept it too, with the
// same request.
func FuzzParseSimple(f *testing.F) {
	for _, h := range simpleHeads {
		f.Add([]byte(h))
	}
	for _, h := range otherHeads {
		f.Add([]byte(h))
	}
	f.Fuzz(func(t *testing.T, head []byte) {
		if headEnd(head, 0) != len(head) {
			return // not one whole head
		}
		if got := simple(head, 8); got != nil {
			sameAsStd(t, head, got)
		}
	})
}

// sameAsStd fails t unless net/http's parser and the server's checks take
// head to the request got.
func sameAsStd(t *testing.T, head []byte, got *http.Request) {
	t.Helper()
	want, err := parseStd(head, 100)
	if err != nil {
		t.Fatalf("%q: parsed, but net/http's parser refuses it: %v", head, err)
	}
	if want.ContentLength > 0 {
		want.Body = got.Body // a body reader of its own
	}
	want = want.WithContext(got.Context())
	if !reflect.DeepEqual(got.URL, want.URL) {
		t.Fatalf("%q: URL %#v, net/http's %#v", head, got.URL, want.URL)
	}
	if !reflect.DeepEqual(got.Header, want.Header) {
		t.Fatalf("%q: Header %q, net/http's %q", head, got.Header, want.Header)
	}
	got.URL, want.URL = nil, nil
	got.Header, want.Header = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: request %#v, net/http's %#v", head, got, want)
	}
}
