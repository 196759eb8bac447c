package websocket_test

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// rawConn is a hand-driven WebSocket peer, for frames no correct library
// would send.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	r  *bufio.Reader
}

// rawDial connects to a ws:// url and does the client handshake by hand,
// with extra header lines; it returns the response too.
func rawDial(t testing.TB, url string, extra ...string) (*rawConn, *http.Response) {
	t.Helper()
	return rawDialWith(t, url, rawOptions{}, extra...)
}

// rawOptions are rawDialWith's: the TLS configuration of a wss:// url.
type rawOptions struct {
	tls *tls.Config
}

// rawDialWith is rawDial with o: a ws:// or wss:// url.
func rawDialWith(t testing.TB, url string, o rawOptions, extra ...string) (*rawConn, *http.Response) {
	t.Helper()
	secure := strings.HasPrefix(url, "wss://")
	hostPath := strings.TrimPrefix(strings.TrimPrefix(url, "ws://"), "wss://")
	host, path, _ := strings.Cut(hostPath, "/")
	nc, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(testTimeout))
	if secure {
		nc = tls.Client(nc, o.tls)
		t.Cleanup(func() { nc.Close() })
	}
	lines := []string{"Host: " + host, "Upgrade: websocket", "Connection: Upgrade",
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13"}
	for _, h := range extra { // an extra line replaces the default of its name
		name, _, _ := strings.Cut(h, ":")
		lines = slices.DeleteFunc(lines, func(l string) bool { return strings.HasPrefix(l, name+":") })
		lines = append(lines, h)
	}
	req := "GET /" + path + " HTTP/1.1\r\n" + strings.Join(lines, "\r\n") + "\r\n"
	if _, err := io.WriteString(nc, req+"\r\n"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(nc)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &rawConn{t: t, nc: nc, r: r}, resp
}

// frame writes one frame, masked with a fixed key when mask is set. b0 is
// the first header byte (FIN, RSV and opcode).
func (rc *rawConn) frame(b0 byte, mask bool, payload []byte) {
	rc.t.Helper()
	if _, err := rc.nc.Write(rawFrame(b0, mask, payload)); err != nil {
		rc.t.Fatalf("write frame: %v", err)
	}
}

func rawFrame(b0 byte, mask bool, payload []byte) []byte {
	hdr := []byte{b0, 0}
	n := len(payload)
	switch {
	case n <= 125:
		hdr[1] = byte(n)
	case n <= 0xffff:
		hdr[1] = 126
		hdr = binary.BigEndian.AppendUint16(hdr, uint16(n))
	default:
		hdr[1] = 127
		hdr = binary.BigEndian.AppendUint64(hdr, uint64(n))
	}
	p := []byte(string(payload))
	if mask {
		hdr[1] |= 0x80
		key := []byte{0x12, 0x34, 0x56, 0x78}
		hdr = append(hdr, key...)
		for i := range p {
			p[i] ^= key[i%4]
		}
	}
	return append(hdr, p...)
}

// rawFrameIn is a frame read by a rawConn.
type rawFrameIn struct {
	b0      byte
	masked  bool
	payload []byte
}

func (f rawFrameIn) op() byte { return f.b0 & 0x0f }

// read reads one frame.
func (rc *rawConn) read() (rawFrameIn, error) {
	var h [2]byte
	if _, err := io.ReadFull(rc.r, h[:]); err != nil {
		return rawFrameIn{}, err
	}
	f := rawFrameIn{b0: h[0], masked: h[1]&0x80 != 0}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var b [2]byte
		io.ReadFull(rc.r, b[:])
		n = uint64(binary.BigEndian.Uint16(b[:]))
	case 127:
		var b [8]byte
		io.ReadFull(rc.r, b[:])
		n = binary.BigEndian.Uint64(b[:])
	}
	var key [4]byte
	if f.masked {
		io.ReadFull(rc.r, key[:])
	}
	f.payload = make([]byte, n)
	if _, err := io.ReadFull(rc.r, f.payload); err != nil {
		return f, err
	}
	if f.masked {
		for i := range f.payload {
			f.payload[i] ^= key[i%4]
		}
	}
	return f, nil
}

// expectClose reads frames until a close frame, checks its code, then
// expects the connection to end.
func (rc *rawConn) expectClose(code int) {
	rc.t.Helper()
	for {
		f, err := rc.read()
		if err != nil {
			rc.t.Fatalf("read: %v, want a close frame with %d", err, code)
		}
		if f.op() != 8 {
			continue
		}
		got := -1
		if len(f.payload) >= 2 {
			got = int(binary.BigEndian.Uint16(f.payload))
		} else if len(f.payload) == 0 {
			got = 1005
		}
		if got != code {
			rc.t.Fatalf("close frame %d %q, want %d", got, f.payload, code)
		}
		break
	}
	if _, err := rc.r.ReadByte(); err != io.EOF {
		rc.t.Fatalf("after the close frame: %v, want EOF", err)
	}
}

func closePayload(code int, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

func (f rawFrameIn) String() string { return fmt.Sprintf("%#x %q", f.b0, f.payload) }
