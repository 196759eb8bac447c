package proxyproto_test

import (
	"encoding/binary"
	"errors"
	"net"
	"testing"

	"github.com/galeio/gale/internal/proxyproto"
)

// v2 builds a version 2 header: command cmd, family fam, then body.
func v2(cmd, fam byte, body []byte) []byte {
	b := []byte("\r\n\r\n\x00\r\nQUIT\n")
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(body)))
	return append(b, body...)
}

func ipv4Body() []byte {
	body := []byte{192, 0, 2, 1, 198, 51, 100, 7}
	body = binary.BigEndian.AppendUint16(body, 56324)
	return binary.BigEndian.AppendUint16(body, 443)
}

func ipv6Body() []byte {
	body := append(net.ParseIP("2001:db8::1").To16(), net.ParseIP("2001:db8::2").To16()...)
	body = binary.BigEndian.AppendUint16(body, 1234)
	return binary.BigEndian.AppendUint16(body, 80)
}

var valid = []struct {
	name     string
	in       []byte
	src, dst string
	local    bool
}{
	{"v1 tcp4", []byte("PROXY TCP4 192.0.2.1 198.51.100.7 56324 443\r\n"), "192.0.2.1:56324", "198.51.100.7:443", false},
	{"v1 tcp6", []byte("PROXY TCP6 2001:db8::1 2001:db8::2 1234 80\r\n"), "[2001:db8::1]:1234", "[2001:db8::2]:80", false},
	{"v1 tcp6, a mapped IPv4 address", []byte("PROXY TCP6 ::ffff:192.0.2.1 2001:db8::2 1234 80\r\n"), "192.0.2.1:1234", "[2001:db8::2]:80", false},
	{"v1 unknown", []byte("PROXY UNKNOWN\r\n"), "", "", true},
	{"v1 unknown with addresses", []byte("PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n"), "", "", true},
	{"v2 tcp4", v2(1, 0x11, ipv4Body()), "192.0.2.1:56324", "198.51.100.7:443", false},
	{"v2 tcp6", v2(1, 0x21, ipv6Body()), "[2001:db8::1]:1234", "[2001:db8::2]:80", false},
	{"v2 tcp4 with TLVs", v2(1, 0x11, append(ipv4Body(), 0x04, 0, 3, 'a', 'b', 'c')), "192.0.2.1:56324", "198.51.100.7:443", false},
	{"v2 local", v2(0, 0x00, nil), "", "", true},
	{"v2 unspec", v2(1, 0x00, nil), "", "", true},
	{"v2 unix", v2(1, 0x31, make([]byte, 216)), "", "", true},
}

// TestValid: each header is read whole, its length is its own (what
// follows stays), and every prefix of it asks for more.
func TestValid(t *testing.T) {
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			in := append(append([]byte(nil), tc.in...), "GET / HTTP/1.1\r\n"...)
			h, n, err := proxyproto.Parse(in, 0)
			if err != nil || n != len(tc.in) {
				t.Fatalf("Parse: n %d of %d, %v", n, len(tc.in), err)
			}
			if h.Local != tc.local || addr(h.Source) != tc.src || addr(h.Destination) != tc.dst {
				t.Fatalf("got %+v, want %s → %s (local %v)", h, tc.src, tc.dst, tc.local)
			}
			for k := range tc.in {
				if _, n, err := proxyproto.Parse(tc.in[:k], 0); n != 0 || err != nil {
					t.Fatalf("prefix of %d bytes: n %d, %v", k, n, err)
				}
			}
		})
	}
}

func addr(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// TestMalformed: what cannot be a header, or is over its bound, is
// refused as soon as that shows.
func TestMalformed(t *testing.T) {
	long := append([]byte("PROXY TCP4 "), make([]byte, 200)...)
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"no signature", []byte("GET / HTTP/1.1\r\n")},
		{"v1 family", []byte("PROXY TCP5 1.2.3.4 5.6.7.8 1 2\r\n")},
		{"v1 fields", []byte("PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n")},
		{"v1 mixed families", []byte("PROXY TCP4 2001:db8::1 5.6.7.8 1 2\r\n")},
		{"v1 port", []byte("PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n")},
		{"v1 port range", []byte("PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n")},
		{"v1 LF only", []byte("PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n")},
		{"v1 without CRLF", long},
		{"v2 version", append(v2(1, 0x11, ipv4Body())[:12], 0x31, 0x11, 0, 12)},
		{"v2 command", v2(2, 0x11, ipv4Body())},
		{"v2 short IPv4", v2(1, 0x11, ipv4Body()[:11])},
		{"v2 short IPv6", v2(1, 0x21, ipv6Body()[:35])},
		{"v2 too long", v2(1, 0x11, make([]byte, proxyproto.DefaultMaxV2))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, n, err := proxyproto.Parse(tc.in, 0); !errors.Is(err, proxyproto.ErrMalformed) || n != 0 {
				t.Fatalf("n %d, %v; want ErrMalformed", n, err)
			}
		})
	}
}

// TestMaxV2: a larger bound admits a larger header.
func TestMaxV2(t *testing.T) {
	in := v2(1, 0x11, append(ipv4Body(), make([]byte, 5000)...))
	if _, _, err := proxyproto.Parse(in, 0); err == nil {
		t.Fatal("over the default bound, accepted")
	}
	if _, n, err := proxyproto.Parse(in, 8192); err != nil || n != len(in) {
		t.Fatalf("n %d, %v", n, err)
	}
}

// FuzzParse: Parse never panics, never claims more than it was given,
// and a header it accepts is accepted again, whole, with more after it.
func FuzzParse(f *testing.F) {
	for _, tc := range valid {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, n, err := proxyproto.Parse(b, 0)
		if n < 0 || n > len(b) || err != nil && n != 0 {
			t.Fatalf("n %d of %d, %v", n, len(b), err)
		}
		if n > 0 {
			if _, n2, err := proxyproto.Parse(append(b[:n:n], 'x'), 0); n2 != n || err != nil {
				t.Fatalf("again: n %d, %v; first %d", n2, err, n)
			}
		}
	})
}
