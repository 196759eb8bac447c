// Package proxyproto reads the PROXY protocol header (HAProxy's
// "proxy-protocol.txt", versions 1 and 2) at the start of a connection's
// bytes, in place and incrementally, as a loop receives them: Parse is
// given what has arrived and says whether a header is whole, how long
// it is, or that it is malformed. It allocates only the addresses it
// returns. For the loops' listeners (engine, httpd); not an API.
package proxyproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// MaxV1 is the longest version 1 header, its CRLF included.
const MaxV1 = 107

// DefaultMaxV2 bounds a version 2 header (16 bytes and its addresses and
// TLVs) unless the caller allows more: HAProxy's own headers, TLVs
// included, are a few hundred bytes.
const DefaultMaxV2 = 4096

// Header is what a PROXY header says. For a LOCAL command (v2) or an
// UNKNOWN family (v1), Local is set and the addresses are nil: the
// connection is the proxy's own (a health check), and its own addresses
// stand.
type Header struct {
	Version     int
	Local       bool
	Source      net.Addr // the client
	Destination net.Addr // the address the client connected to
}

// ErrMalformed is wrapped by every error Parse returns for a header that
// is not one.
var ErrMalformed = errors.New("proxyproto: malformed PROXY header")

var (
	sigV1 = []byte("PROXY ")
	sigV2 = []byte("\r\n\r\n\x00\r\nQUIT\n")
)

// Parse reads the header at the start of b. It returns the header and
// its length once it is whole, n == 0 and no error while b is a prefix
// of one, and an error wrapping ErrMalformed when b cannot begin one or
// the header is longer than maxV2 (DefaultMaxV2 when 0).
func Parse(b []byte, maxV2 int) (h Header, n int, err error) {
	if maxV2 <= 0 {
		maxV2 = DefaultMaxV2
	}
	switch {
	case hasPrefix(b, sigV2):
		return parseV2(b, maxV2)
	case hasPrefix(b, sigV1):
		return parseV1(b)
	}
	return Header{}, 0, malformed("no PROXY signature")
}

// hasPrefix reports whether b and sig agree on their common length.
func hasPrefix(b, sig []byte) bool {
	k := min(len(b), len(sig))
	return bytes.Equal(b[:k], sig[:k])
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// parseV1 reads "PROXY TCP4|TCP6|UNKNOWN src dst sport dport\r\n".
func parseV1(b []byte) (Header, int, error) {
	end := bytes.Index(b[:min(len(b), MaxV1)], []byte("\r\n"))
	if end < 0 {
		if len(b) >= MaxV1 || len(b) > len(sigV1) && bytes.IndexByte(b, '\n') >= 0 {
			return Header{}, 0, malformed("version 1 line without CRLF within %d bytes", MaxV1)
		}
		return Header{}, 0, nil
	}
	n := end + 2
	f := bytes.Split(b[len(sigV1):end], []byte(" "))
	if string(f[0]) == "UNKNOWN" {
		return Header{Version: 1, Local: true}, n, nil
	}
	if len(f) != 5 {
		return Header{}, 0, malformed("version 1 line of %d fields", len(f)+1)
	}
	want4 := string(f[0]) == "TCP4"
	if !want4 && string(f[0]) != "TCP6" {
		return Header{}, 0, malformed("version 1 family %q", f[0])
	}
	src, err := v1Addr(f[1], f[3], want4)
	if err != nil {
		return Header{}, 0, err
	}
	dst, err := v1Addr(f[2], f[4], want4)
	if err != nil {
		return Header{}, 0, err
	}
	return Header{Version: 1, Source: src, Destination: dst}, n, nil
}

// v1Addr parses a version 1 address and port of the family given.
func v1Addr(ip, port []byte, want4 bool) (*net.TCPAddr, error) {
	a := net.ParseIP(string(ip))
	if a == nil || want4 != (bytes.IndexByte(ip, ':') < 0) { // TCP6 may carry a mapped IPv4 address
		return nil, malformed("version 1 address %q", ip)
	}
	if want4 {
		a = a.To4()
	}
	if a == nil {
		return nil, malformed("version 1 address %q", ip)
	}
	p, err := strconv.ParseUint(string(port), 10, 16)
	if err != nil || len(port) > 1 && port[0] == '0' {
		return nil, malformed("version 1 port %q", port)
	}
	return &net.TCPAddr{IP: a, Port: int(p)}, nil
}

// parseV2 reads the binary header: the signature, version and command,
// family and protocol, the length of what follows, then the addresses
// (and TLVs, which are skipped).
func parseV2(b []byte, maxV2 int) (Header, int, error) {
	if len(b) < 16 {
		return Header{}, 0, nil
	}
	if b[12]>>4 != 2 {
		return Header{}, 0, malformed("version 2 signature with version %d", b[12]>>4)
	}
	n := 16 + int(binary.BigEndian.Uint16(b[14:16]))
	if n > maxV2 {
		return Header{}, 0, malformed("version 2 header of %d bytes, over %d", n, maxV2)
	}
	if len(b) < n {
		return Header{}, 0, nil
	}
	switch b[12] & 0xf {
	case 0: // LOCAL
		return Header{Version: 2, Local: true}, n, nil
	case 1: // PROXY
	default:
		return Header{}, 0, malformed("version 2 command %d", b[12]&0xf)
	}
	body := b[16:n]
	switch b[13] {
	case 0x11, 0x12: // TCP or UDP over IPv4
		if len(body) < 12 {
			return Header{}, 0, malformed("version 2 IPv4 addresses in %d bytes", len(body))
		}
		return Header{Version: 2, Source: v2Addr(body[0:4], body[8:10], b[13]), Destination: v2Addr(body[4:8], body[10:12], b[13])}, n, nil
	case 0x21, 0x22: // TCP or UDP over IPv6
		if len(body) < 36 {
			return Header{}, 0, malformed("version 2 IPv6 addresses in %d bytes", len(body))
		}
		return Header{Version: 2, Source: v2Addr(body[0:16], body[32:34], b[13]), Destination: v2Addr(body[16:32], body[34:36], b[13])}, n, nil
	}
	// UNSPEC, or Unix sockets: the addresses are not the client's in a
	// form a net.Conn reports; the connection's own stand.
	return Header{Version: 2, Local: true}, n, nil
}

// v2Addr makes an address of the protocol that fam's low bits name.
func v2Addr(ip, port []byte, fam byte) net.Addr {
	a := net.IP(bytes.Clone(ip))
	p := int(binary.BigEndian.Uint16(port))
	if fam&0xf == 2 {
		return &net.UDPAddr{IP: a, Port: p}
	}
	return &net.TCPAddr{IP: a, Port: p}
}
